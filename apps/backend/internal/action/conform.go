package action

import (
	"fmt"
	"reflect"
	"slices"

	"github.com/kandev/kandev/apps/backend/internal/schema"
)

// conform reports where contract schema s does not fit Go type t, the
// payload it decodes into: at every depth, an object's properties are
// exactly the struct's JSON fields and it admits no other (a map's
// values, declared or not, fit the element type), an array's items fit the
// element type, every JSON type is the Go kind's, every required field
// is declared, and each oneOf branch fits t. A json.RawMessage or
// interface field takes any JSON: there the schema alone decides. The
// schema's rules (descriptions, bounds, enums, patterns) are written
// beside it with kanban's values; its shape is the type's, so the two
// cannot drift.
func conform(s schema.S, t reflect.Type, path string) error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == rawMessageType || t.Kind() == reflect.Interface {
		return nil
	}
	branches, isOneOf := s["oneOf"].([]any)
	if _, typed := s["type"]; typed || !isOneOf { // an untyped oneOf leaves the type to its branches
		if want := jsonTypeName(t); !hasType(s, want) && (want != "number" || !hasType(s, "integer")) {
			return fmt.Errorf("%s: schema type %v, Go type %s (%s)", path, s["type"], t, want)
		}
	}
	if isOneOf {
		for i, b := range branches {
			br, ok := b.(schema.S)
			if !ok {
				return fmt.Errorf("%s: oneOf branch %d is not a schema", path, i)
			}
			if err := conform(br, t, path); err != nil {
				return err
			}
		}
		if _, hasProps := s["properties"]; !hasProps {
			return nil // the branches hold the object's properties
		}
	}
	switch t.Kind() {
	case reflect.Struct:
		return conformStruct(s, t, path)
	case reflect.Map:
		return conformMap(s, t, path)
	case reflect.Slice, reflect.Array:
		items, ok := s["items"].(schema.S)
		if !ok {
			return fmt.Errorf("%s: an array's schema must say what its items are", path)
		}
		return conform(items, t.Elem(), path+"[]/")
	}
	return nil
}

func conformStruct(s schema.S, t reflect.Type, path string) error {
	if s["additionalProperties"] != false {
		return fmt.Errorf("%s: a struct's schema must be closed (additionalProperties false)", path)
	}
	props, _ := s["properties"].(schema.P)
	fields := structFields(t)
	for name := range props {
		if _, ok := fields[name]; !ok {
			return fmt.Errorf("%s%s: declared, but %s has no such field", path, name, t)
		}
	}
	for _, name := range fieldNames(t) {
		p, ok := props[name]
		if !ok {
			return fmt.Errorf("%s%s: field of %s without a schema", path, name, t)
		}
		if err := conform(p, fields[name].Type, path+name+"/"); err != nil {
			return err
		}
	}
	required, _ := s["required"].([]string)
	for _, r := range required {
		if _, ok := props[r]; !ok {
			return fmt.Errorf("%s%s: required but not declared", path, r)
		}
	}
	return nil
}

// conformMap: a map is a record (additionalProperties: the values'
// schema) or an object with declared properties, each of the value type.
func conformMap(s schema.S, t reflect.Type, path string) error {
	if elem, ok := s["additionalProperties"].(schema.S); ok {
		return conform(elem, t.Elem(), path+"*/")
	}
	props, ok := s["properties"].(schema.P)
	if !ok {
		return fmt.Errorf("%s: a map's schema must say what its values are (additionalProperties or properties)", path)
	}
	for name, p := range props {
		if err := conform(p, t.Elem(), path+name+"/"); err != nil {
			return err
		}
	}
	return nil
}

// hasType reports whether schema s's type is want (or a list holding it).
func hasType(s schema.S, want string) bool {
	switch ty := s["type"].(type) {
	case string:
		return ty == want
	case []string:
		return slices.Contains(ty, want)
	}
	return false
}
