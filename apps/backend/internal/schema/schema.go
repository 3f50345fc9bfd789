// Package schema writes JSON Schema (draft 2020-12) as Go values: S and P,
// the builders every action contract and every MCP tool schema is
// declared with, Clone, and Narrow — the one way a tool's input is derived
// from its action's contract. Bounds and enums passed to the builders are
// kanban's (TestBoundsWrittenOnce keeps them there); only this file sets
// bound keywords. It imports only the standard library.
package schema

// S is one JSON Schema node (draft 2020-12). It marshals with sorted keys,
// so schemas serialize deterministically. Builders return fresh maps;
// methods mutate and return the receiver for chaining at declaration time.
type S map[string]any

// P maps property names to their schemas.
type P map[string]S

// Str is a string property.
func Str(desc string) S { return S{"type": "string", "description": desc} }

// Int is an integer property.
func Int(desc string) S { return S{"type": "integer", "description": desc} }

// Bool is a boolean property.
func Bool(desc string) S { return S{"type": "boolean", "description": desc} }

// Enum is a string property limited to values.
func Enum(desc string, values ...string) S {
	return S{"type": "string", "description": desc, "enum": values}
}

// Arr is an array of items.
func Arr(desc string, items S) S { return S{"type": "array", "description": desc, "items": items} }

// Obj is a closed object: only the declared properties are allowed.
func Obj(desc string, props P, required ...string) S {
	o := S{"type": "object", "properties": props, "additionalProperties": false}
	if desc != "" {
		o["description"] = desc
	}
	if len(required) > 0 {
		o["required"] = required
	}
	return o
}

// Record is an intentionally open map: keys match keyPattern, every value
// matches value.
func Record(desc, keyPattern string, value S) S {
	return S{"type": "object", "description": desc,
		"propertyNames":        S{"pattern": keyPattern},
		"additionalProperties": value}
}

// OneOf is a value matching exactly one of branches.
func OneOf(desc string, branches ...S) S {
	bs := make([]any, len(branches))
	for i, b := range branches {
		bs[i] = b
	}
	return S{"description": desc, "oneOf": bs}
}

// Const is a property fixed to one string value (a oneOf discriminator).
func Const(desc, v string) S { return S{"type": "string", "description": desc, "const": v} }

// NoParams is the schema of a parameter-less tool or action.
func NoParams() S { return S{"type": "object", "properties": P{}, "additionalProperties": false} }

// Len bounds a string's length in characters (max 0: no upper bound).
func (s S) Len(minLen, maxLen int) S {
	if minLen > 0 {
		s["minLength"] = minLen
	}
	if maxLen > 0 {
		s["maxLength"] = maxLen
	}
	return s
}

// Range bounds a number.
func (s S) Range(lo, hi int) S {
	s["minimum"] = lo
	s["maximum"] = hi
	return s
}

// Min sets a lower bound.
func (s S) Min(lo int) S { s["minimum"] = lo; return s }

// Above bounds a number to more than lo and at most hi.
func (s S) Above(lo, hi int) S {
	s["exclusiveMinimum"] = lo
	s["maximum"] = hi
	return s
}

// Items bounds an array's length.
func (s S) Items(lo, hi int) S {
	if lo > 0 {
		s["minItems"] = lo
	}
	s["maxItems"] = hi
	return s
}

// Props bounds an object's number of properties (max 0: no upper bound).
func (s S) Props(lo, hi int) S {
	if lo > 0 {
		s["minProperties"] = lo
	}
	if hi > 0 {
		s["maxProperties"] = hi
	}
	return s
}

// Unique requires distinct array items.
func (s S) Unique() S { s["uniqueItems"] = true; return s }

// Pattern constrains a string.
func (s S) Pattern(re string) S { s["pattern"] = re; return s }

// Default documents the default value.
func (s S) Default(v any) S { s["default"] = v; return s }

// Format names a string format (asserted by Kandev's compiler).
func (s S) Format(f string) S { s["format"] = f; return s }
