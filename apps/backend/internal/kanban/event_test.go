package kanban_test

import (
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"io/fs"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// relays are the functions that pass on an event they did not name (by
// file under internal/, and function): Event.Publish and PublishContext
// themselves, the WebSocket hub, the cluster bus and its delivery of
// other backends' events, and the notifier's tap of this backend's events.
var relays = map[string][]string{
	"kanban/event.go":   {"Publish", "PublishContext"},
	"app/wsapi.go":      {"Publish"},
	"cluster/bus.go":    {"Publish", "PublishContext"},
	"cluster/listen.go": {"deliverOne"},
	"notify/notify.go":  {"Publish", "PublishContext"},
}

// TestEventsPublishedByDeclaration keeps every event named once, in its
// declaration: outside the relays, a Publish with three arguments is an
// Event's (so its payload type is checked by the compiler), and no Go
// file but event.go spells an event's name as a string literal.
func TestEventsPublishedByDeclaration(t *testing.T) {
	names := kanban.EventNames()
	fset := token.NewFileSet()
	for _, root := range []string{"..", "../../cmd"} {
		err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") ||
				strings.Contains(path, string(filepath.Separator)+"testdata"+string(filepath.Separator)) {
				return err
			}
			f, err := parser.ParseFile(fset, path, nil, 0)
			if err != nil {
				return err
			}
			rel := filepath.ToSlash(strings.TrimPrefix(path, "../"))
			checkPublishes(t, fset, rel, f, names)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}

func checkPublishes(t *testing.T, fset *token.FileSet, rel string, f *ast.File, names []string) {
	for _, d := range f.Decls {
		fn, ok := d.(*ast.FuncDecl)
		if ok && slices.Contains(relays[rel], fn.Name.Name) {
			continue
		}
		ast.Inspect(d, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.BasicLit:
				if s, err := strconv.Unquote(n.Value); err == nil && n.Kind == token.STRING && rel != "kanban/event.go" && slices.Contains(names, s) {
					t.Errorf("%s: event name %s as a literal: use its kanban.Event", fset.Position(n.Pos()), n.Value)
				}
			case *ast.CallExpr:
				sel, ok := n.Fun.(*ast.SelectorExpr)
				byName := ok && ((sel.Sel.Name == "Publish" && len(n.Args) == 3) || (sel.Sel.Name == "PublishContext" && len(n.Args) >= 4))
				if byName && !isEvent(sel.X, fn) {
					t.Errorf("%s: %s publishes an event by name: publish a kanban.Event", fset.Position(n.Pos()), types.ExprString(sel))
				}
			}
			return true
		})
	}
}

// isEvent reports whether x is a declared event (kanban.EventX, or EventX
// inside kanban) or a parameter of fn typed kanban.Event[P].
func isEvent(x ast.Expr, fn *ast.FuncDecl) bool {
	switch x := x.(type) {
	case *ast.SelectorExpr:
		pkg, ok := x.X.(*ast.Ident)
		return ok && pkg.Name == "kanban" && strings.HasPrefix(x.Sel.Name, "Event")
	case *ast.Ident:
		if strings.HasPrefix(x.Name, "Event") {
			return true
		}
		if fn == nil {
			return false
		}
		for _, p := range fn.Type.Params.List {
			idx, ok := p.Type.(*ast.IndexExpr)
			if !ok || !isEventType(idx.X) {
				continue
			}
			for _, n := range p.Names {
				if n.Name == x.Name {
					return true
				}
			}
		}
	}
	return false
}

func isEventType(x ast.Expr) bool {
	switch x := x.(type) {
	case *ast.SelectorExpr:
		pkg, ok := x.X.(*ast.Ident)
		return ok && pkg.Name == "kanban" && x.Sel.Name == "Event"
	case *ast.Ident:
		return x.Name == "Event"
	}
	return false
}

// TestEventNames: each event is declared once, as noun.past_tense.
func TestEventNames(t *testing.T) {
	names := kanban.EventNames()
	shape := regexp.MustCompile(`^[a-z]+\.[a-z_]+$`)
	for i, n := range names {
		if !shape.MatchString(n) {
			t.Errorf("event %q: want noun.verb_ed", n)
		}
		if i > 0 && names[i-1] == n {
			t.Errorf("event %q declared twice", n)
		}
	}
}

// TestEventPayloads pins the wire shape of the payloads declared with the
// events (what subscribers, the board and other backends decode).
func TestEventPayloads(t *testing.T) {
	for _, c := range []struct {
		payload any
		want    string
	}{
		{kanban.DeletedTask{ID: "t", WorkspaceID: "w"}, `{"id":"t","workspace_id":"w"}`},
		{kanban.DeletedWorkflow{ID: "f", WorkspaceID: "w"}, `{"id":"f","workspace_id":"w"}`},
		{kanban.DeletedStep{ID: "s", WorkflowID: "f"}, `{"id":"s","workflow_id":"f"}`},
		{kanban.StepOrder{StepIDs: []string{"b", "a"}, WorkflowID: "f"}, `{"step_ids":["b","a"],"workflow_id":"f"}`},
		{kanban.DeletedPlan{TaskID: "t"}, `{"task_id":"t"}`},
		{kanban.DeletedArtifacts{Deleted: 2, Kind: "review", TaskID: "t"}, `{"deleted":2,"kind":"review","task_id":"t"}`},
		{kanban.SessionMessage{Message: &kanban.Message{ID: "m"}}, `{"message":{"id":"m"`},
		{kanban.SessionMessage{DeliveryMode: kanban.DeliveryQueued}, `{"delivery_mode":"queued","message":null}`},
		{kanban.SessionUpstreams{SessionID: "s", Servers: []kanban.UpstreamServer{}}, `{"session_id":"s","servers":[]}`},
		{kanban.ProfileOf(&kanban.Session{ID: "s", TaskID: "t", WorkspaceID: "w", MCPMode: kanban.ModeTask}),
			`{"session_id":"s","task_id":"t","workspace_id":"w","mode":"task","capabilities":[]}`},
	} {
		b, err := json.Marshal(c.payload)
		if err != nil {
			t.Fatal(err)
		}
		if got := string(b); !strings.HasPrefix(got, c.want) {
			t.Errorf("got %s, want %s", got, c.want)
		}
	}
}

// recorder keeps what reaches a Publisher.
type recorder struct{ topic, event, payload string }

func (r *recorder) Publish(topic, event string, payload any) {
	b, _ := json.Marshal(payload)
	r.topic, r.event, r.payload = topic, event, string(b)
}

func TestEventPublish(t *testing.T) {
	var r recorder
	kanban.EventPlanDeleted.Publish(&r, "workspace:w", kanban.DeletedPlan{TaskID: "t"})
	if r != (recorder{"workspace:w", "plan.deleted", `{"task_id":"t"}`}) {
		t.Fatalf("got %+v, want plan.deleted with its payload on workspace:w", r)
	}
}
