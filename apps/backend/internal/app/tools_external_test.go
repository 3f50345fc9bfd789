package app

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"

	"github.com/kandev/kandev/apps/backend/internal/action"
	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// askOutcome is what the asking agent got back.
type askOutcome struct {
	state   string
	answers []kanban.Answer
	err     error
}

const askQuestions = `[
	{"id":"db","prompt":"Which database?","options":[{"option_id":"pg","label":"Postgres","description":"server"},{"option_id":"sqlite","label":"SQLite","description":"embedded"}]},
	{"id":"name","prompt":"Project name?","options":[{"option_id":"kandev","label":"kandev","description":"keep"},{"option_id":"other","label":"other","description":"rename"}]}]`

// ask makes the session ask askQuestions and wait, in the background:
// through ask_user_question_kandev when the session has it, else by
// dispatching question.ask as the session.
func ask(e *env, s *session) <-chan askOutcome {
	done := make(chan askOutcome, 1)
	viaTool := toolNames(e.t, s.Client)["ask_user_question_kandev"]
	e.t.Logf("asking via ask_user_question_kandev: %v", viaTool)
	go func() {
		if viaTool {
			r, err := callErr(s.Client, "ask_user_question_kandev", `{"questions":`+askQuestions+`}`)
			if err != nil || r.IsError {
				done <- askOutcome{err: fmt.Errorf("ask: %v %v", err, r)}
				return
			}
			var out struct {
				Status  string          `json:"status"`
				Answers []kanban.Answer `json:"answers"`
			}
			err = json.Unmarshal([]byte(text(r)), &out)
			done <- askOutcome{state: out.Status, answers: out.Answers, err: err}
			return
		}
		var items []kanban.QuestionItem
		_ = json.Unmarshal([]byte(askQuestions), &items)
		var out action.QuestionAskOut
		p := action.Principal{Kind: action.Session, SessionID: s.ID, TaskID: s.TaskID, WorkspaceID: s.WorkspaceID}
		err := e.tryDispatch(p, kanban.ActionQuestionAsk, action.QuestionAskIn{QuestionBundleIn: action.QuestionBundleIn{Questions: items}}, &out)
		if err != nil {
			done <- askOutcome{err: err}
			return
		}
		done <- askOutcome{state: out.Question.State, answers: out.Question.Answers}
	}()
	return done
}

type questionPage struct {
	Items      []kanban.Question `json:"items"`
	NextCursor string            `json:"next_cursor"`
}

// checkPendingFilters: list_pending_questions_kandev's filters (one
// question is pending) and its refusal of a bad date.
func checkPendingFilters(e *env, ext *client.Client) {
	t := e.t
	t.Helper()
	var page questionPage
	future := time.Now().UTC().Add(time.Hour).Format(time.RFC3339)
	for args, want := range map[string]int{
		fmt.Sprintf(`{"created_since":%q}`, future): 0,
		`{"workspace_id":"other-workspace"}`:        0,
		`{"limit":1}`:                               1,
	} {
		page = questionPage{}
		callJSON(e, ext, "list_pending_questions_kandev", args, &page)
		if len(page.Items) != want {
			t.Fatalf("list %s: got %d questions, want %d", args, len(page.Items), want)
		}
	}
	refused(e, ext, "list_pending_questions_kandev", `{"created_since":"yesterday"}`,
		"invalid arguments for list_pending_questions_kandev: /created_since: not a valid date-time (format)")
}

// checkAnswerRefusals: answers must match the question (pendingID):
// offered labels, every question once.
func checkAnswerRefusals(e *env, ext *client.Client, pendingID string) {
	e.t.Helper()
	answer := func(answers string) string {
		return fmt.Sprintf(`{"pending_id":%q,"answers":%s}`, pendingID, answers)
	}
	refused(e, ext, "answer_question_kandev", answer(`[{"question_id":"db","selected_options":["mysql"]},{"question_id":"name","custom_text":"x"}]`),
		"VALIDATION_ERROR: answers[0].selected_options: item 0 is not an option_id of question db (its options: pg, sqlite)")
	refused(e, ext, "answer_question_kandev", answer(`[{"question_id":"db","selected_options":["sqlite"]}]`),
		"VALIDATION_ERROR: answers: must answer every question exactly once")
	refused(e, ext, "answer_question_kandev", answer(`[{"question_id":"db","selected_options":["sqlite","pg"]},{"question_id":"name","custom_text":"x"}]`),
		"VALIDATION_ERROR: answers[0].selected_options: must have exactly one option_id (the question is single-select)")
	refused(e, ext, "answer_question_kandev", answer(`[{"question_id":"nope","selected_options":["sqlite"]},{"question_id":"name","custom_text":"x"}]`),
		"VALIDATION_ERROR: answers: item 0 names an unknown question_id")
	refused(e, ext, "answer_question_kandev", `{"pending_id":"missing","rejected":true}`, "NOT_FOUND: question not found")
}

func TestExternalQuestionFlow(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	s := e.sessionMCP(kanban.ModeTask, "")
	ext := e.operatorMCP()
	since := time.Now().UTC().Add(-time.Minute).Format(time.RFC3339)
	waiting := ask(e, s)

	var page questionPage
	waitFor(t, func() bool {
		page = questionPage{}
		callJSON(e, ext, "list_pending_questions_kandev", fmt.Sprintf(`{"workspace_id":%q,"created_since":%q}`, s.WorkspaceID, since), &page)
		return len(page.Items) == 1
	})
	q := page.Items[0]
	if q.SessionID != s.ID || q.TaskID != s.TaskID || q.State != kanban.QuestionPending || len(q.Questions) != 2 {
		t.Fatalf("got question %+v, want the session's pending bundle of 2", q)
	}
	checkPendingFilters(e, ext)

	checkAnswerRefusals(e, ext, q.ID)

	answer := func(answers string) string {
		return fmt.Sprintf(`{"pending_id":%q,"answers":%s}`, q.ID, answers)
	}
	var res action.QuestionAnswerOut
	callJSON(e, ext, "answer_question_kandev", answer(`[{"question_id":"db","selected_options":["sqlite"]},{"question_id":"name","custom_text":"kandev-next"}]`), &res)
	if !res.Claimed || res.Question.State != kanban.QuestionAnswered {
		t.Fatalf("got claimed=%v state=%s, want the first answer to win", res.Claimed, res.Question.State)
	}
	select {
	case got := <-waiting:
		if got.err != nil {
			t.Fatalf("the agent's ask failed: %v", got.err)
		}
		want := []kanban.Answer{{QuestionID: "db", SelectedOptions: []string{"sqlite"}}, {QuestionID: "name", CustomText: "kandev-next"}}
		if got.state != kanban.QuestionAnswered || fmt.Sprint(got.answers) != fmt.Sprint(want) {
			t.Fatalf("the agent got %s %+v, want answered %+v", got.state, got.answers, want)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the agent was not unblocked by the answer")
	}
	if st := dbStr(e, `SELECT state FROM questions WHERE id = ?`, q.ID); st != kanban.QuestionAnswered {
		t.Fatalf("got stored state %s, want answered", st)
	}

	// A later answer (here a rejection) changes nothing and says so.
	before := e.fingerprint()
	res = action.QuestionAnswerOut{}
	callJSON(e, ext, "answer_question_kandev", fmt.Sprintf(`{"pending_id":%q,"rejected":true,"reject_reason":"too late"}`, q.ID), &res)
	if res.Claimed || res.Question.State != kanban.QuestionAnswered || len(res.Question.Answers) != 2 {
		t.Fatalf("got claimed=%v question %+v, want claimed=false and the first answer", res.Claimed, res.Question)
	}
	if e.fingerprint() != before {
		t.Fatal("the second answer changed the database")
	}
	page = questionPage{}
	callJSON(e, ext, "list_pending_questions_kandev", "", &page)
	if len(page.Items) != 0 {
		t.Fatalf("got %d pending questions after the answer, want 0", len(page.Items))
	}
}

func TestPendingQuestionsPaginate(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	s := e.sessionMCP(kanban.ModeTask, "")
	ext := e.operatorMCP()
	var items []kanban.QuestionItem
	_ = json.Unmarshal([]byte(askQuestions), &items)
	p := action.Principal{Kind: action.Session, SessionID: s.ID, TaskID: s.TaskID, WorkspaceID: s.WorkspaceID}
	for range 3 {
		// A 1-second wait that ends unanswered leaves the question pending.
		if err := e.tryDispatch(p, kanban.ActionQuestionAsk, action.QuestionAskIn{QuestionBundleIn: action.QuestionBundleIn{Questions: items}, WaitSeconds: 1}, nil); err != nil {
			t.Fatal(err)
		}
	}
	var seen []string
	cursor := ""
	for pages := 0; ; pages++ {
		if pages > 3 {
			t.Fatal("pagination does not end")
		}
		args := `{"limit":2}`
		if cursor != "" {
			args = fmt.Sprintf(`{"limit":2,"cursor":%q}`, cursor)
		}
		var page questionPage
		callJSON(e, ext, "list_pending_questions_kandev", args, &page)
		for _, q := range page.Items {
			seen = append(seen, q.ID)
		}
		if cursor = page.NextCursor; cursor == "" {
			break
		}
	}
	if len(seen) != 3 || seen[0] == seen[1] || seen[1] == seen[2] {
		t.Fatalf("got %v over the pages, want 3 distinct questions", seen)
	}
}

func TestConfigToolsBySessionMode(t *testing.T) {
	t.Parallel()
	e := newEnv(t)

	// A config-mode session sees and uses configuration tools, confined to
	// its workspace; external-only tools stay hidden.
	cfg := e.sessionMCP(kanban.ModeConfig, "")
	names := toolNames(t, cfg.Client)
	for _, ct := range configTools {
		external := ct.name == "list_pending_questions_kandev" || ct.name == "answer_question_kandev"
		if names[ct.name] == external {
			t.Fatalf("config mode: %s listed=%v, want %v", ct.name, !external, external)
		}
	}
	var wf action.WorkflowOut
	callJSON(e, cfg.Client, "create_workflow_kandev", `{"name":"From config session","steps":[{"name":"Only"}]}`, &wf)
	if got := dbStr(e, `SELECT workspace_id FROM workflows WHERE id = ?`, wf.Workflow.ID); got != cfg.WorkspaceID {
		t.Fatalf("got workspace %s, want the session's %s", got, cfg.WorkspaceID)
	}
	var other kanban.Workspace
	e.dispatch(kanban.ActionWorkspaceCreate, action.WorkspaceCreateIn{Name: "Other"}, &other)
	refused(e, cfg.Client, "create_workflow_kandev", fmt.Sprintf(`{"name":"x","workspace_id":%q}`, other.ID),
		"FORBIDDEN: workspace_id is outside this session's workspace")
	var task kanban.Task
	callJSON(e, cfg.Client, "update_task_state_kandev", `{"task_id":"self","state":"REVIEW"}`, &task)
	if st := dbStr(e, `SELECT state FROM tasks WHERE id = ?`, cfg.TaskID); st != "REVIEW" {
		t.Fatalf("got state %s, want REVIEW", st)
	}

	// A task-mode session neither sees nor reaches them, at either layer.
	tm := e.sessionMCP(kanban.ModeTask, "")
	names = toolNames(t, tm.Client)
	for _, ct := range configTools {
		if names[ct.name] {
			t.Fatalf("task mode lists %s", ct.name)
		}
	}
	before := e.fingerprint()
	if _, err := callErr(tm.Client, "create_workflow_kandev", `{"name":"Sneaky"}`); err == nil || !strings.Contains(err.Error(), "unknown tool") {
		t.Fatalf("got %v, want an unknown-tool protocol error", err)
	}
	p := action.Principal{Kind: action.Session, SessionID: tm.ID, TaskID: tm.TaskID, WorkspaceID: tm.WorkspaceID}
	err := e.tryDispatch(p, kanban.ActionWorkflowCreate, action.WorkflowCreateIn{Name: "Sneaky"}, nil)
	if kanban.ErrorCode(err) != kanban.CodeForbidden {
		t.Fatalf("got %v, want FORBIDDEN from the action layer", err)
	}
	if e.fingerprint() != before {
		t.Fatal("refused calls changed the database")
	}

	// Switched to config, the same session gets them.
	if _, err := e.b.svc.SetMode(t.Context(), tm.ID, kanban.ModeConfig); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool { return toolNames(t, tm.Client)["create_workflow_kandev"] })
	callJSON(e, tm.Client, "create_workflow_kandev", `{"name":"After switch"}`, &wf)
}

func TestExternalModeListsConfigTools(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	names := toolNames(t, e.operatorMCP())
	for _, ct := range configTools {
		if !names[ct.name] {
			t.Errorf("external mode does not list %s", ct.name)
		}
	}
}
