package agent

import (
	"context"
	"log/slog"
	"slices"
	"strings"
	"testing"

	acp "github.com/coder/acp-go-sdk"

	"github.com/kandev/kandev/apps/backend/internal/action"
	"github.com/kandev/kandev/apps/backend/internal/kanban"
	"github.com/kandev/kandev/apps/backend/internal/store"
)

func TestAgentEnv(t *testing.T) {
	environ := []string{"PATH=/bin", "HOME=/home/u", "KANDEV_TOKEN=op", "KANDEV_SESSION_TOKEN=s", "ANTHROPIC_API_KEY=k",
		"LC_ALL=C", "AWS_SECRET_ACCESS_KEY=x", "MY_EXTRA=1", "broken"}
	got := agentEnv(environ, append(slices.Clone(DefaultEnvAllow), "MY_EXTRA", "KANDEV_*"))
	want := []string{"PATH=/bin", "HOME=/home/u", "ANTHROPIC_API_KEY=k", "LC_ALL=C", "MY_EXTRA=1"}
	if !slices.Equal(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
}

func TestTailBufferAndRedactor(t *testing.T) {
	tb := newTailBuffer(8)
	_, _ = tb.Write([]byte("0123456789"))
	_, _ = tb.Write([]byte("ab"))
	if got := tb.String(); got != "456789ab" {
		t.Fatalf("tail %q", got)
	}
	r := newRedactor([]string{"OPENAI_API_KEY=sk-secret-123", "PATH=/usr/bin", "SHORT_TOKEN=abc"}, "session-token-xyz")
	got := r.String("key sk-secret-123 tok session-token-xyz path /usr/bin abc")
	if strings.Contains(got, "sk-secret-123") || strings.Contains(got, "session-token-xyz") || !strings.Contains(got, "/usr/bin") {
		t.Fatalf("redacted %q", got)
	}
}

// recorderFixture is a real store with one managed session.
func recorderFixture(t *testing.T) (*store.Store, *kanban.Session) {
	t.Helper()
	ctx := context.Background()
	st, err := store.Open(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	if err := action.Seed(ctx, st); err != nil {
		t.Fatal(err)
	}
	ws, err := st.ListWorkspaces(ctx, kanban.Page{Limit: 1})
	if err != nil {
		t.Fatal(err)
	}
	task, _, err := st.CreateTask(ctx, kanban.TaskCreate{WorkspaceID: ws.Items[0].ID, Title: "t", State: kanban.TaskTodo})
	if err != nil {
		t.Fatal(err)
	}
	sess, _, err := st.CreateSession(ctx, kanban.SessionCreate{TaskID: task.ID, Managed: true})
	if err != nil {
		t.Fatal(err)
	}
	return st, sess
}

func messages(t *testing.T, st *store.Store, taskID string) []kanban.Message {
	t.Helper()
	l, err := st.ListMessages(context.Background(), kanban.MessageFilter{TaskID: taskID, Limit: 200})
	if err != nil {
		t.Fatal(err)
	}
	return l.Items
}

// TestRecorderBounds: a flood of chunks is coalesced into one message cut
// at the per-message bound, and a session's total stops at its limit with
// one status message.
func TestRecorderBounds(t *testing.T) {
	st, sess := recorderFixture(t)
	published := 0
	rec := newRecorder(t.Context(), st, sess.ID, 1<<20, discardLog(), func(context.Context, *kanban.Message) { published++ })
	chunk := strings.Repeat("x", 1024)
	for range 200 {
		rec.update(acp.UpdateAgentMessageText(chunk))
	}
	rec.endTurn()
	msgs := messages(t, st, sess.TaskID)
	if len(msgs) != 1 || len(msgs[0].Content) > maxMessageBytes+len(truncMark) || !strings.HasSuffix(msgs[0].Content, truncMark) {
		t.Fatalf("got %d messages, first %d bytes", len(msgs), len(msgs[0].Content))
	}
	rec.close()

	st2, sess2 := recorderFixture(t)
	rec2 := newRecorder(t.Context(), st2, sess2.ID, 10<<10, discardLog(), func(context.Context, *kanban.Message) {})
	defer rec2.close()
	for i := range 100 {
		rec2.update(acp.UpdateAgentThoughtText(chunk))
		rec2.update(acp.StartToolCall(acp.ToolCallId(strings.Repeat("i", i%5+1)), "tool"))
	}
	rec2.endTurn()
	total, limited := 0, 0
	for _, m := range messages(t, st2, sess2.TaskID) {
		if m.Type == "status" && strings.Contains(m.Content, "recording limit") {
			limited++
			continue
		}
		total += len(m.Content)
	}
	if limited != 1 || total > 10<<10 {
		t.Fatalf("recorded %d bytes with %d limit notices", total, limited)
	}
}

func discardLog() *slog.Logger { return slog.New(slog.DiscardHandler) }
