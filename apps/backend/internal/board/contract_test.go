package board_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

var update = flag.Bool("update", false, "rewrite static/app/contract.js from package kanban")

const contractPath = "static/app/contract.js"

// TestContractJS keeps the board's copy of the backend's names and bounds
// generated: static/app/contract.js is what contractJS renders from
// package kanban (-update rewrites it), no other module spells an action
// or event name as a string, and every name a module imports from it
// exists there.
func TestContractJS(t *testing.T) {
	want, names, err := contractJS()
	if err != nil {
		t.Fatal(err)
	}
	if *update {
		if err := os.WriteFile(contractPath, want, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(contractPath)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s is stale: run go test ./internal/board -run TestContractJS -update", contractPath)
	}
	wire := map[string]bool{}
	for _, a := range append(slices.Clone(kanban.RegistryActions), kanban.ConnectionActions...) {
		wire[string(a)] = true
	}
	for _, e := range kanban.EventNames() {
		wire[e] = true
	}
	modules, err := filepath.Glob("static/app/*.js")
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range modules {
		if m == contractPath {
			continue
		}
		src, err := os.ReadFile(m)
		if err != nil {
			t.Fatal(err)
		}
		checkModule(t, m, string(src), wire, names)
	}
}

var (
	literal        = regexp.MustCompile("'([^'\\n]*)'|\"([^\"\\n]*)\"|`([^`\\n]*)`")
	contractImport = regexp.MustCompile(`(?s)import \{([^}]*)\} from '\./contract\.js'`)
)

// checkModule refuses, in module m, a string literal that is an action or
// event name, and an import from contract.js of a name it does not export
// (which would stop the page from loading).
func checkModule(t *testing.T, m, src string, wire, exported map[string]bool) {
	for i, line := range strings.Split(src, "\n") {
		for _, g := range literal.FindAllStringSubmatch(line, -1) {
			if s := g[1] + g[2] + g[3]; wire[s] {
				t.Errorf("%s:%d: %q spelt out: import it from contract.js", m, i+1, s)
			}
		}
	}
	for _, g := range contractImport.FindAllStringSubmatch(src, -1) {
		for _, n := range strings.Split(g[1], ",") {
			if n = strings.TrimSpace(n); n != "" && !exported[n] {
				t.Errorf("%s: imports %s, which contract.js does not export", m, n)
			}
		}
	}
}

// jsName is the constant a wire name is exported as: task.set_title is
// TASK_SET_TITLE.
func jsName(wire string) string {
	return strings.ToUpper(strings.NewReplacer(".", "_", "-", "_").Replace(wire))
}

// contractJS renders contract.js and returns the names it exports.
func contractJS() ([]byte, map[string]bool, error) {
	var b bytes.Buffer
	names := map[string]bool{}
	export := func(name, value, comment string) error {
		if names[name] {
			return fmt.Errorf("contract.js: %s exported twice", name)
		}
		names[name] = true
		if comment != "" {
			comment = " // " + comment
		}
		fmt.Fprintf(&b, "export const %s = %s;%s\n", name, value, comment)
		return nil
	}
	b.WriteString(`// Code generated from package kanban by TestContractJS
// (go test ./internal/board -run TestContractJS -update). DO NOT EDIT.
//
// What the board shares with the backend: the name of every action the
// WebSocket API serves and of every event it publishes, and the bounds and
// enums the board's forms state. A module imports what it uses by name, so
// a misspelt name stops the page from loading instead of failing quietly.

// Actions.
`)
	actions := slices.Sorted(slices.Values(append(slices.Clone(kanban.RegistryActions), kanban.ConnectionActions...)))
	for _, a := range actions {
		if err := export(jsName(string(a)), fmt.Sprintf("'%s'", a), ""); err != nil {
			return nil, nil, err
		}
	}
	b.WriteString("\n// Events.\n")
	for _, e := range kanban.EventNames() {
		if err := export(jsName(e), fmt.Sprintf("'%s'", e), ""); err != nil {
			return nil, nil, err
		}
	}
	b.WriteString("\n// Bounds and enums.\n")
	bounds, err := boundsJS()
	if err != nil {
		return nil, nil, err
	}
	for _, c := range bounds {
		if err := export(c.name, c.value, c.comment); err != nil {
			return nil, nil, err
		}
	}
	return b.Bytes(), names, nil
}

// jsConst is one bound or enum of contract.js.
type jsConst struct{ name, value, comment string }

// boundsJS are the bounds and enums the board's forms state.
func boundsJS() ([]jsConst, error) {
	autos, err := automationsJS()
	if err != nil {
		return nil, err
	}
	return []jsConst{
		{"MAX_TITLE_LEN", fmt.Sprint(kanban.MaxTitleLen), "a task's title, in characters"},
		{"MAX_LIMIT", fmt.Sprint(kanban.MaxLimit), "items of one page of a list"},
		{"SESSION_MODES", jsList(kanban.SessionModes), "the modes a session may be put in"},
		{"NOTIFICATION_KINDS", jsList(kanban.NotificationKinds), "what a notification tells of"},
		{"CHANNEL_TYPES", jsList(kanban.ChannelTypes), "how a channel delivers"},
		{"MAX_WORKFLOW_DOC_BYTES", fmt.Sprint(kanban.MaxWorkflowDocBytes), "a workflow document's text, in bytes"},
		{"MAX_WORKFLOW_STEPS", fmt.Sprint(kanban.MaxWorkflowSteps), "steps of one workflow"},
		{"MAX_STEP_ACTIONS", fmt.Sprint(kanban.MaxStepActions), "automations per step event"},
		{"TASK_STATES", jsList(kanban.TaskStates), "a task's states"},
		{"STEP_EVENT_KINDS", jsList(kanban.StepEventKinds), "when a step's automations run"},
		{"AUTOMATION_TYPES", autos, "the automations the engine runs, with their settings"},
	}, nil
}

// jsList renders strings as a frozen JS array.
func jsList[S ~string](items []S) string {
	q := make([]string, len(items))
	for i, it := range items {
		q[i] = fmt.Sprintf("'%s'", it)
	}
	return "Object.freeze([" + strings.Join(q, ", ") + "])"
}

// automationJS is one automation type as the board's step editor reads it.
type automationJS struct {
	Name   string        `json:"name"`
	Desc   string        `json:"desc"`
	Params []automationP `json:"params"`
	OneOf  []string      `json:"one_of"`
}

type automationP struct {
	Name     string   `json:"name"`
	Kind     string   `json:"kind"`
	Required bool     `json:"required"`
	Desc     string   `json:"desc"`
	MaxLen   int      `json:"max_len,omitempty"`
	Values   []string `json:"values,omitempty"`
}

// automationsJS renders kanban.AutomationTypes, the table the step
// contracts' automation schema is built from, as a frozen JS array.
func automationsJS() (string, error) {
	kinds := map[kanban.ParamKind]string{kanban.ParamID: "id", kanban.ParamText: "text", kanban.ParamState: "state", kanban.ParamIndex: "index", kanban.ParamEnum: "enum"}
	out := make([]automationJS, len(kanban.AutomationTypes))
	for i, t := range kanban.AutomationTypes {
		out[i] = automationJS{Name: t.Name, Desc: t.Desc, Params: []automationP{}, OneOf: t.OneOf}
		if out[i].OneOf == nil {
			out[i].OneOf = []string{}
		}
		for _, p := range t.Params {
			k, ok := kinds[p.Kind]
			if !ok {
				return "", fmt.Errorf("contract.js: automation %s: param %s of an unknown kind", t.Name, p.Name)
			}
			out[i].Params = append(out[i].Params, automationP{Name: p.Name, Kind: k, Required: p.Required, Desc: p.Desc, MaxLen: p.MaxLen, Values: p.Values})
		}
	}
	raw, err := json.Marshal(out)
	if err != nil {
		return "", err
	}
	return "Object.freeze(" + string(raw) + ")", nil
}
