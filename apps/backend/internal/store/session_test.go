package store

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/kandev/kandev/apps/backend/internal/action"
	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// fixture is a seeded store with a board, one task and one session on it.
type fixture struct {
	s     *Store
	dir   string
	b     board
	task  *kanban.Task
	sess  *kanban.Session
	token string
}

// sessionFixture seeds a fresh store (agents, executors), creates a board
// with one task and opens a default session on it.
func sessionFixture(t *testing.T) *fixture {
	t.Helper()
	s := newTestStore(t)
	ctx := context.Background()
	if err := action.Seed(ctx, s); err != nil {
		t.Fatalf("seed: %v", err)
	}
	f := &fixture{s: s, b: newBoard(t, s, "Test")}
	if s.Engine() == SQLite {
		var file string
		if err := s.stmts.QueryRowContext(ctx, `SELECT file FROM pragma_database_list WHERE name = 'main'`).Scan(&file); err != nil {
			t.Fatalf("database file: %v", err)
		}
		f.dir = filepath.Dir(file)
	}
	f.task = mustTask(t, s, f.b, "", "First task")
	var err error
	f.sess, f.token, err = s.CreateSession(ctx, kanban.SessionCreate{TaskID: f.task.ID})
	if err != nil {
		t.Fatalf("create session: %v", err)
	}
	return f
}

// newSession opens another default session on task.
func (f *fixture) newSession(t *testing.T, taskID string) *kanban.Session {
	t.Helper()
	sess, _, err := f.s.CreateSession(context.Background(), kanban.SessionCreate{TaskID: taskID})
	if err != nil {
		t.Fatalf("create session: %v", err)
	}
	return sess
}

func TestCreateSessionDefaults(t *testing.T) {
	bothEngines(t, testCreateSessionDefaults)
}

func testCreateSessionDefaults(t *testing.T) {
	f := sessionFixture(t)
	ctx := context.Background()
	def, err := f.s.DefaultAgentProfile(ctx)
	if err != nil {
		t.Fatalf("default agent profile: %v", err)
	}
	execDef, err := f.s.DefaultExecutorProfile(ctx)
	if err != nil {
		t.Fatalf("default executor profile: %v", err)
	}
	got := f.sess
	checks := []struct{ name, got, want string }{
		{"task_id", got.TaskID, f.task.ID},
		{"workspace_id", got.WorkspaceID, f.b.ws.ID},
		{"agent_profile_id", got.AgentProfileID, def.ID},
		{"executor_profile_id", got.ExecutorProfileID, execDef.ID},
		{"state", string(got.State), string(kanban.SessionCreated)},
		{"mode", string(got.MCPMode), string(kanban.ModeTask)},
		{"capabilities", fmt.Sprint(got.Capabilities), "[user-question]"},
		{"token length", fmt.Sprint(len(f.token)), "64"},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s: got %q, want %q", c.name, c.got, c.want)
		}
	}
	if got.MCPAttached || got.LastAttachedAt != nil {
		t.Errorf("got attached=%v last_attached_at=%v, want a detached new session", got.MCPAttached, got.LastAttachedAt)
	}
}

// TestCreateSessionWritesItsOwner: a managed session's owner (the backend
// that runs its agent) is written by the INSERT that creates it, alone or
// with its task, so that no other backend can take it over in between.
func TestCreateSessionWritesItsOwner(t *testing.T) {
	bothEngines(t, testCreateSessionWritesItsOwner)
}

func testCreateSessionWritesItsOwner(t *testing.T) {
	s := newTestStore(t)
	b := newBoard(t, s, "Owners")
	ctx := context.Background()
	alone, _, err := s.CreateSession(ctx, kanban.SessionCreate{TaskID: mustTask(t, s, b, "", "alone").ID, Managed: true, Owner: "backend-a"})
	if err != nil {
		t.Fatal(err)
	}
	_, withTask, _, err := s.CreateTaskWithSession(ctx, kanban.TaskCreate{WorkspaceID: b.ws.ID, Title: "with its task"},
		kanban.SessionCreate{Managed: true, Owner: "backend-b"})
	if err != nil {
		t.Fatal(err)
	}
	for id, want := range map[string]string{alone.ID: "backend-a", withTask.ID: "backend-b"} {
		var got string
		if err := s.stmts.QueryRowContext(ctx, `SELECT owner_id FROM task_sessions WHERE id = ?`, id).Scan(&got); err != nil || got != want {
			t.Errorf("session %s: got owner %q (%v), want %q", id, got, err, want)
		}
	}
}

func TestCreateSessionCapabilities(t *testing.T) {
	bothEngines(t, testCreateSessionCapabilities)
}

func testCreateSessionCapabilities(t *testing.T) {
	f := sessionFixture(t)
	ctx := context.Background()
	def, err := f.s.DefaultAgentProfile(ctx)
	if err != nil {
		t.Fatalf("default agent profile: %v", err)
	}
	off := false
	if _, err := f.s.UpdateAgentProfile(ctx, def.ID, kanban.AgentProfileUpdate{UserQuestion: &off}); err != nil {
		t.Fatalf("update profile: %v", err)
	}
	tests := []struct {
		name string
		caps []string
		want []string
	}{
		{"profile turned user questions off", nil, []string{}},
		{"explicit empty list", []string{}, []string{}},
		{"explicit user-question", []string{kanban.CapUserQuestion}, []string{kanban.CapUserQuestion}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sess, _, err := f.s.CreateSession(ctx, kanban.SessionCreate{TaskID: f.task.ID, Capabilities: tt.caps})
			if err != nil {
				t.Fatalf("create session: %v", err)
			}
			if !slices.Equal(sess.Capabilities, tt.want) || sess.Capabilities == nil {
				t.Fatalf("got capabilities %#v, want %#v", sess.Capabilities, tt.want)
			}
		})
	}
}

func TestCreateSessionRejects(t *testing.T) {
	bothEngines(t, testCreateSessionRejects)
}

func testCreateSessionRejects(t *testing.T) {
	f := sessionFixture(t)
	tests := []struct {
		name string
		in   kanban.SessionCreate
		code kanban.Code
	}{
		// The mode and capability enums are session.create's contract's.
		{"unknown task", kanban.SessionCreate{TaskID: kanban.NewID()}, kanban.CodeNotFound},
		{"unknown agent profile", kanban.SessionCreate{TaskID: f.task.ID, AgentProfileID: kanban.NewID()}, kanban.CodeNotFound},
		{"unknown executor profile", kanban.SessionCreate{TaskID: f.task.ID, ExecutorProfileID: kanban.NewID()}, kanban.CodeNotFound},
		{"first message without author", kanban.SessionCreate{TaskID: f.task.ID,
			FirstMessage: &kanban.Message{Type: "prompt", Content: "x"}}, kanban.CodeValidation},
		{"first message of unknown type", kanban.SessionCreate{TaskID: f.task.ID,
			FirstMessage: &kanban.Message{Author: "user", Type: "Prompt", Content: "x"}}, kanban.CodeValidation},
		{"first message on unknown task", kanban.SessionCreate{TaskID: kanban.NewID(),
			FirstMessage: &kanban.Message{Author: "user", Type: "prompt", Content: "x"}}, kanban.CodeNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := snapshot(t, f.s)
			_, tok, err := f.s.CreateSession(context.Background(), tt.in)
			wantCode(t, err, tt.code)
			if tok != "" {
				t.Fatalf("got token %q with an error, want none", tok)
			}
			checkSnapshot(t, f.s, before)
		})
	}
}

func TestSessionTokenHashAtRest(t *testing.T) {
	bothEngines(t, testSessionTokenHashAtRest)
}

func testSessionTokenHashAtRest(t *testing.T) {
	f := sessionFixture(t)
	ctx := context.Background()
	var stored string
	if err := f.s.stmts.QueryRowContext(ctx, `SELECT token_hash FROM task_sessions WHERE id = ?`, f.sess.ID).Scan(&stored); err != nil {
		t.Fatalf("read token_hash: %v", err)
	}
	sum := sha256.Sum256([]byte(f.token))
	if want := hex.EncodeToString(sum[:]); stored != want {
		t.Fatalf("got token_hash %q, want hex(sha256(token)) %q", stored, want)
	}
	rows, err := f.s.stmts.QueryContext(ctx, `SELECT id, task_id, workspace_id, COALESCE(agent_profile_id, ''),
		COALESCE(executor_profile_id, ''), state, mcp_mode, capabilities, token_hash FROM task_sessions`)
	if err != nil {
		t.Fatalf("read sessions: %v", err)
	}
	defer rows.Close()
	for rows.Next() {
		cols := make([]string, 9)
		ptrs := make([]any, len(cols))
		for i := range cols {
			ptrs[i] = &cols[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatalf("scan: %v", err)
		}
		for i, c := range cols {
			if c == f.token {
				t.Fatalf("got the plain token in column %d of task_sessions, want only its hash", i)
			}
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatalf("rows: %v", err)
	}
	for _, name := range []string{"kandev.db", "kandev.db-wal"} {
		if f.dir == "" {
			break // PostgreSQL: the files are the server's
		}
		b, err := os.ReadFile(filepath.Join(f.dir, name))
		if err != nil && !os.IsNotExist(err) {
			t.Fatalf("read %s: %v", name, err)
		}
		if bytes.Contains(b, []byte(f.token)) {
			t.Fatalf("got the plain token in %s, want only its hash", name)
		}
	}
}

func TestSessionByToken(t *testing.T) {
	bothEngines(t, testSessionByToken)
}

func testSessionByToken(t *testing.T) {
	f := sessionFixture(t)
	ctx := context.Background()
	got, err := f.s.SessionByToken(ctx, f.token)
	if err != nil {
		t.Fatalf("session by token: %v", err)
	}
	if got.ID != f.sess.ID {
		t.Fatalf("got session %s, want %s", got.ID, f.sess.ID)
	}
	wrong := []byte(f.token)
	wrong[0] ^= 1
	for _, tok := range []string{"", string(wrong), f.token + "0", f.sess.ID} {
		_, err := f.s.SessionByToken(ctx, tok)
		wantCode(t, err, kanban.CodeUnauthorized)
	}

	rotated, err := f.s.RotateSessionToken(ctx, f.sess.ID)
	if err != nil {
		t.Fatalf("rotate: %v", err)
	}
	if rotated == f.token || len(rotated) != 64 {
		t.Fatalf("got rotated token of length %d equal to old: %v, want a fresh 64-char token", len(rotated), rotated == f.token)
	}
	_, err = f.s.SessionByToken(ctx, f.token)
	wantCode(t, err, kanban.CodeUnauthorized)
	if got, err := f.s.SessionByToken(ctx, rotated); err != nil || got.ID != f.sess.ID {
		t.Fatalf("got %v, %v for the rotated token, want session %s", got, err, f.sess.ID)
	}
	_, err = f.s.RotateSessionToken(ctx, kanban.NewID())
	wantCode(t, err, kanban.CodeNotFound)
}

func TestListSessionsNewestFirst(t *testing.T) {
	bothEngines(t, testListSessionsNewestFirst)
}

func testListSessionsNewestFirst(t *testing.T) {
	f := sessionFixture(t)
	ctx := context.Background()
	want := []string{f.sess.ID}
	for range 4 {
		want = append(want, f.newSession(t, f.task.ID).ID)
	}
	other := mustTask(t, f.s, f.b, "", "Other task")
	f.newSession(t, other.ID)
	slices.Reverse(want)

	var got []string
	p := kanban.Page{Limit: 2}
	for range 10 {
		l, err := f.s.ListSessions(ctx, f.task.ID, p)
		if err != nil {
			t.Fatalf("list sessions: %v", err)
		}
		for _, x := range l.Items {
			got = append(got, x.ID)
		}
		if l.NextCursor == "" {
			break
		}
		p.Cursor = l.NextCursor
	}
	if !slices.Equal(got, want) {
		t.Fatalf("got sessions %v, want %v", got, want)
	}
	_, err := f.s.ListSessions(ctx, f.task.ID, kanban.Page{Cursor: "not-a-cursor"})
	wantCode(t, err, kanban.CodeValidation)
	_, err = f.s.ListSessions(ctx, f.task.ID, kanban.Page{Limit: kanban.MaxLimit + 1})
	wantCode(t, err, kanban.CodeValidation)
	_, err = f.s.ListSessions(ctx, kanban.NewID(), kanban.Page{})
	wantCode(t, err, kanban.CodeNotFound)
}

func TestSetSessionModeAndState(t *testing.T) {
	bothEngines(t, testSetSessionModeAndState)
}

func testSetSessionModeAndState(t *testing.T) {
	f := sessionFixture(t)
	ctx := context.Background()
	tests := []struct {
		name string
		call func() (*kanban.Session, error)
		code kanban.Code // "" means success
		mode kanban.Mode
		st   kanban.SessionState
	}{
		{"config mode", func() (*kanban.Session, error) { return f.s.SetSessionMode(ctx, f.sess.ID, kanban.ModeConfig) },
			"", kanban.ModeConfig, kanban.SessionCreated},
		{"mode of missing session", func() (*kanban.Session, error) { return f.s.SetSessionMode(ctx, "nope", kanban.ModeTask) },
			kanban.CodeNotFound, "", ""},
		{"completed state", func() (*kanban.Session, error) {
			return f.s.SetSessionState(ctx, f.sess.ID, kanban.SessionCompleted)
		}, "", kanban.ModeConfig, kanban.SessionCompleted},
		{"state near-miss refused", func() (*kanban.Session, error) { return f.s.SetSessionState(ctx, f.sess.ID, "running") },
			kanban.CodeValidation, "", ""},
		{"state of missing session", func() (*kanban.Session, error) {
			return f.s.SetSessionState(ctx, "nope", kanban.SessionFailed)
		}, kanban.CodeNotFound, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before, err := f.s.GetSession(ctx, f.sess.ID)
			if err != nil {
				t.Fatalf("get session: %v", err)
			}
			got, err := tt.call()
			if tt.code != "" {
				wantCode(t, err, tt.code)
				after, _ := f.s.GetSession(ctx, f.sess.ID)
				if after.MCPMode != before.MCPMode || after.State != before.State || !after.UpdatedAt.Equal(before.UpdatedAt) {
					t.Fatalf("got session %+v after a failed call, want unchanged %+v", after, before)
				}
				return
			}
			if err != nil {
				t.Fatalf("got error %v, want success", err)
			}
			if got.MCPMode != tt.mode || got.State != tt.st {
				t.Fatalf("got mode %s state %s, want %s %s", got.MCPMode, got.State, tt.mode, tt.st)
			}
		})
	}
}

func TestAttachSession(t *testing.T) {
	bothEngines(t, testAttachSession)
}

func testAttachSession(t *testing.T) {
	f := sessionFixture(t)
	ctx := context.Background()
	got, err := f.s.AttachSession(ctx, f.sess.ID, "backend")
	if err != nil {
		t.Fatalf("attach: %v", err)
	}
	if !got.MCPAttached || got.LastAttachedAt == nil || got.State != kanban.SessionRunning {
		t.Fatalf("got attached=%v last_attached_at=%v state=%s, want true, set, RUNNING",
			got.MCPAttached, got.LastAttachedAt, got.State)
	}
	got, err = f.s.DetachSession(ctx, f.sess.ID)
	if err != nil {
		t.Fatalf("detach: %v", err)
	}
	// A session made by hand whose agent went away waits for one again.
	if got.MCPAttached || got.LastDetachedAt == nil || got.State != kanban.SessionCreated {
		t.Fatalf("got attached=%v last_detached_at=%v state=%s, want false, set, CREATED",
			got.MCPAttached, got.LastDetachedAt, got.State)
	}
	if _, err := f.s.SetSessionState(ctx, f.sess.ID, kanban.SessionCompleted); err != nil {
		t.Fatalf("set state: %v", err)
	}
	got, err = f.s.AttachSession(ctx, f.sess.ID, "backend")
	if err != nil {
		t.Fatalf("attach: %v", err)
	}
	if got.State != kanban.SessionCompleted {
		t.Fatalf("got state %s after attaching a completed session, want COMPLETED", got.State)
	}
	_, err = f.s.AttachSession(ctx, kanban.NewID(), "backend")
	wantCode(t, err, kanban.CodeNotFound)
}

func TestCancelSessionsIsAtomic(t *testing.T) {
	t.Parallel()
	bothEngines(t, testCancelSessionsIsAtomic)
}

func testCancelSessionsIsAtomic(t *testing.T) {
	t.Parallel()
	s := newTestStore(t)
	b := newBoard(t, s, "W")
	task := mustTask(t, s, b, "", "child")
	ctx := context.Background()
	var ids []string
	for range 3 {
		sess, _, err := s.CreateSession(ctx, kanban.SessionCreate{TaskID: task.ID})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, sess.ID)
	}
	if _, err := s.SetSessionState(ctx, ids[0], kanban.SessionCompleted); err != nil {
		t.Fatal(err)
	}
	// A bad note refuses the whole call: nothing is cancelled.
	if _, err := s.CancelSessions(ctx, task.ID, kanban.Message{Author: "op", Type: "no-such-type"}); kanban.ErrorCode(err) != kanban.CodeValidation {
		t.Fatalf("got %v, want VALIDATION_ERROR", err)
	}
	for _, id := range ids[1:] {
		if sess, _ := s.GetSession(ctx, id); sess.State == kanban.SessionCancelled {
			t.Fatal("a refused cancel changed a session")
		}
	}
	got, err := s.CancelSessions(ctx, task.ID, kanban.Message{Author: "op", Type: "status", Content: "stopped"})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].State != kanban.SessionCancelled || got[1].State != kanban.SessionCancelled {
		t.Fatalf("got %+v, want the 2 live sessions cancelled", got)
	}
	msgs, err := s.ListMessages(ctx, kanban.MessageFilter{TaskID: task.ID, Types: []string{"status"}})
	if err != nil || len(msgs.Items) != 2 {
		t.Fatalf("got %d status notes (%v), want 2", len(msgs.Items), err)
	}
	if again, err := s.CancelSessions(ctx, task.ID, kanban.Message{Author: "op", Type: "status"}); err != nil || len(again) != 0 {
		t.Fatalf("second cancel: got %d, %v; want none", len(again), err)
	}
}

// TestCreateSessionUnlessEnded: a session created unless another has
// ended is refused (CONFLICT, nothing written) once that one was
// cancelled, and created while it is live.
func TestCreateSessionUnlessEnded(t *testing.T) {
	bothEngines(t, func(t *testing.T) {
		f := sessionFixture(t)
		ctx := context.Background()
		if _, _, err := f.s.CreateSession(ctx, kanban.SessionCreate{TaskID: f.task.ID, UnlessEnded: f.sess.ID}); err != nil {
			t.Fatalf("create while the origin is live: %v", err)
		}
		if _, err := f.s.CancelSession(ctx, f.sess.ID, kanban.Message{Author: "operator", Type: "status", Content: "Stopped"}); err != nil {
			t.Fatal(err)
		}
		before := countRows(t, f.s, "task_sessions")
		_, _, err := f.s.CreateSession(ctx, kanban.SessionCreate{TaskID: f.task.ID, UnlessEnded: f.sess.ID})
		wantCode(t, err, kanban.CodeConflict)
		if n := countRows(t, f.s, "task_sessions"); n != before {
			t.Fatalf("%d sessions after the refusal, want %d", n, before)
		}
	})
}
