package action

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// ParentAskOut is the result of question.ask_parent.
type ParentAskOut struct {
	QuestionID   string `json:"question_id"`
	Status       string `json:"status"`
	ParentTaskID string `json:"parent_task_id"`
	// ParentSessionID is the parent's session the question was delivered to.
	ParentSessionID string `json:"parent_session_id"`
}

// askParent stores a question of an autopilot subtask for its direct
// parent and delivers it, as a prompt, to the parent's live session, in one
// transaction. It does not wait: the parent answers with task.message
// reply_to_question_id, which becomes the asking session's next prompt.
func (s *Service) askParent(ctx context.Context, p Principal, in QuestionBundleIn) (*ParentAskOut, error) {
	sess, err := s.store.GetSession(ctx, p.SessionID)
	if err != nil {
		return nil, err
	}
	if !slices.Contains(sess.Capabilities, kanban.CapParentQuestion) {
		return nil, kanban.Errorf(kanban.CodeForbidden, "this session does not have the parent-question capability (only autopilot subtasks ask their parent)")
	}
	child, err := s.store.GetTask(ctx, p.TaskID)
	if err != nil {
		return nil, err
	}
	if !child.Autopilot || child.ParentID == "" {
		return nil, kanban.Errorf(kanban.CodeConflict, "only an autopilot subtask has a parent to ask")
	}
	if err := s.pendingRoom(ctx, sess.ID); err != nil {
		return nil, err
	}
	qctx, err := in.context()
	if err != nil {
		return nil, err
	}
	parent, err := s.store.GetTask(ctx, child.ParentID)
	if err != nil {
		return nil, err
	}
	target, err := s.liveSession(ctx, parent.ID, "")
	if err != nil {
		return nil, kanban.Errorf(kanban.CodeConflict, "the parent task has no running session to answer; the operator can start one")
	}
	id := kanban.NewID()
	deliver := kanban.Message{SessionID: target.ID, TaskID: parent.ID, Author: sender(p), Type: "prompt"}
	q, m, err := s.store.CreateQuestion(ctx, kanban.Question{ID: id, Kind: kanban.QuestionForParent, SessionID: sess.ID,
		Context: qctx, Questions: in.Questions}, func(q *kanban.Question) *kanban.Message {
		deliver.Content = parentPrompt(q, child, parent)
		return &deliver
	})
	if err != nil {
		return nil, err
	}
	s.publishMessage(m, parent.WorkspaceID, kanban.DeliveryQueued)
	s.agents.Deliver(target.ID, false)
	return &ParentAskOut{QuestionID: q.ID, Status: kanban.QuestionWaitingForParent, ParentTaskID: parent.ID, ParentSessionID: target.ID}, nil
}

// pendingRoom refuses a question from a session that already has
// maxPendingQuestions unanswered ones.
func (s *Service) pendingRoom(ctx context.Context, sessionID string) error {
	pending, err := s.store.ListQuestions(ctx, kanban.QuestionFilter{SessionID: sessionID, State: kanban.QuestionPending},
		kanban.Page{Limit: maxPendingQuestions})
	if err != nil {
		return err
	}
	if pending.NextCursor != "" || len(pending.Items) >= maxPendingQuestions {
		return kanban.Errorf(kanban.CodeConflict, "this session already has %d unanswered questions; wait for answers before asking more", maxPendingQuestions)
	}
	return nil
}

// parentPrompt is the prompt the parent's agent receives: the questions,
// and how to answer.
func parentPrompt(q *kanban.Question, child, parent *kanban.Task) string {
	items, _ := json.MarshalIndent(q.Questions, "", "  ")
	var b strings.Builder
	fmt.Fprintf(&b, "AUTOPILOT SUBTASK QUESTION\n\nSubtask: %s (%s)\nYour task: %s (%s)\nQuestion id: %s\n",
		child.Title, child.ID, parent.Title, parent.ID, q.ID)
	if c := strings.TrimSpace(q.Context); c != "" {
		fmt.Fprintf(&b, "Context:\n%s\n", c)
	}
	fmt.Fprintf(&b, "\nQuestions:\n%s\n\nAnswer with message_task_kandev: task_id %s, reply_to_question_id %s, and your answer "+
		"as the prompt. The subtask waits for it; do not ask the operator on its behalf unless you cannot decide.",
		items, child.ID, q.ID)
	return b.String()
}

// replyToParentQuestion answers a parent question of task t (the
// caller must be t's direct parent, or the operator) by delivering the
// prompt to the asking session. A question already answered delivers
// nothing and reports AlreadyAnswered, so a retried reply is harmless.
func (s *Service) replyToParentQuestion(ctx context.Context, p Principal, t *kanban.Task, in TaskMessageIn, mode string) (*TaskMessageOut, error) {
	q, err := s.store.GetQuestion(ctx, in.ReplyToQuestionID)
	if err != nil || q.Kind != kanban.QuestionForParent || q.TaskID != t.ID {
		return nil, kanban.Errorf(kanban.CodeNotFound, "reply_to_question_id: no question of this task asked of its parent has that id")
	}
	if p.Kind == Session && t.ParentID != p.TaskID {
		return nil, kanban.Errorf(kanban.CodeForbidden, "only the task's direct parent answers its questions")
	}
	if q.State != kanban.QuestionPending {
		return &TaskMessageOut{SessionID: q.SessionID, DeliveryMode: mode, AlreadyAnswered: true}, nil
	}
	sessionID := in.SessionID
	if sessionID == "" {
		if asker, err := s.store.GetSession(ctx, q.SessionID); err == nil && !asker.State.Ended() {
			sessionID = asker.ID
		}
	}
	target, err := s.liveSession(ctx, t.ID, sessionID)
	if err != nil {
		return nil, err
	}
	deliver := kanban.Message{SessionID: target.ID, TaskID: t.ID, Author: sender(p), Type: "prompt",
		Content: "Answer from your parent task to question " + q.ID + ":\n\n" + in.Prompt}
	q, m, claimed, err := s.store.ReplyParentQuestion(ctx, q.ID, in.Prompt, deliver)
	if err != nil {
		return nil, err
	}
	if !claimed {
		return &TaskMessageOut{SessionID: q.SessionID, DeliveryMode: mode, AlreadyAnswered: true}, nil
	}
	s.publishMessage(m, t.WorkspaceID, mode)
	kanban.EventQuestionAnswered.PublishContext(ctx, s.pub, SessionTopic(q.SessionID), q)
	s.agents.Deliver(target.ID, mode == kanban.DeliveryInterrupt)
	return &TaskMessageOut{Message: m, SessionID: target.ID, DeliveryMode: mode}, nil
}
