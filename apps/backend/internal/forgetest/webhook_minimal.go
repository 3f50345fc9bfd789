package forgetest

import (
	"errors"
	"strings"
)

// maxSchemaDepth bounds the walk of a schema (the webhook schemas nest
// users in repositories in pull requests, never endlessly when only
// required properties are followed, but a bound costs nothing).
const maxSchemaDepth = 64

// Minimal returns the smallest payload GitHub's schema of a webhook
// allows: its required properties only, each the first of its choices
// (first enum value, first non-null type, first oneOf/anyOf alternative,
// allOf merged), strings shaped by their format. A test lays the fields
// it cares about over it and checks the result with Check.
func (w *Webhooks) Minimal(name string) (map[string]any, error) {
	s, ok := w.schemas["webhook-"+name]
	if !ok {
		return nil, errors.New("no schema for webhook " + name)
	}
	v, err := w.instance(s, 0)
	if err != nil {
		return nil, err
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, errors.New("webhook " + name + " is not an object")
	}
	return m, nil
}

func (w *Webhooks) instance(schema any, depth int) (any, error) {
	if depth > maxSchemaDepth {
		return nil, errors.New("schema nests too deeply")
	}
	s, _ := schema.(map[string]any)
	if ref, ok := s["$ref"].(string); ok {
		target, ok := w.schemas[strings.TrimPrefix(ref, "#/components/schemas/")]
		if !ok {
			return nil, errors.New("unresolved $ref " + ref)
		}
		return w.instance(target, depth+1)
	}
	if c, ok := s["const"]; ok {
		return c, nil
	}
	if e, ok := s["enum"].([]any); ok && len(e) > 0 {
		for _, v := range e {
			if v != nil {
				return v, nil
			}
		}
		return e[0], nil
	}
	if all, ok := s["allOf"].([]any); ok {
		return w.allOf(s, all, depth)
	}
	for _, k := range []string{"oneOf", "anyOf"} {
		if alts, ok := s[k].([]any); ok && len(alts) > 0 {
			for _, alt := range alts {
				if m, ok := alt.(map[string]any); ok && typeOf(m) != "null" {
					return w.instance(alt, depth+1)
				}
			}
			return nil, nil
		}
	}
	return w.typed(s, depth)
}

// allOf is the merge of the instances of all (s's allOf), or the first
// that is not an object.
func (w *Webhooks) allOf(s map[string]any, all []any, depth int) (any, error) {
	out := map[string]any{}
	for _, sub := range all {
		v, err := w.instance(sub, depth+1)
		if err != nil {
			return nil, err
		}
		m, ok := v.(map[string]any)
		if !ok {
			return v, nil
		}
		for k, x := range m {
			out[k] = x
		}
	}
	return out, w.required(s, out, depth)
}

// typed is the minimal instance of s's type.
func (w *Webhooks) typed(s map[string]any, depth int) (any, error) {
	switch typeOf(s) {
	case "object":
		out := map[string]any{}
		return out, w.required(s, out, depth)
	case "array":
		return []any{}, nil
	case "string":
		return stringFor(s), nil
	case "integer", "number":
		if m, ok := s["minimum"].(float64); ok {
			return m, nil
		}
		return 1, nil
	case "boolean":
		return false, nil
	case "null":
		return nil, nil
	}
	return map[string]any{}, nil
}

// required fills out's required properties (those not set yet).
func (w *Webhooks) required(s map[string]any, out map[string]any, depth int) error {
	props, _ := s["properties"].(map[string]any)
	req, _ := s["required"].([]any)
	for _, r := range req {
		k, _ := r.(string)
		if _, done := out[k]; done || k == "" {
			continue
		}
		v, err := w.instance(props[k], depth+1)
		if err != nil {
			return err
		}
		out[k] = v
	}
	return nil
}

// typeOf returns a schema's type, the first non-null one of a list.
func typeOf(s map[string]any) string {
	switch t := s["type"].(type) {
	case string:
		return t
	case []any:
		for _, x := range t {
			if x != "null" {
				if str, ok := x.(string); ok {
					return str
				}
			}
		}
		return "null"
	}
	if _, ok := s["properties"]; ok {
		return "object"
	}
	return ""
}

func stringFor(s map[string]any) string {
	switch s["format"] {
	case "date-time":
		return "2026-01-01T00:00:00Z"
	case "uri", "uri-template":
		return "https://example.com/"
	case "email":
		return "someone@example.com"
	}
	return "x"
}
