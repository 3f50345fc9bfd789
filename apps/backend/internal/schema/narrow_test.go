package schema

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/kandev/kandev/apps/backend/internal/argcheck"
)

func id(desc string) S { return Str(desc).Pattern(`^[A-Za-z0-9_-]{1,64}$`) }

// TestNarrows: Narrow derives a schema only where it can prove every value
// the result accepts is one the source accepts, and refuses otherwise.
func TestNarrows(t *testing.T) {
	src := Obj("", P{"task_id": id("An id."), "workspace_id": id("An id."), "limit": Int("A limit.").Range(1, 5)}, "limit")
	for _, c := range []struct {
		name          string
		s             S
		drop, require []string
		err           string
	}{
		{"drops an optional property", src, []string{"workspace_id"}, nil, ""},
		{"requires more", src, nil, []string{"task_id"}, ""},
		{"drops a required property", src, []string{"limit"}, nil, "required"},
		{"drops what it requires", src, []string{"task_id"}, []string{"task_id"}, "required"},
		{"drops an unknown property", src, []string{"x"}, nil, "no property x"},
		{"requires an unknown property", src, nil, []string{"x"}, "no property x"},
		{"open object", S{"type": "object", "properties": P{"task_id": id("An id.")}}, nil, nil, "closed"},
		{"oneOf", S{"type": "object", "oneOf": []any{src}}, nil, nil, "oneOf"},
		{"maxProperties", Obj("", P{"a": Str("A.")}).Props(1, 1), nil, nil, "maxProperties"},
	} {
		got, err := Narrow(c.s, c.drop, c.require)
		switch {
		case c.err == "" && err != nil:
			t.Errorf("%s: got %v, want a narrowed schema", c.name, err)
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("%s: got %v, want an error about %q", c.name, err, c.err)
		case c.err == "":
			narrowsOn(t, c.name, got, c.s)
		}
	}
	if _, err := Narrow(src, []string{"workspace_id"}, nil); err != nil || len(src["properties"].(P)) != 3 {
		t.Errorf("Narrow changed its source: got %v properties, want 3 (%v)", len(src["properties"].(P)), err)
	}
	same, _ := Narrow(src, nil, nil)
	if !reflect.DeepEqual(same, src) {
		t.Errorf("Narrow with nothing to drop: got %v, want the source itself", same)
	}
}

// narrowsOn checks, on sample values, that narrowed accepts only what src
// accepts, and that it still accepts some (the samples can tell).
func narrowsOn(t *testing.T, name string, narrowed, src S) {
	t.Helper()
	vn, vs := compile(t, narrowed), compile(t, src)
	accepted := 0
	for _, sample := range []string{`{}`, `{"limit":1}`, `{"limit":9}`, `{"limit":1,"task_id":"a"}`, `{"limit":2,"workspace_id":"w"}`,
		`{"limit":1,"task_id":"a","workspace_id":"w"}`, `{"limit":1,"x":1}`, `{"task_id":"bad id"}`, `{"limit":"1"}`} {
		var v any
		if err := json.Unmarshal([]byte(sample), &v); err != nil {
			t.Fatal(err)
		}
		if vn.Validate(v) == nil {
			accepted++
			if err := vs.Validate(v); err != nil {
				t.Errorf("%s: %s accepted by the narrowed schema, refused by the source: %v", name, sample, err)
			}
		}
	}
	if accepted == 0 {
		t.Errorf("%s: the narrowed schema accepts no sample", name)
	}
}

func compile(t *testing.T, s S) *argcheck.Validator {
	t.Helper()
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	v, err := argcheck.Compile("t", b)
	if err != nil {
		t.Fatal(err)
	}
	return v
}
