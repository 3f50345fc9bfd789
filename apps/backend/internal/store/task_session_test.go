package store

import (
	"context"
	"testing"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// conversation returns the contents of a task's messages with their
// sessions, in seq order.
func conversation(t *testing.T, s *Store, taskID string) []kanban.Message {
	t.Helper()
	l, err := s.ListMessages(context.Background(), kanban.MessageFilter{TaskID: taskID})
	if err != nil {
		t.Fatalf("list messages: %v", err)
	}
	return l.Items
}

func TestCreateSessionWithFirstMessage(t *testing.T) {
	bothEngines(t, testCreateSessionWithFirstMessage)
}

func testCreateSessionWithFirstMessage(t *testing.T) {
	f := sessionFixture(t)
	ctx := context.Background()
	appendN(t, f.s, f.sess, 2, "message", "m")
	sess, tok, err := f.s.CreateSession(ctx, kanban.SessionCreate{TaskID: f.task.ID,
		FirstMessage: &kanban.Message{Author: "user", Type: "prompt", Content: "start", Turn: 3}})
	if err != nil || tok == "" {
		t.Fatalf("create session: got token %q, %v; want a token", tok, err)
	}
	msgs := conversation(t, f.s, f.task.ID)
	if len(msgs) != 3 {
		t.Fatalf("got %d messages, want the 2 earlier ones and the first message", len(msgs))
	}
	m := msgs[2]
	if m.SessionID != sess.ID || m.TaskID != f.task.ID || m.Author != "user" || m.Type != "prompt" ||
		m.Content != "start" || m.Turn != 3 || m.ID == "" {
		t.Fatalf("got first message %+v, want the new session's prompt", m)
	}
	var seq int
	if err := f.s.stmts.QueryRowContext(ctx, `SELECT seq FROM session_messages WHERE id = ?`, m.ID).Scan(&seq); err != nil || seq != 3 {
		t.Fatalf("got seq %d, %v; want 3 (the task's next)", seq, err)
	}
}

func TestCreateTaskWithSession(t *testing.T) {
	bothEngines(t, testCreateTaskWithSession)
}

func testCreateTaskWithSession(t *testing.T) {
	f := sessionFixture(t)
	ctx := context.Background()
	sc := kanban.SessionCreate{TaskID: "ignored", Mode: kanban.ModeOffice,
		FirstMessage: &kanban.Message{Author: "user", Type: "prompt", Content: "do it"}}
	task, sess, dedup, err := f.s.CreateTaskWithSession(ctx, kanban.TaskCreate{WorkspaceID: f.b.ws.ID,
		Title: "Started", ExternalID: "ext-1"}, sc)
	if err != nil || dedup {
		t.Fatalf("create: got dedup=%v, %v; want a new task", dedup, err)
	}
	if task.WorkflowStepID != f.b.steps[0].ID || task.State != kanban.TaskTodo {
		t.Fatalf("got task %+v, want a TODO task on the start step", task)
	}
	if sess == nil || sess.TaskID != task.ID || sess.WorkspaceID != f.b.ws.ID || sess.MCPMode != kanban.ModeOffice ||
		sess.AgentProfileID == "" || sess.State != kanban.SessionCreated {
		t.Fatalf("got session %+v, want an office-mode session on the new task with the default profile", sess)
	}
	msgs := conversation(t, f.s, task.ID)
	if len(msgs) != 1 || msgs[0].SessionID != sess.ID || msgs[0].Content != "do it" {
		t.Fatalf("got messages %+v, want the session's first message", msgs)
	}

	before := snapshot(t, f.s)
	again, none, dedup, err := f.s.CreateTaskWithSession(ctx, kanban.TaskCreate{WorkspaceID: f.b.ws.ID,
		Title: "Again", ExternalID: "ext-1"}, sc)
	if err != nil || !dedup || again.ID != task.ID || none != nil {
		t.Fatalf("dedup: got task %v, session %v, dedup=%v, %v; want the existing task and no session", again, none, dedup, err)
	}
	checkSnapshot(t, f.s, before)
}

// A session that cannot be created takes the task down with it.
func TestCreateTaskWithSessionRejects(t *testing.T) {
	bothEngines(t, testCreateTaskWithSessionRejects)
}

func testCreateTaskWithSessionRejects(t *testing.T) {
	f := sessionFixture(t)
	ok := kanban.TaskCreate{WorkspaceID: f.b.ws.ID, Title: "T"}
	prompt := &kanban.Message{Author: "user", Type: "prompt", Content: "x"}
	tests := []struct {
		name string
		in   kanban.TaskCreate
		sc   kanban.SessionCreate
		code kanban.Code
	}{
		{"invalid task", kanban.TaskCreate{WorkspaceID: f.b.ws.ID, Title: "two\nlines"}, kanban.SessionCreate{FirstMessage: prompt}, kanban.CodeValidation},
		{"unknown agent profile", ok, kanban.SessionCreate{AgentProfileID: kanban.NewID(), FirstMessage: prompt}, kanban.CodeNotFound},
		{"unknown executor profile", ok, kanban.SessionCreate{ExecutorProfileID: kanban.NewID()}, kanban.CodeNotFound},
		{"invalid first message", ok, kanban.SessionCreate{FirstMessage: &kanban.Message{Author: "user", Type: "nope"}}, kanban.CodeValidation},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := snapshot(t, f.s)
			task, sess, _, err := f.s.CreateTaskWithSession(context.Background(), tt.in, tt.sc)
			wantCode(t, err, tt.code)
			if task != nil || sess != nil {
				t.Fatalf("got task %v and session %v with an error, want neither", task, sess)
			}
			checkSnapshot(t, f.s, before)
		})
	}
}
