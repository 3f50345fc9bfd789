package argcheck

import (
	"strings"
	"testing"
)

// kitchenSchema exercises every keyword whose wording is specified.
const kitchenSchema = `{
  "type": "object",
  "properties": {
    "mode": {"const": "fast"},
    "level": {"const": 3},
    "code": {"type": "string", "pattern": "^[A-Z]{3}$"},
    "ratio": {"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 1.5},
    "step": {"type": "integer", "multipleOf": 5},
    "tags": {"type": "array", "items": {"type": "string"}, "uniqueItems": true, "minItems": 1},
    "pair": {"type": "array", "prefixItems": [{"type": "string"}, {"type": "integer"}], "items": false},
    "labels": {"type": "object", "maxProperties": 2, "minProperties": 1},
    "nullable": {"type": ["string", "null"]},
    "forbidden": {"not": {"type": "string"}},
    "either": {"anyOf": [{"type": "string"}, {"type": "integer"}]},
    "one": {"oneOf": [{"type": "integer"}, {"type": "number"}]},
    "env": {"type": "object", "patternProperties": {"^[A-Z_]+$": {"type": "string", "maxLength": 3}}, "additionalProperties": false},
    "rows": {"type": "array", "items": {"type": "object", "propertyNames": {"maxLength": 4},
      "additionalProperties": {"type": "integer"}}},
    "card": {"type": "object", "properties": {"number": {"type": "string"}, "cvc": {"type": "string"}},
      "dependentRequired": {"number": ["cvc"]}},
    "kinds": {"oneOf": [
      {"type": "object", "properties": {"kind": {"const": "a"}, "x": {"type": "integer"}}, "required": ["kind"]},
      {"type": "object", "properties": {"kind": {"const": "b"}, "y": {"type": "integer"}}, "required": ["kind"]}]},
    "when": {"type": "string", "format": "date-time"},
    "big": {"enum": ["v00","v01","v02","v03","v04","v05","v06","v07","v08","v09","v10","v11","v12","v13","v14","v15","v16","v17","v18","v19","v20"]},
    "mixed": {"enum": ["a", 1, null, true]}
  },
  "additionalProperties": false
}`

func TestKeywordTexts(t *testing.T) {
	v := mustCompile(t, "kitchen_kandev", kitchenSchema)
	const pre = "invalid arguments for kitchen_kandev: "
	bigList := "v00, v01, v02, v03, v04, v05, v06, v07, v08, v09, v10, v11, v12, v13, v14, v15, v16, v17, v18, v19, ..."
	tests := []struct{ args, want string }{
		{`{"mode":"slow"}`, `/mode: must be "fast" (const)`},
		{`{"level":4}`, "/level: must be 3 (const)"},
		{`{"code":"abc"}`, "/code: does not match pattern ^[A-Z]{3}$"},
		{`{"ratio":0}`, "/ratio: must be > 0 (exclusiveMinimum)"},
		{`{"ratio":1.5}`, "/ratio: must be < 1.5 (exclusiveMaximum)"},
		{`{"ratio":1.49}`, ok},
		{`{"step":7}`, "/step: must be a multiple of 5 (multipleOf)"},
		{`{"tags":["a","a"]}`, "/tags: items must be unique (uniqueItems)"},
		{`{"tags":[]}`, "/tags: fewer than 1 items (minItems)"},
		{`{"pair":["a",1]}`, ok},
		{`{"pair":["a","b"]}`, "/pair/1: expected integer"},
		{`{"pair":["a",1,2]}`, "/pair/2: not allowed (false schema)"},
		{`{"labels":{}}`, "/labels: fewer than 1 properties (minProperties)"},
		{`{"labels":{"a":1,"b":2,"c":3}}`, "/labels: more than 2 properties (maxProperties)"},
		{`{"nullable":1}`, "/nullable: expected string or null"},
		{`{"nullable":null}`, ok},
		{`{"forbidden":"s"}`, "/forbidden: violates not"},
		{`{"either":true}`, "/either: does not match any allowed shape (anyOf)"},
		{`{"one":1}`, "/one: matches more than one allowed shape (oneOf)"},
		{`{"one":"x"}`, "/one: does not match any allowed shape (oneOf)"},
		{`{"env":{"HOME":"abcd"}}`, "/env/*: longer than 3 characters (maxLength)"},
		{`{"env":{"home":"a"}}`, "unknown field at /env; no fields allowed"},
		{`{"rows":[{"a":1},{"toolong":1}]}`, "/rows/1: a key does not satisfy propertyNames"},
		{`{"rows":[{"a":"x"}]}`, "/rows/0/*: expected integer"},
		{`{"card":{"number":"4"}}`, "/card: violates dependentRequired"},
		{`{"kinds":{"kind":"b","y":"x"}}`, "/kinds/y: expected integer"},
		{`{"kinds":{"kind":"c"}}`, "/kinds/kind: must be one of: a, b (const)"},
		{`{"when":"not a date"}`, "/when: not a valid date-time (format)"}, // declared formats are asserted
		{`{"big":"zz"}`, "/big: must be one of: " + bigList + " (enum)"},
		{`{"mixed":2}`, "/mixed: must be one of: a, 1, null, true (enum)"},
	}
	for _, tt := range tests {
		want := tt.want
		if want != ok {
			want = pre + want
		}
		for _, args := range decodeBoth(t, tt.args) {
			if got := message(v.Validate(args)); got != want {
				t.Errorf("%s: got %q, want %q", tt.args, got, want)
			}
		}
	}
}

// TestPropertyNamesLocation covers the validator reusing its path slice for
// propertyNames failures: siblings validated later must not move the report.
func TestPropertyNamesLocation(t *testing.T) {
	v := mustCompile(t, "kitchen_kandev", kitchenSchema)
	raw := `{"rows":[{"toolong":1}],"mode":"fast","level":3,"code":"ABC","step":5,"tags":["a"],"pair":["a",1]}`
	for _, args := range decodeBoth(t, raw) {
		got := message(v.Validate(args))
		if want := "invalid arguments for kitchen_kandev: /rows/0: a key does not satisfy propertyNames"; got != want {
			t.Errorf("got %q, want %q", got, want)
		}
		if strings.Contains(got, "toolong") {
			t.Errorf("got %q, want no caller key", got)
		}
	}
}

func TestValidateConcurrent(t *testing.T) {
	v := mustCompile(t, "kitchen_kandev", kitchenSchema)
	args := decodeBoth(t, `{"rows":[{"toolong":1}],"env":{"HOME":"abcd","x":1},"kinds":{"kind":"c"},"zz":1}`)[1]
	want := message(v.Validate(args))
	done := make(chan string)
	for range 8 {
		go func() {
			got := ""
			for range 50 {
				if got = message(v.Validate(args)); got != want {
					break
				}
			}
			done <- got
		}()
	}
	for range 8 {
		if got := <-done; got != want {
			t.Errorf("got %q, want %q", got, want)
		}
	}
}
