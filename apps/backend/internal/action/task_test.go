package action

import (
	"context"
	"testing"
	"time"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

func TestSessionConfinedToWorkspace(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	mine := h.task("mine")
	sess := h.session(mine, kanban.ModeTask)
	ws, wf, other := h.otherBoard()
	cases := []struct {
		action kanban.Action
		in     any
	}{
		{kanban.ActionTaskGet, IDIn{ID: other.ID}},
		{kanban.ActionTaskUpdate, map[string]any{"task_id": other.ID, "title": "stolen"}},
		{kanban.ActionTaskMove, map[string]any{"task_id": other.ID, "workflow_step_id": h.steps[1].ID}},
		{kanban.ActionTaskArchive, TaskRefIn{TaskID: other.ID}},
		{kanban.ActionTaskDelete, TaskRefIn{TaskID: other.ID}},
		{kanban.ActionTaskList, map[string]any{"workspace_id": ws.ID}},
		{kanban.ActionTaskCreate, map[string]any{"title": "x", "workspace_id": ws.ID}},
		{kanban.ActionTaskCreate, map[string]any{"title": "x", "parent_id": other.ID}},
		{kanban.ActionTaskDependencyAdd, map[string]any{"depends_on_task_id": other.ID}},
		{kanban.ActionWorkflowGet, IDIn{ID: wf.ID}},
		{kanban.ActionWorkflowStepList, map[string]any{"workflow_id": wf.ID}},
		{kanban.ActionSessionList, map[string]any{"task_id": other.ID}},
		{kanban.ActionMessageList, map[string]any{"task_id": other.ID}},
		{kanban.ActionPlanCreate, map[string]any{"task_id": other.ID, "content": "x"}},
		{kanban.ActionDocumentWrite, map[string]any{"task_id": other.ID, "document_key": "notes", "content": "x"}},
		{kanban.ActionArtifactCreate, map[string]any{"task_id": other.ID, "kind": kanban.ArtifactWalkthrough,
			"data": map[string]any{"steps": []any{map[string]any{"file": "a.go", "line": 1, "text": "t"}}}}},
		{kanban.ActionRepositoryList, map[string]any{"workspace_id": ws.ID}},
	}
	for _, c := range cases {
		h.refuse(sess, c.action, c.in, kanban.CodeForbidden)
	}
	// Its own task stays reachable.
	got := call[kanban.Task](h, sess, kanban.ActionTaskGet, IDIn{ID: "self"})
	if got.ID != mine.ID {
		t.Errorf("task.get self: got %s, want %s", got.ID, mine.ID)
	}
}

func TestSessionRefusedOperatorActionsUnlessConfigMode(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	task := h.task("t")
	sess := h.session(task, kanban.ModeTask)
	create := map[string]any{"name": "By agent"}
	h.refuse(sess, kanban.ActionWorkflowCreate, create, kanban.CodeForbidden)
	h.refuse(sess, kanban.ActionTaskSetState, TaskStateIn{TaskID: task.ID, State: kanban.TaskReview}, kanban.CodeForbidden)
	h.refuse(sess, kanban.ActionSessionSetMode, SetModeIn{ID: sess.SessionID, Mode: kanban.ModeConfig}, kanban.CodeForbidden)
	h.refuse(sess, kanban.ActionWorkspaceCreate, WorkspaceCreateIn{Name: "x"}, kanban.CodeForbidden)
	// Session-only actions are refused to the operator.
	h.refuse(operator, kanban.ActionQuestionAsk, map[string]any{"questions": []any{}}, kanban.CodeForbidden)
	h.refuse(operator, kanban.ActionSessionAttach, `{}`, kanban.CodeForbidden)

	call[kanban.Session](h, operator, kanban.ActionSessionSetMode, SetModeIn{ID: sess.SessionID, Mode: kanban.ModeConfig})
	out := call[WorkflowOut](h, sess, kanban.ActionWorkflowCreate, create)
	if out.Workflow.WorkspaceID != h.ws {
		t.Errorf("workflow created by config session: got workspace %s, want %s", out.Workflow.WorkspaceID, h.ws)
	}
	call[kanban.Task](h, sess, kanban.ActionTaskSetState, TaskStateIn{TaskID: task.ID, State: kanban.TaskReview})
	// Config mode does not grant operator-only actions.
	h.refuse(sess, kanban.ActionSessionSetMode, SetModeIn{ID: sess.SessionID, Mode: kanban.ModeTask}, kanban.CodeForbidden)
	h.refuse(sess, kanban.ActionWorkspaceCreate, WorkspaceCreateIn{Name: "x"}, kanban.CodeForbidden)
	// Nor another workspace.
	ws, _, _ := h.otherBoard()
	h.refuse(sess, kanban.ActionWorkflowCreate, map[string]any{"name": "x", "workspace_id": ws.ID}, kanban.CodeForbidden)
}

// questionPayload is a valid one-question bundle.
func questionPayload(wait int) map[string]any {
	return map[string]any{"wait_seconds": wait, "questions": []map[string]any{{
		"id": "q1", "prompt": "Which database?", "options": []map[string]any{
			{"label": "SQLite", "description": "embedded"}, {"label": "Postgres", "description": "server"}},
	}}}
}

// pendingQuestion waits until the workspace has a pending question.
func (h *harness) pendingQuestion() kanban.Question {
	h.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		l := call[kanban.List[kanban.Question]](h, operator, kanban.ActionQuestionList, map[string]any{"state": kanban.QuestionPending})
		if len(l.Items) > 0 {
			return l.Items[0]
		}
		time.Sleep(10 * time.Millisecond)
	}
	h.t.Fatalf("no pending question after 10s")
	return kanban.Question{}
}

func TestQuestionAskBlocksUntilAnswered(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	sess := h.session(h.task("t"), kanban.ModeTask)
	type result struct {
		out QuestionAskOut
		err error
	}
	done := make(chan result, 1)
	in := payload(t, questionPayload(0))
	go func() {
		raw, err := h.reg.Dispatch(context.Background(), sess, kanban.ActionQuestionAsk, in)
		if err != nil {
			done <- result{err: err}
			return
		}
		done <- result{out: *raw.(*QuestionAskOut)}
	}()
	q := h.pendingQuestion()
	select {
	case r := <-done:
		t.Fatalf("question.ask returned before an answer: %+v", r)
	default:
	}
	first := []kanban.Answer{{QuestionID: "q1", SelectedOptions: []string{"q1_opt1"}}}
	ans := call[QuestionAnswerOut](h, operator, kanban.ActionQuestionAnswer, QuestionAnswerIn{PendingID: q.ID, Answers: first})
	if !ans.Claimed {
		t.Errorf("first answer: got claimed=false, want true")
	}
	select {
	case r := <-done:
		if r.err != nil {
			t.Fatalf("question.ask: got error %v, want answer", r.err)
		}
		if !r.out.Answered || r.out.Question.State != kanban.QuestionAnswered {
			t.Errorf("question.ask: got answered=%v state=%s, want answered", r.out.Answered, r.out.Question.State)
		}
		if len(r.out.Question.Answers) != 1 || r.out.Question.Answers[0].SelectedOptions[0] != "q1_opt1" {
			t.Errorf("question.ask answers: got %+v, want SQLite", r.out.Question.Answers)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("question.ask still blocked 10s after the answer")
	}
	second := []kanban.Answer{{QuestionID: "q1", SelectedOptions: []string{"q1_opt2"}}}
	ans = call[QuestionAnswerOut](h, operator, kanban.ActionQuestionAnswer, QuestionAnswerIn{PendingID: q.ID, Answers: second})
	if ans.Claimed {
		t.Errorf("second answer: got claimed=true, want false")
	}
	if got := ans.Question.Answers[0].SelectedOptions[0]; got != "q1_opt1" {
		t.Errorf("answer after second answer: got %s, want the first (SQLite)", got)
	}
	if !h.pub.has(WorkspaceTopic(h.ws), kanban.EventQuestionAnswered.Name()) {
		t.Errorf("question.answered: not published to the workspace")
	}
}

func TestQuestionAskTimesOut(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	sess := h.session(h.task("t"), kanban.ModeTask)
	out := call[QuestionAskOut](h, sess, kanban.ActionQuestionAsk, questionPayload(1))
	if out.Answered || out.Question.State != kanban.QuestionPending {
		t.Fatalf("question.ask after timeout: got answered=%v state=%s, want unanswered pending", out.Answered, out.Question.State)
	}
	ans := call[QuestionAnswerOut](h, operator, kanban.ActionQuestionAnswer,
		QuestionAnswerIn{PendingID: out.Question.ID, Answers: []kanban.Answer{{QuestionID: "q1", CustomText: "either"}}})
	if !ans.Claimed {
		t.Errorf("answer after the wait ended: got claimed=false, want true (the question stays answerable)")
	}
}

func TestTaskCreateExternalIDDedupe(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	in := map[string]any{"title": "Import issue 42", "prompt": "fix it", "external_id": "gh-42"}
	first := call[TaskCreateOut](h, operator, kanban.ActionTaskCreate, in)
	if first.Deduplicated || first.SessionID == "" {
		t.Fatalf("first create: got deduplicated=%v session=%q, want new task with a session", first.Deduplicated, first.SessionID)
	}
	before := h.snapshot()
	second := call[TaskCreateOut](h, operator, kanban.ActionTaskCreate, in)
	if !second.Deduplicated || second.Task.ID != first.Task.ID || second.SessionID != first.SessionID {
		t.Errorf("retry: got %+v, want deduplicated task %s with session %s", second, first.Task.ID, first.SessionID)
	}
	// The retry changes nothing: not even the audit log.
	h.assertUnchanged(before, "deduplicated task.create")
}

func TestTaskCreateStartsAgentWithPrompt(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	out := call[TaskCreateOut](h, operator, kanban.ActionTaskCreate, map[string]any{"title": "Add login", "prompt": "Implement OAuth login"})
	if out.SessionID == "" {
		t.Fatalf("task.create: got no session, want one (start_agent defaults to true)")
	}
	msgs := call[kanban.List[kanban.Message]](h, operator, kanban.ActionMessageList, map[string]any{"task_id": out.Task.ID})
	if len(msgs.Items) == 0 || msgs.Items[0].Content != "Implement OAuth login" || msgs.Items[0].Type != "prompt" {
		t.Fatalf("first message: got %+v, want the prompt", msgs.Items)
	}
	if msgs.Items[0].SessionID != out.SessionID {
		t.Errorf("prompt session: got %s, want %s", msgs.Items[0].SessionID, out.SessionID)
	}
	if !h.pub.has(WorkspaceTopic(h.ws), kanban.EventTaskCreated.Name()) || !h.pub.has(WorkspaceTopic(h.ws), kanban.EventSessionCreated.Name()) {
		t.Errorf("task.create: task.created and session.created not both published")
	}
	quiet := call[TaskCreateOut](h, operator, kanban.ActionTaskCreate, map[string]any{"title": "No agent", "start_agent": false})
	if quiet.SessionID != "" {
		t.Errorf("start_agent=false: got session %s, want none", quiet.SessionID)
	}
	h.refuse(operator, kanban.ActionTaskCreate, map[string]any{"title": "x", "agent_profile_id": "missing"}, kanban.CodeNotFound)
}

func TestTaskLifecycle(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	task := h.task("move me")
	moved := call[kanban.Task](h, operator, kanban.ActionTaskMove, TaskMoveIn{TaskID: task.ID, WorkflowStepID: h.steps[1].ID})
	if moved.WorkflowStepID != h.steps[1].ID {
		t.Errorf("task.move: got step %s, want %s", moved.WorkflowStepID, h.steps[1].ID)
	}
	if !h.pub.has(WorkspaceTopic(h.ws), kanban.EventTaskMoved.Name()) {
		t.Errorf("task.moved: not published")
	}
	h.refuse(operator, kanban.ActionTaskMove, map[string]any{"task_id": task.ID}, kanban.CodeValidation)
	sess := h.session(task, kanban.ModeTask)
	h.refuse(sess, kanban.ActionTaskDelete, TaskRefIn{TaskID: "self"}, kanban.CodeForbidden)
	h.refuse(operator, kanban.ActionTaskGet, IDIn{ID: "self"}, kanban.CodeValidation)
	a1 := call[kanban.Task](h, operator, kanban.ActionTaskArchive, TaskRefIn{TaskID: task.ID})
	a2 := call[kanban.Task](h, operator, kanban.ActionTaskArchive, TaskRefIn{TaskID: task.ID})
	if a1.ArchivedAt == nil || a2.ArchivedAt == nil || !a1.ArchivedAt.Equal(*a2.ArchivedAt) {
		t.Errorf("task.archive twice: got %v then %v, want the same archived time", a1.ArchivedAt, a2.ArchivedAt)
	}
	call[Deleted](h, operator, kanban.ActionTaskDelete, TaskRefIn{TaskID: task.ID})
	h.refuse(operator, kanban.ActionTaskGet, IDIn{ID: task.ID}, kanban.CodeNotFound)
}
