package catalog

import "github.com/kandev/kandev/apps/backend/internal/schema"

// Input schemas are not written here: a tool's input is its action's
// contract (package action), narrowed or adapted (see Tool). The builders
// below are package schema's, so that the output declarations here read
// unqualified.

// S is schema.S.
type S = schema.S

// P is schema.P.
type P = schema.P

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

// NoParams is schema.NoParams.
func NoParams() S { return schema.NoParams() }
