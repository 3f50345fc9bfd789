package app

import (
	"context"
	"testing"

	"github.com/mark3labs/mcp-go/client"

	"github.com/kandev/kandev/apps/backend/internal/action"
	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

func (e *env) session(id string) *kanban.Session {
	e.t.Helper()
	var s kanban.Session
	e.dispatch(kanban.ActionSessionGet, action.IDIn{ID: id}, &s)
	return &s
}

// TestHandMadeSessionDetaches: a session made by hand is RUNNING while
// its real `kandev mcp` is attached; when that client goes away it is
// CREATED again (waiting for an agent to connect), not "running, tools
// not connected" for ever; a new client makes it RUNNING again.
func TestHandMadeSessionDetaches(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	bin := kandevBinary(t)
	task := e.newTask("By hand")
	var created action.SessionCreateOut
	e.dispatch(kanban.ActionSessionCreate, action.SessionCreateIn{TaskID: task.ID}, &created)
	id := created.Session.ID
	for round := range 2 {
		c, err := client.NewStdioMCPClient(bin, []string{"KANDEV_SESSION_TOKEN=" + created.Token}, "mcp", "--backend", e.url, "--session", id)
		if err != nil {
			t.Fatalf("start kandev mcp: %v", err)
		}
		e.initialize(c)
		waitFor(t, func() bool { s := e.session(id); return s.MCPAttached && s.State == kanban.SessionRunning })
		_ = c.Close()
		waitFor(t, func() bool { return !e.session(id).MCPAttached })
		if s := e.session(id); s.State != kanban.SessionCreated {
			t.Fatalf("round %d: a hand-made session whose client went away is %s, want CREATED", round, s.State)
		}
	}
}

// TestAttachmentsReleasedAcrossRestart: a backend that stopped without
// recording its sessions' detach (killed) leaves them attached in the
// database; the next start releases them, so a hand-made session reads
// CREATED and no session reads "tools connected" for ever. A hand-made
// session that never attached is left as it was.
func TestAttachmentsReleasedAcrossRestart(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	first := newEnvWith(t, func(c *Config) { c.DataDir = dir })
	task := first.newTask("Across a restart")
	mk := func() string {
		var out action.SessionCreateOut
		first.dispatch(kanban.ActionSessionCreate, action.SessionCreateIn{TaskID: task.ID}, &out)
		return out.Session.ID
	}
	attached, waiting := mk(), mk()
	ctx := context.Background()
	// As the killed backend left it: attached to it, RUNNING.
	if _, err := first.b.store.AttachSession(ctx, attached, "backend-that-was-killed"); err != nil {
		t.Fatal(err)
	}
	if s := first.session(attached); !s.MCPAttached || s.State != kanban.SessionRunning {
		t.Fatalf("before the restart: %s attached %v", s.State, s.MCPAttached)
	}
	first.close()

	second := newEnvWith(t, func(c *Config) { c.DataDir = dir })
	if s := second.session(attached); s.MCPAttached || s.State != kanban.SessionCreated {
		t.Fatalf("after the restart: got %s attached %v, want CREATED and not attached", s.State, s.MCPAttached)
	}
	if s := second.session(waiting); s.MCPAttached || s.State != kanban.SessionCreated {
		t.Fatalf("the never-attached session: got %s attached %v", s.State, s.MCPAttached)
	}
}
