package action

import (
	"bytes"
	"encoding/json"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// DecodeStrict decodes raw into v (a pointer to a struct) rejecting unknown
// keys with exact (case-sensitive) matching at every depth, and type
// mismatches. Errors name declared fields and paths, never caller values or
// caller-chosen keys.
func DecodeStrict(raw json.RawMessage, v any) error {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		raw = []byte("{}")
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var tree any
	if err := dec.Decode(&tree); err != nil || dec.More() {
		return kanban.Errorf(kanban.CodeBadRequest, "payload is not valid JSON")
	}
	// JSON Schema counts 1.0 as an integer: decode integral numbers as such.
	tree = kanban.IntegralNumbers(tree)
	if err := checkKeys(tree, reflect.TypeOf(v).Elem(), "payload"); err != nil {
		return err
	}
	raw, err := json.Marshal(tree)
	if err != nil {
		return kanban.Errorf(kanban.CodeBadRequest, "payload is not valid JSON")
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return kanban.Errorf(kanban.CodeBadRequest, "payload does not match the action's shape")
	}
	return nil
}

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

var fieldCache sync.Map // reflect.Type → map[string]reflect.StructField

func structFields(t reflect.Type) map[string]reflect.StructField {
	if m, ok := fieldCache.Load(t); ok {
		return m.(map[string]reflect.StructField)
	}
	m := map[string]reflect.StructField{}
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if f.Anonymous && tag == "" && f.Type.Kind() == reflect.Struct {
			// An embedded struct's fields are the outer struct's, as in
			// encoding/json (outer fields win on a name clash).
			for n, ef := range structFields(f.Type) {
				if _, taken := m[n]; !taken {
					m[n] = ef
				}
			}
			continue
		}
		if !f.IsExported() {
			continue
		}
		name := strings.Split(tag, ",")[0]
		if name == "-" {
			continue
		}
		if name == "" {
			name = f.Name
		}
		m[name] = f
	}
	fieldCache.Store(t, m)
	return m
}

func fieldNames(t reflect.Type) []string {
	var names []string
	for k := range structFields(t) {
		names = append(names, k)
	}
	sort.Strings(names)
	return names
}
