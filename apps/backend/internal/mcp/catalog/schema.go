package catalog

import (
	"github.com/kandev/kandev/apps/backend/internal/kanban"
	"github.com/kandev/kandev/apps/backend/internal/schema"
)

// S and P are package schema's, so that the declarations here read
// unqualified; the builders below are schema's too.
type (
	S = schema.S
	P = schema.P
)

// Str is schema.Str.
func Str(desc string) S { return schema.Str(desc) }

// Int is schema.Int.
func Int(desc string) S { return schema.Int(desc) }

// Bool is schema.Bool.
func Bool(desc string) S { return schema.Bool(desc) }

// Enum is schema.Enum.
func Enum(desc string, values ...string) S { return schema.Enum(desc, values...) }

// Arr is schema.Arr.
func Arr(desc string, items S) S { return schema.Arr(desc, items) }

// Obj is schema.Obj.
func Obj(desc string, props P, required ...string) S { return schema.Obj(desc, props, required...) }

// Record is schema.Record.
func Record(desc, keyPattern string, value S) S { return schema.Record(desc, keyPattern, value) }

// OneOf is schema.OneOf.
func OneOf(desc string, branches ...S) S { return schema.OneOf(desc, branches...) }

// Const is schema.Const.
func Const(desc, v string) S { return schema.Const(desc, v) }

// NoParams is schema.NoParams.
func NoParams() S { return schema.NoParams() }

// ID is an entity id property.
func ID(desc string) S { return Str(desc).Pattern(kanban.IDPattern) }

// TaskRef is a task id or "self" (the session's bound task).
func TaskRef(desc string) S { return Str(desc).Pattern(kanban.IDPattern) }

// SelfTaskRef is a TaskRef that defaults to "self".
func SelfTaskRef(desc string) S { return TaskRef(desc).Default("self") }

// PageProps are the pagination properties every list tool takes.
func PageProps(p P) P {
	p["limit"] = Int("Page size, default 50.").Range(1, kanban.MaxLimit)
	p["cursor"] = Str("The previous page's next_cursor; omit for the first page.").Len(1, kanban.MaxCursorLen)
	return p
}
