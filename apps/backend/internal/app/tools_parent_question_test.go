package app

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/client"

	"github.com/kandev/kandev/apps/backend/internal/action"
	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// checkOnlyParentAnswers: only the direct parent (over its client parent)
// answers the child's question; the operator's answer tool and a stranger
// are refused, and so is a reply to an unknown question.
func checkOnlyParentAnswers(e *env, parent *client.Client, childTaskID, questionID string) {
	e.t.Helper()
	ext := e.operatorMCP()
	refused(e, ext, "answer_question_kandev", fmt.Sprintf(`{"pending_id":%q,"rejected":true}`, questionID),
		"CONFLICT: this question was asked of the parent task; its agent answers with message_task_kandev reply_to_question_id")
	stranger := e.sessionMCP(kanban.ModeTask, "")
	refused(e, stranger.Client, "message_task_kandev", fmt.Sprintf(`{"task_id":%q,"prompt":"Postgres","reply_to_question_id":%q}`,
		childTaskID, questionID), "FORBIDDEN: only the task's direct parent answers its questions")
	refused(e, parent, "message_task_kandev", fmt.Sprintf(`{"task_id":%q,"prompt":"x","reply_to_question_id":%q}`,
		childTaskID, kanban.NewID()), "NOT_FOUND: reply_to_question_id: no question of this task asked of its parent has that id")
}

// TestAskParentQuestion: an autopilot subtask sees ask_parent_question_kandev
// instead of ask_user_question_kandev; its question reaches the parent's
// session as a prompt at once; the parent's reply with reply_to_question_id
// is recorded and delivered to the child exactly once; nobody else can
// answer it, and bad calls change nothing.
func TestAskParentQuestion(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	parent := e.sessionMCP(kanban.ModeTask, "")
	var created struct {
		Task kanban.Task `json:"task"`
	}
	callJSON(e, parent.Client, "create_task_kandev",
		`{"title":"Autopilot child","prompt":"Do it","parent_id":"self","autopilot":true,"start_agent":false}`, &created)
	if !created.Task.Autopilot {
		t.Fatalf("got task %+v, want autopilot", created.Task)
	}
	child := e.sessionMCP(kanban.ModeTask, created.Task.ID)
	names := toolNames(t, child.Client)
	if !names["ask_parent_question_kandev"] || names["ask_user_question_kandev"] {
		t.Fatalf("autopilot child tools: parent=%v user=%v, want only the parent question", names["ask_parent_question_kandev"], names["ask_user_question_kandev"])
	}
	if toolNames(t, parent.Client)["ask_parent_question_kandev"] {
		t.Fatal("a task that is not an autopilot subtask lists ask_parent_question_kandev")
	}

	ask := `{"questions":[{"id":"db","title":"Database","prompt":"Which database?","options":[` +
		`{"label":"SQLite","description":"embedded"},{"label":"Postgres","description":"server"}]}],` +
		`"context_paragraphs":["We ship Friday.","Keep it small."]}`
	var asked action.ParentAskOut
	callJSON(e, child.Client, "ask_parent_question_kandev", ask, &asked)
	if asked.Status != "waiting_for_parent" || asked.ParentTaskID != parent.TaskID || asked.ParentSessionID != parent.ID {
		t.Fatalf("got %+v, want waiting_for_parent on the parent's session", asked)
	}
	q, err := e.b.store.GetQuestion(context.Background(), asked.QuestionID)
	if err != nil || q.Kind != kanban.QuestionForParent || q.Context != "We ship Friday.\n\nKeep it small." || q.Questions[0].Options[1].OptionID != "q1_opt2" {
		t.Fatalf("stored question %+v, %v: want a parent question with the joined context", q, err)
	}
	prompt := lastMessage(e, parent.TaskID)
	if !strings.Contains(prompt.Content, asked.QuestionID) || !strings.Contains(prompt.Content, "Which database?") ||
		prompt.Author != "task:"+created.Task.ID || prompt.SessionID != parent.ID {
		t.Fatalf("parent got %+v, want the question as a prompt from the child", prompt)
	}

	checkOnlyParentAnswers(e, parent.Client, created.Task.ID, q.ID)

	reply := fmt.Sprintf(`{"task_id":%q,"prompt":"Use SQLite.","reply_to_question_id":%q}`, created.Task.ID, q.ID)
	var out action.TaskMessageOut
	callJSON(e, parent.Client, "message_task_kandev", reply, &out)
	if out.AlreadyAnswered || out.Message == nil || out.SessionID != child.ID || !strings.Contains(out.Message.Content, "Use SQLite.") {
		t.Fatalf("got %+v, want the reply delivered to the asking session", out)
	}
	if q, _ = e.b.store.GetQuestion(context.Background(), q.ID); q.State != kanban.QuestionAnswered || q.Reply != "Use SQLite." {
		t.Fatalf("got %+v, want answered with the reply", q)
	}
	// A retried reply delivers nothing.
	before := e.fingerprint()
	out = action.TaskMessageOut{}
	callJSON(e, parent.Client, "message_task_kandev", reply, &out)
	if !out.AlreadyAnswered || out.Message != nil || e.fingerprint() != before {
		t.Fatalf("got %+v, want already_answered and no change", out)
	}

	// A session that is not an autopilot subtask cannot call it.
	if r, err := callErr(parent.Client, "ask_parent_question_kandev", ask); err == nil && !r.IsError {
		t.Fatal("a non-autopilot session could call ask_parent_question_kandev")
	}
}

// TestAutopilotRootHasNoQuestionTools: an autopilot task without a parent
// asks nobody.
func TestAutopilotRootHasNoQuestionTools(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	var out action.TaskCreateOut
	f := false
	e.dispatch(kanban.ActionTaskCreate, action.TaskCreateIn{Title: "Root", StartAgent: &f, Autopilot: true}, &out)
	s := e.sessionMCP(kanban.ModeTask, out.Task.ID)
	names := toolNames(t, s.Client)
	if names["ask_parent_question_kandev"] || names["ask_user_question_kandev"] {
		t.Fatalf("an autopilot root lists question tools: %v", names)
	}
}

// lastMessage returns the newest message of a task's conversation.
func lastMessage(e *env, taskID string) kanban.Message {
	e.t.Helper()
	l, err := e.b.store.ListMessages(context.Background(), kanban.MessageFilter{TaskID: taskID, Desc: true, Limit: 1})
	if err != nil || len(l.Items) == 0 {
		e.t.Fatalf("messages of %s: %v %v", taskID, l, err)
	}
	return l.Items[0]
}

// TestStartWhenUnblockedDefault: with blocked_by and no start_when_unblocked,
// create_task records the intent to start instead of starting now (the
// reference's default); false creates the edges with no automatic start.
func TestStartWhenUnblockedDefault(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	c := e.operatorMCP()
	blocker := e.newTask("Blocker")
	for _, tc := range []struct {
		args string
		want bool
	}{
		{fmt.Sprintf(`{"title":"Chained","blocked_by":[%q]}`, blocker.ID), true},
		{fmt.Sprintf(`{"title":"Edges only","blocked_by":[%q],"start_when_unblocked":false}`, blocker.ID), false},
		{`{"title":"Unchained","start_agent":false}`, false},
	} {
		var out action.TaskCreateOut
		callJSON(e, c, "create_task_kandev", tc.args, &out)
		if out.Task.StartWhenUnblocked != tc.want || out.SessionID != "" {
			t.Fatalf("%s: got start_when_unblocked=%v session %q, want %v and no session yet", tc.args, out.Task.StartWhenUnblocked, out.SessionID, tc.want)
		}
	}
}
