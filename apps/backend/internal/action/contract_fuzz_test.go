package action

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// fuzzCanary is appended to caller-chosen keys (and, optionally, string
// values); no refusal may contain it.
const fuzzCanary = "ZQXcanary"

// FuzzActionContracts checks every action's payload contract on arbitrary
// payloads: it never panics; a refusal is VALIDATION_ERROR, bounded, and
// echoes no caller key or value; and a payload it accepts always decodes
// into the action's payload type — the contract is the only check before
// the handler, so anything it lets through must be a well-formed payload.
func FuzzActionContracts(f *testing.F) {
	contracts := Contracts()
	for _, s := range []string{
		`{}`, `null`, `[]`, `{"title":"t","blocked_by":["a","b"],"start_agent":false}`, `{"limit":1.0}`, `{"limit":1e2}`,
		`{"limit":"5"}`, `{"Title":"t"}`, `{"id":"abc"}`, `{"task_id":"self","kind":"walkthrough","data":{"steps":[]}}`,
		`{"questions":[{"prompt":"q","options":[{"label":"a","description":"d"},{"label":"b","description":"e"}]}],"wait_seconds":1}`,
		`{"servers":[{"name":"a","type":"stdio","state":"ready","tools_served":1,"tools_refused":0,"refused":[]}]}`,
		`{"topics":["workspace:abc"]}`, `{"limit":99999999999999999999}`, `{"workspace_id":"w","parent_id":"p","verbose":true}`,
	} {
		f.Add([]byte(s), uint8(0), false)
	}
	f.Fuzz(func(t *testing.T, raw []byte, which uint8, markValues bool) {
		c := contracts[int(which)%len(contracts)]
		name := c.Name()
		raw = markUnknown(raw, c.Payload(), markValues)
		out, err := c.Check(raw)
		if err != nil {
			ke, ok := kanban.AsError(err)
			if !ok || ke.Code != kanban.CodeValidation {
				t.Fatalf("%s: got %v, want a VALIDATION_ERROR", name, err)
			}
			if strings.Contains(ke.Error(), fuzzCanary) || strings.Contains(ke.Field, fuzzCanary) {
				t.Fatalf("%s: refusal %q echoes a caller key or value", name, ke.Error())
			}
			if len(ke.Message) > 4096 {
				t.Fatalf("%s: refusal of %d bytes", name, len(ke.Message))
			}
			return
		}
		if err := json.Unmarshal(out, reflect.New(c.Payload()).Interface()); err != nil {
			t.Fatalf("%s: contract accepted %s but it does not decode into %s: %v", name, out, c.Payload(), err)
		}
	})
}

// markUnknown appends the canary to every key of raw that the payload
// type does not declare at any depth (and to every string value when
// markValues); raw that is not JSON is returned as it is.
func markUnknown(raw []byte, payload reflect.Type, markValues bool) []byte {
	names := map[string]bool{}
	jsonNames(payload, names, map[reflect.Type]bool{})
	var tree any
	if json.Unmarshal(raw, &tree) != nil {
		return raw
	}
	var mark func(v any) any
	mark = func(v any) any {
		switch x := v.(type) {
		case map[string]any:
			out := make(map[string]any, len(x))
			for k, c := range x {
				if !names[k] {
					k += fuzzCanary
				}
				out[k] = mark(c)
			}
			return out
		case []any:
			for i, c := range x {
				x[i] = mark(c)
			}
		case string:
			if markValues {
				return x + fuzzCanary
			}
		}
		return v
	}
	b, err := json.Marshal(mark(tree))
	if err != nil {
		return raw
	}
	return b
}

// jsonNames collects the JSON names of t's fields, recursively.
func jsonNames(t reflect.Type, names map[string]bool, seen map[reflect.Type]bool) {
	for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Array || t.Kind() == reflect.Map {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct || seen[t] {
		return
	}
	seen[t] = true
	for i := range t.NumField() {
		f := t.Field(i)
		if f.Anonymous {
			jsonNames(f.Type, names, seen)
			continue
		}
		if n, _, _ := strings.Cut(f.Tag.Get("json"), ","); n != "" && n != "-" {
			names[n] = true
		}
		jsonNames(f.Type, names, seen)
	}
}
