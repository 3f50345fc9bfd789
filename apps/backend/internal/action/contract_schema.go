package action

import (
	"github.com/kandev/kandev/apps/backend/internal/kanban"
	"github.com/kandev/kandev/apps/backend/internal/schema"
)

// The schema helpers the contracts share: ids, task references and
// pagination, their patterns and bounds kanban's.

// idProp is an entity id property.
func idProp(desc string) schema.S { return schema.Str(desc).Pattern(kanban.IDPattern) }

// optIDProp is an id or "" (none: clear what it names).
func optIDProp(desc string) schema.S { return schema.Str(desc).Pattern(`^[A-Za-z0-9_-]{0,64}$`) }

// taskRef is a task id or "self" (the session's bound task).
func taskRef(desc string) schema.S { return schema.Str(desc).Pattern(kanban.IDPattern) }

// selfTaskRef is a taskRef that defaults to "self".
func selfTaskRef(desc string) schema.S { return taskRef(desc).Default("self") }

// ownTaskRef is the task reference of the actions no tool serves.
func ownTaskRef(what string) schema.S { return taskRef(what + ` ("self": the session's own task).`) }

// idOnly is the payload of the actions that read one entity by id.
func idOnly(what string) schema.S {
	return schema.Obj("", schema.P{"id": idProp(what)}, "id")
}

// pageProps adds the pagination properties every list takes to p.
func pageProps(p schema.P) schema.P {
	p["limit"] = schema.Int("Page size, default 50.").Range(1, kanban.MaxLimit)
	p["cursor"] = schema.Str("The previous page's next_cursor; omit for the first page.").Len(1, kanban.MaxCursorLen)
	return p
}

// strs is vs as strings (an enum's values).
func strs[T ~string](vs []T) []string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = string(v)
	}
	return out
}

// taskStates are the task state enum values, from the domain.
var taskStates = strs(kanban.TaskStates)

// usableInWorkspace describes the workspace filter of the profile lists.
const usableInWorkspace = "Only the profiles usable in this workspace: the global ones and its own (a session always gets its own workspace's)."
