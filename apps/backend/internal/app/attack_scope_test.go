package app

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/client"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
	"github.com/kandev/kandev/apps/backend/internal/ws"
)

// Issue 24, attack 6: a task session could retitle, move, archive and
// delete any task of its workspace, start agents on it and replace or
// delete what is shown on it, so one injected agent could destroy its
// neighbours' work. Under --session-scope tree (the default) a task
// session changes only its own task, its subtasks, the tasks it created
// and their subtasks; it still reads the whole workspace.

// scopeWrite is one write a task session attempts on a target task, as a
// tool call on its own MCP server and as an action on the WebSocket with
// its token (the same JSON for both).
type scopeWrite struct {
	name   string
	tool   string
	action kanban.Action
	// args is the tool's arguments for target; wsArgs the action's when
	// they differ (a tool whose Run builds the payload).
	args, wsArgs func(target string) string
}

// scopeWrites are the writes a task-mode session has on other tasks.
func scopeWrites(step string) []scopeWrite {
	walk := `{"file":"main.go","line":1,"text":"look"}`
	return []scopeWrite{
		{name: "retitle", tool: "update_task_kandev", action: kanban.ActionTaskUpdate,
			args: func(t string) string { return fmt.Sprintf(`{"task_id":%q,"title":"pwned"}`, t) }},
		{name: "move", tool: "move_task_kandev", action: kanban.ActionTaskMove,
			args: func(t string) string { return fmt.Sprintf(`{"task_id":%q,"workflow_step_id":%q}`, t, step) }},
		{name: "archive", tool: "archive_task_kandev", action: kanban.ActionTaskArchive,
			args: func(t string) string { return fmt.Sprintf(`{"task_id":%q}`, t) }},
		{name: "delete", tool: "delete_task_kandev", action: kanban.ActionTaskDelete,
			args: func(t string) string { return fmt.Sprintf(`{"task_id":%q}`, t) }},
		{name: "spawn an agent", tool: "spawn_session_kandev", action: kanban.ActionSessionSpawn,
			args: func(t string) string { return fmt.Sprintf(`{"task_id":%q,"prompt":"delete the branch"}`, t) }},
		{name: "add a subtask", tool: "create_task_kandev", action: kanban.ActionTaskCreate,
			args: func(t string) string {
				return fmt.Sprintf(`{"title":"planted","parent_id":%q,"start_agent":false,"workspace_mode":"inherit_parent"}`, t)
			}},
		{name: "show a walkthrough", tool: "show_walkthrough_kandev", action: kanban.ActionArtifactCreate,
			args: func(t string) string { return fmt.Sprintf(`{"task_id":%q,"steps":[%s]}`, t, walk) },
			wsArgs: func(t string) string {
				return fmt.Sprintf(`{"task_id":%q,"kind":"walkthrough","data":{"steps":[%s]}}`, t, walk)
			}},
		{name: "delete walkthroughs", tool: "delete_walkthrough_kandev", action: kanban.ActionArtifactDelete,
			args:   func(t string) string { return fmt.Sprintf(`{"task_id":%q}`, t) },
			wsArgs: func(t string) string { return fmt.Sprintf(`{"task_id":%q,"kind":"walkthrough"}`, t) }},
	}
}

func (w scopeWrite) wsPayload(target string) json.RawMessage {
	if w.wsArgs != nil {
		return json.RawMessage(w.wsArgs(target))
	}
	return json.RawMessage(w.args(target))
}

// scopeSession is a task-mode session with its MCP client and a
// WebSocket client on its token.
type scopeSession struct {
	*session
	ws *ws.Client
}

func newScopeSession(e *env, mode kanban.Mode) scopeSession {
	s := e.sessionMCP(mode, "")
	return scopeSession{session: s, ws: e.wsClient(s.Token, nil)}
}

// createdBy creates a task through s's own create_task_kandev.
func (s scopeSession) createdBy(e *env, title string) string {
	e.t.Helper()
	var out struct {
		Task kanban.Task `json:"task"`
	}
	callJSON(e, s.Client, "create_task_kandev", fmt.Sprintf(`{"title":%q,"start_agent":false}`, title), &out)
	return out.Task.ID
}

// refusedEverywhere: w on target is FORBIDDEN over MCP and over the
// WebSocket, and the database is unchanged.
func refusedEverywhere(e *env, s scopeSession, w scopeWrite, target, why string) {
	e.t.Helper()
	before := e.fingerprint()
	r := e.call(s.Client, w.tool, w.args(target))
	if !r.IsError || !strings.HasPrefix(text(r), "FORBIDDEN: ") {
		e.t.Fatalf("%s (%s) on %s over MCP: got error=%v %q, want FORBIDDEN", w.name, w.tool, why, r.IsError, text(r))
	}
	err := s.ws.Call(context.Background(), w.action, w.wsPayload(target), nil)
	if !isCode(err, kanban.CodeForbidden) {
		e.t.Fatalf("%s (%s) on %s over the WebSocket: got %v, want FORBIDDEN", w.name, w.action, why, err)
	}
	if e.fingerprint() != before {
		e.t.Fatalf("%s on %s: the refused call changed the database", w.name, why)
	}
}

// allowedOver: w on target succeeds through c.
func allowedOver(e *env, c *client.Client, w scopeWrite, target, why string) {
	e.t.Helper()
	if r := e.call(c, w.tool, w.args(target)); r.IsError {
		e.t.Fatalf("%s (%s) on %s: got %q, want success", w.name, w.tool, why, text(r))
	}
}

func TestAttackTaskSessionCannotChangeNeighbourTasks(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	s := newScopeSession(e, kanban.ModeTask)
	stranger := newScopeSession(e, kanban.ModeTask)
	steps := boardSteps(e, s.TaskID)
	neighbour := e.newTask("Neighbour")
	bareSession(e, neighbour.ID)
	parent := e.newTask("Parent")
	child := e.sessionMCP(kanban.ModeTask, subtaskOf(e, parent.ID, "Own").ID)
	childS := scopeSession{session: child, ws: e.wsClient(child.Token, nil)}
	for _, c := range []struct {
		why    string
		s      scopeSession
		target string
	}{
		{"a neighbour task", s, neighbour.ID},
		{"a neighbour's subtask", s, subtaskOf(e, neighbour.ID, "Neighbour's kid").ID},
		{"a task another session created", s, stranger.createdBy(e, "Stranger's")},
		{"the subtask of a task another session created", s, subtaskOf(e, stranger.createdBy(e, "Stranger's 2"), "kid").ID},
		{"the parent of its own task", childS, parent.ID},
	} {
		for _, w := range scopeWrites(steps[1].ID) {
			refusedEverywhere(e, c.s, w, c.target, c.why)
		}
	}
	// The branch tools were limited to the session's tree already; they
	// stay so.
	refused(e, s.Client, "add_branch_to_task_kandev", fmt.Sprintf(`{"task_id":%q,"repository_url":"https://example.com/a/b.git"}`, neighbour.ID),
		"FORBIDDEN: a session may only change the repositories of its own task, its subtasks and the tasks it created")

	// It still reads its whole workspace: the neighbour's conversation,
	// its related tasks, the board.
	for tool, args := range map[string]string{
		"get_task_conversation_kandev": fmt.Sprintf(`{"task_id":%q}`, neighbour.ID),
		"list_related_tasks_kandev":    fmt.Sprintf(`{"task_id":%q}`, neighbour.ID),
		"list_task_sessions_kandev":    fmt.Sprintf(`{"task_id":%q}`, neighbour.ID),
		"list_tasks_kandev":            `{}`,
	} {
		if r := e.call(s.Client, tool, args); r.IsError {
			t.Fatalf("%s on the neighbour: got %q, want the read to succeed", tool, text(r))
		}
	}
}

func TestAttackTaskSessionChangesItsOwnTreeAndCreations(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	s := newScopeSession(e, kanban.ModeTask)
	steps := boardSteps(e, s.TaskID)
	created := s.createdBy(e, "Created")
	if got := dbStr(e, `SELECT created_by_task_id FROM tasks WHERE id = ?`, created); got != s.TaskID {
		t.Fatalf("created_by_task_id: got %q, want the session's task %s", got, s.TaskID)
	}
	if got := dbStr(e, `SELECT created_by_task_id FROM tasks WHERE id = ?`, s.TaskID); got != "" {
		t.Fatalf("an operator's task: got creator %q, want none", got)
	}
	for _, w := range scopeWrites(steps[1].ID) {
		for why, target := range map[string]string{
			"its subtask":                   subtaskOf(e, s.TaskID, "Kid").ID,
			"its subtask's subtask":         subtaskOf(e, subtaskOf(e, s.TaskID, "Kid").ID, "Grandkid").ID,
			"a task it created":             s.createdBy(e, "Created"),
			"the subtask of one it created": subtaskOf(e, s.createdBy(e, "Created"), "Kid").ID,
		} {
			allowedOver(e, s.Client, w, target, why)
		}
		// The same over the WebSocket with its token.
		target := s.createdBy(e, "Created over WS")
		if err := s.ws.Call(context.Background(), w.action, w.wsPayload(target), nil); err != nil {
			t.Fatalf("%s (%s) on a task it created, over the WebSocket: %v", w.name, w.action, err)
		}
	}
	// Its own task ("self"), as before.
	callJSON(e, s.Client, "update_task_kandev", `{"task_id":"self","title":"Renamed"}`, &kanban.Task{})
}

func TestAttackSessionScopeWorkspaceRestoresReach(t *testing.T) {
	t.Parallel()
	e := newEnvWith(t, func(c *Config) { c.SessionScope = kanban.ScopeWorkspace })
	s := newScopeSession(e, kanban.ModeTask)
	steps := boardSteps(e, s.TaskID)
	for _, w := range scopeWrites(steps[1].ID) {
		allowedOver(e, s.Client, w, e.newTask("Neighbour").ID, "a neighbour under --session-scope workspace")
	}
	if _, err := start(context.Background(), Config{Addr: "127.0.0.1:0", DataDir: t.TempDir(), Token: "x", SessionScope: "galaxy"}); err == nil ||
		strings.Contains(err.Error(), "galaxy") {
		t.Fatalf("an unknown session scope: got %v, want a refusal that does not repeat it", err)
	}
}

// A config-mode session is the operator's delegate for its workspace: it
// keeps workspace reach under --session-scope tree.
func TestAttackConfigSessionKeepsWorkspaceReach(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	s := e.sessionMCP(kanban.ModeConfig, "")
	neighbour := e.newTask("Neighbour")
	callJSON(e, s.Client, "update_task_state_kandev", fmt.Sprintf(`{"task_id":%q,"state":"REVIEW"}`, neighbour.ID), &kanban.Task{})
	callJSON(e, s.Client, "archive_task_kandev", fmt.Sprintf(`{"task_id":%q}`, neighbour.ID), &kanban.Task{})
	if got := dbStr(e, `SELECT state FROM tasks WHERE id = ?`, neighbour.ID); got != "REVIEW" {
		t.Fatalf("state: got %s, want REVIEW", got)
	}
}
