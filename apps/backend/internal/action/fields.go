package action

import (
	"reflect"
	"sort"
	"strings"
	"sync"
)

// A payload's JSON field names, as encoding/json sees them: the registry
// lists them (Action.Fields) so the backend can prove each action's
// contract declares exactly its payload's fields.

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
