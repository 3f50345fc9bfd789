package app

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/kandev/kandev/apps/backend/internal/action"
	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// waitOnStep waits (as long as agents may take) until the task is on step stepID.
func (e *env) waitOnStep(taskID, stepID string) {
	e.t.Helper()
	deadline := time.Now().Add(agentWait)
	for time.Now().Before(deadline) {
		if e.task(taskID).WorkflowStepID == stepID {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	e.t.Fatalf("task never reached step %s (on %s): %s", stepID, e.task(taskID).WorkflowStepID, dumpConversation(e.conversation(taskID)))
}

// decisionScript is a mock agent's script that records a decision.
func decisionScript(t *testing.T, decision, reason string) string {
	return "@tool record_step_decision_kandev " + mustJSON(t, map[string]any{"decision": decision, "reason": reason})
}

// officeBoard is the Office template imported with two mock reviewer
// agents on its Review step (quorum all, rejections back to Work).
type officeBoard struct {
	e                                     *env
	workflowID                            string
	backlog, work, review, approval, done kanban.WorkflowStep
	primary, reviewerA, reviewerB         kanban.AgentProfile
}

func newOfficeBoard(t *testing.T, e *env) *officeBoard {
	var imp action.WorkflowImportOut
	e.dispatch(kanban.ActionWorkflowImport, map[string]any{"template_id": "office-default"}, &imp)
	st := imp.Workflows[0].Steps
	b := &officeBoard{e: e, workflowID: imp.Workflows[0].Workflow.ID, backlog: st[0], work: st[1], review: st[2], approval: st[3], done: st[4],
		primary: *e.profileOf("mock-agent")}
	e.dispatch(kanban.ActionAgentProfileCreate, map[string]any{"agent_id": b.primary.AgentID, "name": "reviewer-a"}, &b.reviewerA)
	e.dispatch(kanban.ActionAgentProfileCreate, map[string]any{"agent_id": b.primary.AgentID, "name": "reviewer-b"}, &b.reviewerB)
	return b
}

// reviewers sets what reviewer A decides (B approves) when woken.
func (b *officeBoard) reviewers(t *testing.T, aDecision, aReason string) {
	b.e.dispatch(kanban.ActionWorkflowStepUpdate, map[string]any{"step_id": b.review.ID, "approval": map[string]any{
		"participants": []map[string]any{
			{"role": "reviewer", "agent_profile_id": b.reviewerA.ID, "instructions": decisionScript(t, aDecision, aReason)},
			{"role": "reviewer", "agent_profile_id": b.reviewerB.ID, "instructions": decisionScript(t, "approved", "Reads well.")},
		},
		"quorum": "all", "reject_step_id": b.work.ID}}, nil)
}

// TestOfficeFlow: the Office template with mock agents. A task goes from
// Backlog to Work, where its primary agent works and signals
// step_complete_kandev; in Review two reviewer agents (quorum all) are
// woken, one rejects and the task goes back to Work with the reason as
// the primary agent's next prompt; an operator's comment (over the
// WebSocket) wakes the primary agent exactly once, whose turn sends the
// task to Review again, where both approve; in Approval the operator
// approves over the WebSocket and the task is Done.
func TestOfficeFlow(t *testing.T) {
	t.Parallel()
	e := newAgentEnv(t)
	b := newOfficeBoard(t, e)
	b.reviewers(t, "rejected", "Missing tests for the empty input.")
	var created action.TaskCreateOut
	e.dispatch(kanban.ActionTaskCreate, map[string]any{"title": "Office task", "workflow_id": b.workflowID,
		"workflow_step_id": b.backlog.ID, "agent_profile_id": b.primary.ID, "start_agent": false,
		"description": "@say Working on it.\n@tool step_complete_kandev {\"summary\":\"First version\"}"}, &created)
	id := created.Task.ID
	e.dispatch(kanban.ActionTaskMove, map[string]any{"task_id": id, "workflow_step_id": b.work.ID}, nil)

	// Round 1: reviewer A rejects; the reason reaches the primary agent.
	rejection := e.waitMessage(id, "prompt", "Your work was rejected in Review")
	if !strings.Contains(rejection.Content, "reviewer: Missing tests for the empty input.") {
		t.Fatalf("rejection prompt %q lacks the reason", rejection.Content)
	}
	e.waitOnStep(id, b.work.ID)
	var primary kanban.Session
	e.dispatch(kanban.ActionSessionGet, action.IDIn{ID: rejection.SessionID}, &primary)
	if kanban.IsParticipantSession(primary.Name) || primary.AgentProfileID != b.primary.ID {
		t.Fatalf("the rejection went to session %+v, want the primary agent's", primary)
	}

	// Round 2: A approves this time; a comment wakes the primary agent.
	b.reviewers(t, "approved", "Tests are there now.")
	wsc := e.wsClient(e.token, nil)
	var comment kanban.Comment
	body := "Please add the tests.\n@tool step_complete_kandev {\"summary\":\"With tests\"}"
	if err := wsc.Call(context.Background(), kanban.ActionTaskCommentAdd, map[string]any{"task_id": id, "body": body}, &comment); err != nil {
		t.Fatal(err)
	}
	if comment.Author != kanban.CommentAuthorOperator || comment.TaskID != id {
		t.Fatalf("comment %+v", comment)
	}
	e.waitOnStep(id, b.approval.ID)
	e.wokenOnce(id, primary.ID, "Please add the tests.")

	// Approval: the operator approves over the WebSocket.
	var dec action.StepDecideOut
	if err := wsc.Call(context.Background(), kanban.ActionStepDecide, map[string]any{"task_id": id, "decision": "approved", "reason": "Ship it."}, &dec); err != nil {
		t.Fatal(err)
	}
	if dec.Quorum == nil || !dec.Quorum.Counted || dec.Quorum.Outcome != kanban.QuorumApproved || dec.Quorum.ToStepID != b.done.ID {
		t.Fatalf("operator decision %+v", dec.Quorum)
	}
	e.waitOnStep(id, b.done.ID)
	var comments kanban.List[kanban.Comment]
	e.dispatch(kanban.ActionTaskCommentList, map[string]any{"task_id": id}, &comments)
	if len(comments.Items) != 1 || comments.Items[0].ID != comment.ID {
		t.Fatalf("comments %+v", comments.Items)
	}
}

// wokenOnce checks that the comment containing text was shown once in the
// task's conversation and delivered once, to session sessionID.
func (e *env) wokenOnce(taskID, sessionID, text string) {
	e.t.Helper()
	wakes, shown := 0, 0
	for _, m := range e.conversation(taskID) {
		if !strings.Contains(m.Content, text) {
			continue
		}
		switch m.Type {
		case "prompt":
			wakes++
			if m.SessionID != sessionID {
				e.t.Fatalf("the comment woke session %s, want %s", m.SessionID, sessionID)
			}
		case "comment":
			shown++
		}
	}
	if wakes != 1 || shown != 1 {
		e.t.Fatalf("the comment woke the agent %d times and is shown %d times, want 1 and 1: %s", wakes, shown, dumpConversation(e.conversation(taskID)))
	}
}

// TestOfficeAgentError: on the Office template, a primary agent that
// exits with code 3 fails its session; on_agent_error wakes the primary
// agent again, in a new session told why, once.
func TestOfficeAgentError(t *testing.T) {
	t.Parallel()
	e := newAgentEnv(t)
	_, steps := e.fromTemplate("office-default", "Office")
	task := e.mockTask(steps["Work"].WorkflowID, "Crashing task", "@exit 3")
	woken := e.waitMessage(task.ID, "prompt", "An agent session of your task failed")
	var sessions kanban.List[kanban.Session]
	e.dispatch(kanban.ActionSessionList, map[string]any{"task_id": task.ID}, &sessions)
	if len(sessions.Items) != 2 {
		t.Fatalf("%d sessions, want the failed one and the one woken", len(sessions.Items))
	}
	for _, s := range sessions.Items {
		switch {
		case s.ID == woken.SessionID && s.State.Ended():
			t.Fatalf("the woken session %s has ended (%s)", s.ID, s.State)
		case s.ID != woken.SessionID && s.State != kanban.SessionFailed:
			t.Fatalf("the first session is %s, want FAILED", s.State)
		}
	}
	e.waitState(woken.SessionID, kanban.SessionIdle)
	if n := e.count(task.ID, "prompt", "An agent session of your task failed"); n != 1 {
		t.Fatalf("woken %d times, want once", n)
	}
}

// TestOfficeRefusals: a step approval naming an agent profile that does
// not exist, or a reject step of another workflow, is refused and changes
// nothing; a comment on a task outside a session's tree is FORBIDDEN; a
// decision by someone who is no participant is recorded and does not
// count.
func TestOfficeRefusals(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	_, steps := e.fromTemplate("office-default", "Office")
	review := steps["Review"]
	op := e.operatorMCP()
	elsewhere := e.newTask("x").WorkflowStepID // a step of another workflow
	mine, other := e.sessionMCP(kanban.ModeOffice, ""), e.newTask("Someone else's")
	before := e.fingerprint()
	for _, c := range []struct{ args, want string }{
		{mustJSON(t, map[string]any{"step_id": review.ID, "approval": map[string]any{"quorum": "all",
			"participants": []map[string]any{{"role": "reviewer", "agent_profile_id": "no-such-profile"}}}}), "agent profile"},
		{mustJSON(t, map[string]any{"step_id": review.ID, "approval": map[string]any{"quorum": "all", "reject_step_id": elsewhere,
			"participants": []map[string]any{{"role": "reviewer", "operator": true}}}}), "reject_step_id"},
		{mustJSON(t, map[string]any{"step_id": review.ID, "approval": map[string]any{"quorum": "most",
			"participants": []map[string]any{{"role": "reviewer", "operator": true}}}}), "quorum"},
	} {
		res := e.call(op, "update_workflow_step_kandev", c.args)
		if !res.IsError || !strings.Contains(text(res), c.want) {
			t.Fatalf("update %s: got %s, want an error about %s", c.args, text(res), c.want)
		}
	}
	if after := e.fingerprint(); after != before {
		t.Fatal("a refused update changed the database")
	}

	res := e.call(mine.Client, "add_task_comment_kandev", mustJSON(t, map[string]any{"task_id": other.ID, "body": "hi"}))
	if !res.IsError || !strings.Contains(text(res), "FORBIDDEN") && !strings.Contains(text(res), "comments on its task") {
		t.Fatalf("comment on another task: %s", text(res))
	}
	var c kanban.Comment
	e.decode(e.call(mine.Client, "add_task_comment_kandev", `{"body":"Started."}`), &c)
	if c.TaskID != mine.TaskID || c.Author != "session:"+mine.ID {
		t.Fatalf("comment %+v", c)
	}
	if n := dbStr(e, `SELECT COUNT(*) FROM task_comments`); n != "1" {
		t.Fatalf("%s comments, want only the allowed one", n)
	}
	var dec action.StepDecideOut
	e.decode(e.call(mine.Client, "record_step_decision_kandev", `{"decision":"approved","reason":"Fine by me."}`), &dec)
	if dec.Quorum == nil || dec.Quorum.Counted {
		t.Fatalf("a non-participant's decision: %+v", dec.Quorum)
	}
}
