package schema

import (
	"fmt"
	"maps"
	"slices"
)

// Narrow derives a schema that accepts only values s accepts: s without
// the optional properties drop and with require added to its required
// fields. s must be a closed object constrained by nothing but its
// properties and required fields (the keywords Narrow follows); every
// kept property is s's very schema. It is how a forwarding tool's input
// is derived from its action's contract, so the tool's checked arguments
// are, by construction, a payload the contract accepts.
func Narrow(s S, drop, require []string) (S, error) {
	for _, k := range slices.Sorted(maps.Keys(s)) {
		switch k {
		case "type", "properties", "additionalProperties", "required", "description":
		default:
			return nil, fmt.Errorf("narrow: keyword %s is not followed", k) // e.g. oneOf, minProperties
		}
	}
	if s["type"] != "object" || s["additionalProperties"] != false {
		return nil, fmt.Errorf("narrow: not a closed object")
	}
	props, _ := s["properties"].(P)
	required, _ := s["required"].([]string)
	for _, n := range drop {
		if _, ok := props[n]; !ok {
			return nil, fmt.Errorf("narrow: no property %s to drop", n)
		}
		if slices.Contains(required, n) || slices.Contains(require, n) {
			return nil, fmt.Errorf("narrow: property %s is required", n)
		}
	}
	for _, n := range require {
		if _, ok := props[n]; !ok {
			return nil, fmt.Errorf("narrow: no property %s to require", n)
		}
	}
	out := Without(s, drop...)
	req := slices.Clone(required)
	for _, n := range require {
		if !slices.Contains(req, n) {
			req = append(req, n)
		}
	}
	if len(req) > 0 {
		out["required"] = req
	}
	return out, nil
}

// Without is a deep copy of object schema s without the named properties,
// and without them among its required fields. Dropping a required
// property widens what s accepts: a tool whose handler supplies it (an
// adapting tool) may, a forwarding tool narrows instead (Narrow).
func Without(s S, names ...string) S {
	out := Clone(s)
	if props, ok := out["properties"].(P); ok {
		for _, n := range names {
			delete(props, n)
		}
	}
	if req, ok := out["required"].([]string); ok {
		req = slices.DeleteFunc(req, func(r string) bool { return slices.Contains(names, r) })
		if len(req) == 0 {
			delete(out, "required")
		} else {
			out["required"] = req
		}
	}
	return out
}

// With is a deep copy of object schema s with more's properties added
// (replacing any of the same name).
func With(s S, more P) S {
	out := Clone(s)
	props, ok := out["properties"].(P)
	if !ok {
		props = P{}
		out["properties"] = props
	}
	for n, p := range more {
		props[n] = Clone(p)
	}
	return out
}

// Clone deep-copies a schema.
func Clone(s S) S { return cloneValue(s).(S) }

func cloneValue(v any) any {
	switch x := v.(type) {
	case S:
		out := make(S, len(x))
		for k, e := range x {
			out[k] = cloneValue(e)
		}
		return out
	case P:
		out := make(P, len(x))
		for k, e := range x {
			out[k] = Clone(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = cloneValue(e)
		}
		return out
	case []string:
		return slices.Clone(x)
	}
	return v
}
