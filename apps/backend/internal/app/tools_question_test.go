package app

import (
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/kandev/kandev/apps/backend/internal/action"
	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// noteLog records the notifications an MCP client receives.
type noteLog struct {
	mu    sync.Mutex
	notes []mcp.JSONRPCNotification
}

func (l *noteLog) add(n mcp.JSONRPCNotification) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.notes = append(l.notes, n)
}

// count returns how many notifications of method arrived.
func (l *noteLog) count(method string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, x := range l.notes {
		if x.Method == method {
			n++
		}
	}
	return n
}

// askResult is ask_user_question_kandev's structured result.
type askResult struct {
	PendingID    string          `json:"pending_id"`
	Status       string          `json:"status"`
	Rejected     bool            `json:"rejected"`
	Answers      []kanban.Answer `json:"answers"`
	RejectReason string          `json:"reject_reason"`
	Message      string          `json:"message"`
}

// pendingQuestionOf waits for the session's pending question and returns it.
func pendingQuestionOf(e *env, sessionID string) kanban.Question {
	e.t.Helper()
	var q kanban.Question
	waitFor(e.t, func() bool {
		l, err := e.b.store.ListQuestions(context.Background(), kanban.QuestionFilter{SessionID: sessionID, State: kanban.QuestionPending}, kanban.Page{})
		if err != nil || len(l.Items) == 0 {
			return false
		}
		q = l.Items[0]
		return true
	})
	return q
}

// TestAskUserQuestionAnsweredWhileWaiting: the agent blocks in the tool
// with a progress token, keep-alives arrive, the operator answers over the
// action API and the agent gets the answer as structured content.
func TestAskUserQuestionAnsweredWhileWaiting(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.progress = 50 * time.Millisecond
	s := e.sessionMCP(kanban.ModeTask, "")
	notes := &noteLog{}
	s.Client.OnNotification(notes.add)

	type outcome struct {
		res *mcp.CallToolResult
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		req := mcp.CallToolRequest{}
		req.Params.Name = "ask_user_question_kandev"
		req.Params.Arguments = json.RawMessage(`{"questions":[{"id":"db","prompt":"Which database?","multi_select":true,` +
			`"options":[{"label":"Postgres","description":"server"},{"label":"SQLite","description":"embedded"}]},` +
			`{"prompt":"Name?","options":[{"label":"kandev","description":"keep"},{"label":"other","description":"rename"}]}],"timeout_seconds":60}`)
		req.Params.Meta = &mcp.Meta{ProgressToken: "p1"}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		r, err := s.Client.CallTool(ctx, req)
		done <- outcome{r, err}
	}()
	q := pendingQuestionOf(e, s.ID)
	if len(q.Questions) != 2 || q.Questions[1].ID != "q2" || !q.Questions[0].MultiSelect || q.TaskID != s.TaskID {
		t.Fatalf("stored question: got %+v, want two items (the second with the default id q2) on the bound task", q)
	}
	waitFor(t, func() bool { return notes.count("notifications/progress") >= 1 })
	var ans action.QuestionAnswerOut
	e.dispatch(kanban.ActionQuestionAnswer, action.QuestionAnswerIn{PendingID: q.ID, Answers: []kanban.Answer{
		{QuestionID: "db", SelectedOptions: []string{"q1_opt1", "q1_opt2"}}, {QuestionID: "q2", CustomText: "kandev-next"}}}, &ans)
	if !ans.Claimed {
		t.Fatalf("answer: got claimed=false, want the first answer to win")
	}
	var o outcome
	select {
	case o = <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("the agent did not get the answer within 20s")
	}
	if o.err != nil {
		t.Fatalf("call: %v", o.err)
	}
	var got askResult
	e.decode(o.res, &got)
	checkOutputSchema(e, s.Client, "ask_user_question_kandev", []byte(text(o.res)))
	if got.PendingID != q.ID || got.Status != kanban.QuestionAnswered || len(got.Answers) != 2 || got.Answers[1].CustomText != "kandev-next" {
		t.Fatalf("result: got %+v, want both answers", got)
	}
	var again action.QuestionAnswerOut
	e.dispatch(kanban.ActionQuestionAnswer, action.QuestionAnswerIn{PendingID: q.ID, Rejected: true}, &again)
	if again.Claimed || again.Question.State != kanban.QuestionAnswered {
		t.Fatalf("second answer: got %+v, want claimed=false and the first answer kept", again)
	}
}

// TestAskUserQuestionTimesOut: with no answer the call returns "pending"
// and the question stays answerable.
func TestAskUserQuestionTimesOut(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	s := e.sessionMCP(kanban.ModeTask, "")
	var got askResult
	callJSON(e, s.Client, "ask_user_question_kandev", `{"questions":[`+askItem+`],"timeout_seconds":1}`, &got)
	if got.Status != kanban.QuestionPending || got.Message == "" || len(got.Answers) != 0 {
		t.Fatalf("result: got %+v, want pending with a message", got)
	}
	var ans action.QuestionAnswerOut
	e.dispatch(kanban.ActionQuestionAnswer, action.QuestionAnswerIn{PendingID: got.PendingID, Rejected: true, RejectReason: "not now"}, &ans)
	if !ans.Claimed || ans.Question.State != kanban.QuestionRejected {
		t.Fatalf("late answer: got %+v, want it to claim the still-pending question", ans)
	}
}

// TestAskUserQuestionNeedsCapability: a session whose capabilities lack
// user-question neither lists nor calls the tool.
func TestAskUserQuestionNeedsCapability(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	var created action.SessionCreateOut
	e.dispatch(kanban.ActionSessionCreate, action.SessionCreateIn{TaskID: e.newTask("quiet").ID, Capabilities: []string{}}, &created)
	m, err := StartSessionMCP(context.Background(), MCPConfig{BackendURL: e.url, SessionID: created.Session.ID, Token: created.Token,
		Logger: slog.New(slog.NewTextHandler(e.logs, nil))})
	if err != nil {
		t.Fatalf("start session MCP: %v", err)
	}
	t.Cleanup(m.Close)
	c, err := client.NewInProcessClient(m.Server().MCP())
	if err != nil {
		t.Fatal(err)
	}
	e.initialize(c)
	if names := toolNames(t, c); names["ask_user_question_kandev"] || !names["step_complete_kandev"] {
		t.Fatalf("without user-question: ask listed=%v, want false (and the task tools listed)", names["ask_user_question_kandev"])
	}
	before := e.fingerprint()
	if _, err := callErr(c, "ask_user_question_kandev", `{"questions":[`+askItem+`]}`); err == nil || !strings.Contains(err.Error(), "unknown tool") {
		t.Fatalf("got %v, want an unknown-tool protocol error", err)
	}
	if e.fingerprint() != before {
		t.Fatal("the refused call changed the database")
	}
}

// TestSetTaskTitleSwitchesMode: in task-title-pending the agent sets the
// title; the session becomes task mode, exactly one list_changed arrives
// and the tool is gone (listed and callable).
func TestSetTaskTitleSwitchesMode(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	s := e.sessionMCP(kanban.ModeTaskTitlePending, "")
	notes := &noteLog{}
	s.Client.OnNotification(notes.add)
	if !toolNames(t, s.Client)["set_task_title_kandev"] {
		t.Fatal("set_task_title_kandev not listed in task-title-pending")
	}
	var out action.SetTitleOut
	callJSON(e, s.Client, "set_task_title_kandev", `{"title":"Fix the login redirect"}`, &out)
	if out.Mode != kanban.ModeTask || dbStr(e, `SELECT title FROM tasks WHERE id = ?`, s.TaskID) != "Fix the login redirect" {
		t.Fatalf("set title: got %+v, want the new title and mode task", out)
	}
	if got := dbStr(e, `SELECT mcp_mode FROM task_sessions WHERE id = ?`, s.ID); got != string(kanban.ModeTask) {
		t.Fatalf("stored mode: got %s, want task", got)
	}
	waitFor(t, func() bool { return s.MCP.Server().Profile().Mode == kanban.ModeTask })
	// Notifications reach the client in order: once a sentinel sent after
	// the switch has arrived, every list_changed of the switch has too.
	s.MCP.Server().MCP().SendNotificationToAllClients("test/sentinel", nil)
	waitFor(t, func() bool { return notes.count("test/sentinel") == 1 })
	if n := notes.count("notifications/tools/list_changed"); n != 1 {
		t.Fatalf("list_changed notifications: got %d, want 1", n)
	}
	names := toolNames(t, s.Client)
	if names["set_task_title_kandev"] || !names["step_complete_kandev"] {
		t.Fatalf("task mode tools: set_task_title listed=%v, step_complete listed=%v; want false, true",
			names["set_task_title_kandev"], names["step_complete_kandev"])
	}
	if _, err := callErr(s.Client, "set_task_title_kandev", `{"title":"Again"}`); err == nil {
		t.Fatal("set_task_title_kandev still callable after the switch")
	}
	p := action.Principal{Kind: action.Session, SessionID: s.ID, TaskID: s.TaskID, WorkspaceID: s.WorkspaceID}
	if err := e.tryDispatch(p, kanban.ActionTaskSetTitle, action.SetTitleIn{Title: "Again"}, nil); kanban.ErrorCode(err) != kanban.CodeForbidden {
		t.Fatalf("task.set_title after the switch: got %v, want FORBIDDEN", err)
	}
}
