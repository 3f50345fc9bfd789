package action

import (
	"encoding/json"
	"reflect"
	"strconv"
	"strings"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// checkKeys and its helpers decode a workflow document strictly: a
// document is text inside a payload (workflow.import), not a payload, so
// no contract covers it. They refuse unknown keys with exact
// (case-sensitive) matching at every depth, and type mismatches, naming
// declared fields and paths, never caller values or caller-chosen keys.

func jsonTypeName(t reflect.Type) string {
	switch t.Kind() {
	case reflect.String:
		return "string"
	case reflect.Bool:
		return "boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "integer"
	case reflect.Float32, reflect.Float64:
		return "number"
	case reflect.Slice, reflect.Array:
		return "array"
	case reflect.Map, reflect.Struct:
		return "object"
	}
	return "a different type"
}

var rawMessageType = reflect.TypeOf(json.RawMessage(nil))

// checkKeys walks a decoded JSON tree alongside Go type t.
func checkKeys(node any, t reflect.Type, path string) error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == rawMessageType || t.Kind() == reflect.Interface {
		return nil
	}
	switch n := node.(type) {
	case nil:
		return nil // null leaves the zero value
	case map[string]any:
		return checkObject(n, t, path)
	case []any:
		if t.Kind() != reflect.Slice && t.Kind() != reflect.Array {
			return typeError(path, t)
		}
		for _, child := range n {
			if err := checkKeys(child, t.Elem(), path+"[]"); err != nil {
				return err
			}
		}
	case string:
		if t.Kind() != reflect.String {
			return typeError(path, t)
		}
	case bool:
		if t.Kind() != reflect.Bool {
			return typeError(path, t)
		}
	case json.Number:
		return checkNumber(n, t, path)
	}
	return nil
}

func checkObject(n map[string]any, t reflect.Type, path string) error {
	switch t.Kind() {
	case reflect.Struct:
		fields := structFields(t)
		for k, child := range n {
			f, ok := fields[k]
			if !ok {
				return kanban.Errorf(kanban.CodeValidation, "%s: unknown field; allowed: %s", path, strings.Join(fieldNames(t), ", "))
			}
			if err := checkKeys(child, f.Type, path+"."+k); err != nil {
				return err
			}
		}
	case reflect.Map:
		for _, child := range n {
			if err := checkKeys(child, t.Elem(), path+".*"); err != nil {
				return err
			}
		}
	default:
		return typeError(path, t)
	}
	return nil
}

func checkNumber(n json.Number, t reflect.Type, path string) error {
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		if _, err := strconv.ParseInt(string(n), 10, t.Bits()); err != nil {
			return kanban.Errorf(kanban.CodeValidation, "%s: expected integer", path)
		}
	case reflect.Float32, reflect.Float64:
		if _, err := strconv.ParseFloat(string(n), t.Bits()); err != nil {
			return kanban.Errorf(kanban.CodeValidation, "%s: expected number", path)
		}
	default:
		return typeError(path, t)
	}
	return nil
}

func typeError(path string, t reflect.Type) error {
	return kanban.Errorf(kanban.CodeValidation, "%s: expected %s", path, jsonTypeName(t))
}
