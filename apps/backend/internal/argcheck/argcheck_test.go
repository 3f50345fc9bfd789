package argcheck

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/kandev/kandev/apps/backend/internal/escape"
)

// createTaskSchema is a realistic create_task-like input schema.
const createTaskSchema = `{
  "type": "object",
  "properties": {
    "title": {"type": "string", "minLength": 1, "maxLength": 60},
    "prompt": {"type": "string"},
    "workspace_id": {"type": "string"},
    "priority": {"type": "string", "enum": ["low", "medium", "high"]},
    "retries": {"type": "integer", "minimum": 0, "maximum": 10},
    "repository": {
      "type": "object",
      "properties": {"url": {"type": "string"}, "base_branch": {"type": "string"}},
      "required": ["url"],
      "additionalProperties": false
    },
    "meta": {"type": "object", "propertyNames": {"pattern": "^[a-z_]+$"}, "additionalProperties": {"type": "string", "maxLength": 10}},
    "blocked_by": {"type": "array", "items": {"type": "string"}, "maxItems": 3},
    "blocks": {"type": "array", "items": {"$ref": "#/$defs/block"}}
  },
  "required": ["workspace_id", "title"],
  "additionalProperties": false,
  "$defs": {
    "block": {"oneOf": [
      {"type": "object", "properties": {"type": {"const": "text"}, "text": {"type": "string", "maxLength": 20}},
       "required": ["type", "text"], "additionalProperties": false},
      {"type": "object", "properties": {"type": {"const": "link"}, "url": {"type": "string"}},
       "required": ["type", "url"], "additionalProperties": false}
    ]}
  }
}`

const noParamsSchema = `{"type":"object","properties":{},"additionalProperties":false}`

const canary = "sk-live-CANARY123"

func mustCompile(t testing.TB, tool, schema string) *Validator {
	t.Helper()
	v, err := Compile(tool, []byte(schema))
	if err != nil {
		t.Fatalf("Compile(%s): got error %v, want nil", tool, err)
	}
	return v
}

// decodeBoth decodes raw the two ways callers do: float64 and json.Number.
func decodeBoth(t testing.TB, raw string) []any {
	t.Helper()
	var plain, num any
	if err := json.Unmarshal([]byte(raw), &plain); err != nil {
		t.Fatalf("bad test JSON %s: %v", raw, err)
	}
	dec := json.NewDecoder(strings.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&num); err != nil {
		t.Fatalf("bad test JSON %s: %v", raw, err)
	}
	return []any{plain, num}
}

func message(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

const ok = "" // want: valid

// create_task_kandev's refusals in validateCases: the prefix, the
// allowed root fields, and titles at and just over the bound.
const (
	createPre         = "invalid arguments for create_task_kandev: "
	createAllowedRoot = "allowed: blocked_by, blocks, meta, priority, prompt, repository, retries, title, workspace_id"
)

var (
	title60 = strings.Repeat("t", 60)
	title61 = strings.Repeat("t", 61)
)

// validateCases are create_task_kandev's arguments and the message each
// gets (ok: valid).
var validateCases = []struct {
	name, args, want string
}{
	{"happy path", `{"title":"Fix bug","workspace_id":"w1","retries":3,"priority":"high"}`, ok},
	{"missing required sorted", `{}`, createPre + `/ is missing required "title"; / is missing required "workspace_id"`},
	{"missing one required", `{"title":"x"}`, createPre + `/ is missing required "workspace_id"`},
	{"unknown root key with suggestion", `{"title":"x","workspace_id":"w","promt":"p"}`,
		createPre + "unknown field at /; " + createAllowedRoot + ` (did you mean "prompt"?)`},
	{"unknown root key case-insensitive", `{"title":"x","workspace_id":"w","PRIORITY":"low"}`,
		createPre + "unknown field at /; " + createAllowedRoot + ` (did you mean "priority"?)`},
	{"unknown root key without suggestion", `{"title":"x","workspace_id":"w","zzzzzzzz":1}`,
		createPre + "unknown field at /; " + createAllowedRoot},
	{"no suggestion of a supplied name", `{"title":"x","workspace_id":"w","titles":"y"}`,
		createPre + "unknown field at /; " + createAllowedRoot},
	{"two unknown root keys", `{"title":"x","workspace_id":"w","promt":"p","zzzzzzzz":1}`,
		createPre + "2 unknown fields at /; " + createAllowedRoot + ` (did you mean "prompt"?)`},
	{"unknown nested key", `{"title":"x","workspace_id":"w","repository":{"url":"u","base_brnch":"main"}}`,
		createPre + `unknown field at /repository; allowed: base_branch, url (did you mean "base_branch"?)`},
	{"nested missing required", `{"title":"x","workspace_id":"w","repository":{}}`,
		createPre + `/repository is missing required "url"`},
	{"wrong type", `{"title":"x","workspace_id":"w","retries":"3"}`, createPre + "/retries: expected integer"},
	{"wrong type fraction", `{"title":"x","workspace_id":"w","retries":2.5}`, createPre + "/retries: expected integer"},
	{"enum near-miss", `{"title":"x","workspace_id":"w","priority":"High"}`,
		createPre + "/priority: must be one of: low, medium, high (enum)"},
	{"maximum just over", `{"title":"x","workspace_id":"w","retries":11}`, createPre + "/retries: must be <= 10 (maximum)"},
	{"maximum exact", `{"title":"x","workspace_id":"w","retries":10}`, ok},
	{"minimum just under", `{"title":"x","workspace_id":"w","retries":-1}`, createPre + "/retries: must be >= 0 (minimum)"},
	{"minimum exact", `{"title":"x","workspace_id":"w","retries":0}`, ok},
	{"maxLength just over", `{"title":"` + title61 + `","workspace_id":"w"}`, createPre + "/title: longer than 60 characters (maxLength)"},
	{"maxLength exact", `{"title":"` + title60 + `","workspace_id":"w"}`, ok},
	{"minLength", `{"title":"","workspace_id":"w"}`, createPre + "/title: shorter than 1 characters (minLength)"},
	{"maxItems", `{"title":"x","workspace_id":"w","blocked_by":["a","b","c","d"]}`, createPre + "/blocked_by: more than 3 items (maxItems)"},
	{"array indices in numeric order", `{"title":"x","workspace_id":"w","blocked_by":[0,1,2,3,4,5,6,7,8,9,10,11]}`,
		createPre + "/blocked_by: more than 3 items (maxItems); /blocked_by/0: expected string; /blocked_by/1: expected string; /blocked_by/2: expected string; /blocked_by/3: expected string; +8 more"},
	{"array item type", `{"title":"x","workspace_id":"w","blocked_by":["a",2]}`, createPre + "/blocked_by/1: expected string"},
	{"open record accepted", `{"title":"x","workspace_id":"w","meta":{"env":"prod","team_a":"core"}}`, ok},
	{"open record value too long", `{"title":"x","workspace_id":"w","meta":{"owner":"` + canary + `"}}`,
		createPre + "/meta/*: longer than 10 characters (maxLength)"},
	{"open record bad key", `{"title":"x","workspace_id":"w","meta":{"` + canary + `":"v"}}`,
		createPre + "/meta: a key does not satisfy propertyNames"},
	{"three problems", `{"title":"` + title61 + `","workspace_id":"w","retries":"x","promt":"p"}`,
		createPre + `unknown field at /; ` + createAllowedRoot + ` (did you mean "prompt"?); /retries: expected integer; /title: longer than 60 characters (maxLength)`},
	{"eight problems", `{"title":"` + title61 + `","workspace_id":7,"retries":99,"priority":"x","prompt":1,
		"blocked_by":[1,2],"repository":{"url":3}}`,
		createPre + "/blocked_by/0: expected string; /blocked_by/1: expected string; /priority: must be one of: low, medium, high (enum); /prompt: expected string; /repository/url: expected string; +3 more"},
	{"oneOf branch chosen by type", `{"title":"x","workspace_id":"w","blocks":[{"type":"text","text":"this text is longer than twenty"}]}`,
		createPre + "/blocks/0/text: longer than 20 characters (maxLength)"},
	{"oneOf unknown key in chosen branch", `{"title":"x","workspace_id":"w","blocks":[{"type":"link","url":"u","txt":"t"}]}`,
		createPre + "unknown field at /blocks/0; allowed: type, url"},
	{"oneOf unknown discriminator", `{"title":"x","workspace_id":"w","blocks":[{"type":"image"}]}`,
		createPre + "/blocks/0/type: must be one of: text, link (const)"},
	{"oneOf missing discriminator", `{"title":"x","workspace_id":"w","blocks":[{"text":"t"}]}`,
		createPre + `/blocks/0 is missing required "type"`},
	{"oneOf not an object", `{"title":"x","workspace_id":"w","blocks":["text"]}`,
		createPre + "/blocks/0: does not match any allowed shape (oneOf)"},
	{"oneOf valid", `{"title":"x","workspace_id":"w","blocks":[{"type":"text","text":"hi"},{"type":"link","url":"u"}]}`, ok},
	{"root array", `[]`, createPre + "/: expected object"},
	{"root null", `null`, createPre + "/: expected object"},
}

func TestValidate(t *testing.T) {
	v := mustCompile(t, "create_task_kandev", createTaskSchema)
	for _, tt := range validateCases {
		t.Run(tt.name, func(t *testing.T) {
			for _, args := range decodeBoth(t, tt.args) {
				err := v.Validate(args)
				if got := message(err); got != tt.want {
					t.Errorf("got %q, want %q", got, tt.want)
				}
				if err != nil {
					var p *Problems
					if !errors.As(err, &p) {
						t.Errorf("got error type %T, want *Problems", err)
					}
				}
			}
		})
	}
}

func TestValidateNoParams(t *testing.T) {
	v := mustCompile(t, "list_workspaces_kandev", noParamsSchema)
	tests := []struct{ args, want string }{
		{`{}`, ok},
		{`{"x":1}`, "invalid arguments for list_workspaces_kandev: unknown field at /; this tool takes no arguments"},
		{`{"a":1,"b":2}`, "invalid arguments for list_workspaces_kandev: 2 unknown fields at /; this tool takes no arguments"},
	}
	for _, tt := range tests {
		for _, args := range decodeBoth(t, tt.args) {
			if got := message(v.Validate(args)); got != tt.want {
				t.Errorf("%s: got %q, want %q", tt.args, got, tt.want)
			}
		}
	}
}

func TestValidateComposedRoot(t *testing.T) {
	schema := `{"allOf":[{"$ref":"#/$defs/page"}],"type":"object",
	  "properties":{"workflow_id":{"type":"string"}},"unevaluatedProperties":false,
	  "$defs":{"page":{"properties":{"cursor":{"type":"string"},"limit":{"type":"integer","maximum":100}}}}}`
	v := mustCompile(t, "list_tasks_kandev", schema)
	tests := []struct{ args, want string }{
		{`{"workflow_id":"w","limit":5,"cursor":"c"}`, ok},
		{`{"workflowid":"w"}`, `invalid arguments for list_tasks_kandev: unknown field at /; allowed: cursor, limit, workflow_id (did you mean "workflow_id"?)`},
		{`{"limit":101}`, "invalid arguments for list_tasks_kandev: /limit: must be <= 100 (maximum)"},
	}
	for _, tt := range tests {
		for _, args := range decodeBoth(t, tt.args) {
			if got := message(v.Validate(args)); got != tt.want {
				t.Errorf("%s: got %q, want %q", tt.args, got, tt.want)
			}
		}
	}
}

func TestMessageBudget(t *testing.T) {
	var props, req []string
	for i := range 12 {
		name := fmt.Sprintf("%s_%02d", strings.Repeat("very_long_property_name_", 8), i)
		props = append(props, fmt.Sprintf("%q:{\"type\":\"string\"}", name))
		req = append(req, fmt.Sprintf("%q", name))
	}
	schema := `{"type":"object","properties":{` + strings.Join(props, ",") + `},"required":[` + strings.Join(req, ",") + `],"additionalProperties":false}`
	v := mustCompile(t, "budget_kandev", schema)
	for _, raw := range []string{`{}`, `{"x":1,"very_long_property_name_very_long_property_name_":2}`} {
		got := message(v.Validate(decodeBoth(t, raw)[0]))
		if len(got) > maxMessageBytes {
			t.Errorf("%s: got %d bytes, want <= %d", raw, len(got), maxMessageBytes)
		}
		if raw == `{}` && !strings.HasSuffix(got, "; +8 more") {
			t.Errorf("%s: got %q, want 4 problems then \"; +8 more\"", raw, got)
		}
	}
}

func TestNoCallerDataInMessages(t *testing.T) {
	v := mustCompile(t, "create_task_kandev", createTaskSchema)
	cases := []string{
		`{"title":"` + canary + strings.Repeat("x", 60) + `","workspace_id":"w"}`,
		`{"title":"x","workspace_id":"w","priority":"` + canary + `"}`,
		`{"title":"x","workspace_id":"w","` + canary + `":1}`,
		`{"title":"x","workspace_id":"w","repository":{"url":"u","` + canary + `":1}}`,
		`{"title":"x","workspace_id":"w","meta":{"` + canary + `":"` + canary + `"}}`,
		`{"title":"x","workspace_id":"w","meta":{"a":{"` + canary + `":1}}}`,
		`{"title":"x","workspace_id":"w","blocks":[{"type":"` + canary + `"}]}`,
		`{"title":"x","workspace_id":"w","blocks":[{"type":"text","text":"` + canary + `-and-more"}]}`,
		`{"title":"x","workspace_id":"w","blocks":[{"type":"text","text":"t","` + canary + `":1}]}`,
	}
	for _, raw := range cases {
		for _, args := range decodeBoth(t, raw) {
			got := message(v.Validate(args))
			if got == "" {
				t.Errorf("%s: got valid, want a problem", raw)
			}
			if strings.Contains(got, "CANARY") {
				t.Errorf("%s: got %q, want no caller data", raw, got)
			}
		}
	}
}

func TestCompileRefusesExternalRefs(t *testing.T) {
	for _, ref := range []string{"file:///etc/passwd", "https://example.com/x.json", "other.json", "http://127.0.0.1:1/x.json"} {
		schema := `{"type":"object","properties":{"a":{"$ref":"` + ref + `"}}}`
		if _, err := Compile("evil_kandev", []byte(schema)); err == nil || !strings.Contains(err.Error(), "evil_kandev") {
			t.Errorf("$ref %s: got error %v, want a compile error naming the tool", ref, err)
		}
	}
	if _, err := Compile("evil_kandev", []byte(`{"$schema":"https://example.com/meta.json"}`)); err == nil {
		t.Errorf("unknown $schema: got nil error, want a compile error")
	}
}

func TestCompileBudgets(t *testing.T) {
	big := `{"type":"object","description":"` + strings.Repeat("x", 300<<10) + `"}`
	if _, err := Compile("big_kandev", []byte(big)); err == nil {
		t.Errorf("300 KiB schema: got nil error, want refused")
	}
	// Each level refers twice to the next: 2^22 subschemas once expanded.
	var defs []string
	for i := range 22 {
		defs = append(defs, fmt.Sprintf(`"d%d":{"allOf":[{"$ref":"#/$defs/d%d"},{"$ref":"#/$defs/d%d"}]}`, i, i+1, i+1))
	}
	defs = append(defs, `"d22":{"type":"object"}`)
	chain := `{"$ref":"#/$defs/d0","$defs":{` + strings.Join(defs, ",") + `}}`
	if _, err := Compile("chain_kandev", []byte(chain)); err == nil {
		t.Errorf("exponential allOf chain: got nil error, want refused")
	}
	for _, bad := range []string{`{"type":"nope"}`, `{"type":`, `{"pattern":"("}`} {
		if _, err := Compile("bad_kandev", []byte(bad)); err == nil {
			t.Errorf("%s: got nil error, want a compile error", bad)
		}
	}
	// Recursion is refused by the shared estimator (validation cost would
	// grow with the argument's depth), for Kandev's own schemas as for
	// upstream ones.
	recursive := `{"type":"object","properties":{"children":{"type":"array","items":{"$ref":"#"}}}}`
	if _, err := Compile("tree_kandev", []byte(recursive)); err == nil || !strings.Contains(err.Error(), "ref_cycle") {
		t.Errorf("recursive schema: got %v, want a ref_cycle refusal", err)
	}
}

func TestValidateNeverPanics(t *testing.T) {
	// jsonschema panics on numbers like 1e1000001 under maximum/multipleOf.
	v := mustCompile(t, "n_kandev", `{"type":"object","properties":{"n":{"type":"number","maximum":10,"multipleOf":0.5}}}`)
	for _, n := range []string{"1e1000001", "-1e1000001", "1e-1000001", "1e999999999"} {
		got := message(v.Validate(map[string]any{"n": json.Number(n)}))
		if want := "invalid arguments for n_kandev: /: value could not be validated"; got != want {
			t.Errorf("n=%s: got %q, want %q", n, got, want)
		}
	}
	if got, want := message(v.Validate(map[string]any{"n": json.Number("1e400")})), "invalid arguments for n_kandev: /n: must be <= 10 (maximum)"; got != want {
		t.Errorf("n=1e400: got %q, want %q", got, want)
	}
	// Values encoding/json never produces are refused, not panicked on.
	if got, want := message(v.Validate(map[string]any{"n": make(chan int)})), "invalid arguments for n_kandev: /n: not a JSON value"; got != want {
		t.Errorf("channel value: got %q, want %q", got, want)
	}
}

func TestDeterministic(t *testing.T) {
	v := mustCompile(t, "create_task_kandev", createTaskSchema)
	raw := `{"title":1,"workspace_id":2,"retries":"x","priority":"x","a":1,"b":2,"promt":3,"meta":{"x":"12345678901","y":"12345678901"}}`
	first := message(v.Validate(decodeBoth(t, raw)[0]))
	for range 50 {
		if got := message(v.Validate(decodeBoth(t, raw)[0])); got != first {
			t.Fatalf("got %q, want %q (same input, same message)", got, first)
		}
	}
}

func TestProblemsErrorEmpty(t *testing.T) {
	p := &Problems{Tool: "x_kandev"}
	if got, want := p.Error(), "invalid arguments for x_kandev"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	long := &Problems{Tool: "x_kandev", List: []Problem{{Path: "/", Text: string(bytes.Repeat([]byte("é"), 2000))}}}
	if got := long.Error(); len(got) > maxMessageBytes || !strings.HasSuffix(got, "...") {
		t.Errorf("got %d bytes ending %q, want <= %d ending \"...\"", len(got), got[len(got)-5:], maxMessageBytes)
	}
}

// TestUnprintableSchemaTextEscaped: a schema whose names or values hold
// unprintable characters (written as JSON escapes, so its bytes look
// plain) still gets escaped messages; a plain schema's messages pass
// through unchanged.
func TestUnprintableSchemaTextEscaped(t *testing.T) {
	cases := []struct{ name, schema, args, want string }{
		{"declared name", `{"type":"object","properties":{"a\u001bb":{"type":"string"}},"additionalProperties":false}`,
			`{"x":1}`, `allowed: a\x1bb`},
		{"enum value", `{"type":"object","properties":{"mode":{"enum":["ok\u202e"]}}}`,
			`{"mode":"no"}`, `\u202e`},
		{"plain", `{"type":"object","properties":{"mode":{"enum":["fast","slow"]}}}`,
			`{"mode":"no"}`, `/mode: must be one of: fast, slow (enum)`},
	}
	for _, c := range cases {
		v := mustCompile(t, "x_kandev", c.schema)
		for _, args := range decodeBoth(t, c.args) {
			got := message(v.Validate(args))
			if !strings.Contains(got, c.want) || escape.Needed(got) {
				t.Errorf("%s: got %q, want an escaped message containing %q", c.name, got, c.want)
			}
		}
	}
}
