package app

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/kandev/kandev/apps/backend/internal/action"
	"github.com/kandev/kandev/apps/backend/internal/kanban"
	"github.com/kandev/kandev/apps/backend/internal/store"
	"github.com/kandev/kandev/apps/backend/internal/ws"
)

// TestRunShutdownCancelsCallsInFlight: when Run's context ends, every call
// in flight ends with it, and Run returns within its bound: a session's
// question.ask, which would wait an hour for an answer, returns; an agent
// mid-turn is stopped, its session left as it was with the shutdown
// recorded (it resumes on the next start).
func TestRunShutdownCancelsCallsInFlight(t *testing.T) {
	t.Parallel()
	bin := kandevBinary(t)
	dir := t.TempDir()
	const tok = "operator-test-token"
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ready, done := make(chan string, 1), make(chan error, 1)
	go func() {
		done <- Run(ctx, Config{Addr: "127.0.0.1:0", DataDir: dir, Token: tok, QuestionWait: time.Hour, Out: io.Discard,
			Logger: slog.New(slog.DiscardHandler), Agents: AgentsConfig{Launch: true, Executable: bin, StopGrace: 2 * time.Second},
			Ready: func(addr string) { ready <- addr }})
	}()
	var url string
	select {
	case addr := <-ready:
		url = "http://" + addr
	case err := <-done:
		t.Fatalf("Run: %v", err)
	case <-time.After(agentWait):
		t.Fatal("the backend did not serve")
	}
	op := func(name kanban.Action, in, out any) {
		t.Helper()
		if err := Operator(context.Background(), url, tok, name, in, out); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}

	// An agent mid-turn.
	var created action.TaskCreateOut
	op(kanban.ActionTaskCreate, map[string]any{"title": "Sleeper", "description": "@sleep 60000",
		"agent_profile_id": mockProfileOf(t, op)}, &created)
	waitUntil(t, "the agent's turn runs", func() bool {
		var s kanban.Session
		op(kanban.ActionSessionGet, action.IDIn{ID: created.SessionID}, &s)
		return s.State == kanban.SessionRunning
	})

	// A session blocked in question.ask, over the WebSocket.
	asked := askInFlight(t, url, tok, op)

	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Run: got %v, want a clean shutdown", err)
		}
	case <-time.After(shutdownWait):
		t.Fatalf("Run did not return within its %s bound", shutdownWait)
	}
	select {
	case err := <-asked:
		if err == nil {
			t.Fatal("question.ask answered as if the operator had: want it cut short by the shutdown")
		}
	case <-time.After(time.Second):
		t.Fatal("question.ask still waits after Run returned")
	}

	checkLeftToResume(t, dir, created)
}

// mockProfileOf returns the id of the mock agent's default profile.
// askInFlight has a new session of the backend at url ask the operator a
// question over the WebSocket, and returns once it is pending; the call's
// end arrives on the channel.
func askInFlight(t *testing.T, url, tok string, op func(kanban.Action, any, any)) <-chan error {
	t.Helper()
	asker, err := SessionCreate(context.Background(), url, tok, "", "Asks", kanban.ModeTask)
	if err != nil {
		t.Fatal(err)
	}
	c, err := ws.Dial(context.Background(), ws.ClientConfig{URL: "ws" + strings.TrimPrefix(url, "http") + "/ws", Token: asker.Token})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	var items []kanban.QuestionItem
	if err := json.Unmarshal([]byte(askQuestions), &items); err != nil {
		t.Fatal(err)
	}
	asked := make(chan error, 1)
	go func() {
		asked <- c.Call(context.Background(), kanban.ActionQuestionAsk, action.QuestionAskIn{QuestionBundleIn: action.QuestionBundleIn{Questions: items}}, nil)
	}()
	waitUntil(t, "the question is pending", func() bool {
		var l questionPage
		op(kanban.ActionQuestionList, action.QuestionListIn{TaskID: asker.Session.TaskID}, &l)
		return len(l.Items) == 1
	})
	return asked
}

// checkLeftToResume checks, in the data dir, that the agent stopped by the
// shutdown left created's session live (to resume) with the shutdown
// recorded in its conversation.
func checkLeftToResume(t *testing.T, dir string, created action.TaskCreateOut) {
	t.Helper()
	st, err := store.Open(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = st.Close() }()
	s, err := st.GetSession(context.Background(), created.SessionID)
	if err != nil || s.State.Ended() {
		t.Fatalf("the stopped agent's session: got %v (%v), want it live, to resume", s.State, err)
	}
	l, err := st.ListMessages(context.Background(), kanban.MessageFilter{TaskID: created.Task.ID, SessionID: created.SessionID, Limit: 200})
	if err != nil {
		t.Fatal(err)
	}
	noted := false
	for _, m := range l.Items {
		noted = noted || strings.HasPrefix(m.Content, "The backend shut down and stopped the agent")
	}
	if !noted {
		t.Fatal("the agent's conversation does not record the shutdown")
	}
}

func mockProfileOf(t *testing.T, op func(kanban.Action, any, any)) string {
	t.Helper()
	var agents kanban.List[kanban.Agent]
	op(kanban.ActionAgentList, action.ListIn{Limit: 50}, &agents)
	for _, a := range agents.Items {
		if a.Name != "mock-agent" {
			continue
		}
		var profs kanban.List[kanban.AgentProfile]
		op(kanban.ActionAgentProfileList, action.AgentProfileListIn{AgentID: a.ID}, &profs)
		for _, p := range profs.Items {
			if p.IsDefault {
				return p.ID
			}
		}
	}
	t.Fatal("no default mock-agent profile")
	return ""
}

// waitUntil polls cond for up to agentWait (a bounded wait, not a timing
// assertion).
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(agentWait)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %s", what, agentWait)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
