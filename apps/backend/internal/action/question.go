package action

import (
	"context"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// maxPendingQuestions bounds the unanswered questions of one session.
const maxPendingQuestions = 10

// QuestionBundleIn is the payload of question.ask_parent: the questions
// and their shared context.
type QuestionBundleIn struct {
	Questions []kanban.QuestionItem `json:"questions,omitzero"`
	// Context is shared background; ContextParagraphs, when non-empty,
	// replaces it, joined with blank lines.
	Context           string   `json:"context,omitzero"`
	ContextParagraphs []string `json:"context_paragraphs,omitzero"`
}

// QuestionAskIn is the payload of question.ask: a bundle and how long to
// wait for its answer.
type QuestionAskIn struct {
	QuestionBundleIn
	// WaitSeconds bounds the wait (0: the server's maximum).
	WaitSeconds int `json:"wait_seconds,omitzero"`
}

// context returns the bundle's shared context.
func (in QuestionBundleIn) context() (string, error) {
	if len(in.ContextParagraphs) == 0 {
		return in.Context, nil
	}
	// The count and each paragraph's length are the contract's; their
	// joined length is a rule of the whole the schema cannot state.
	joined := strings.Join(in.ContextParagraphs, "\n\n")
	if utf8.RuneCountInString(joined) > kanban.MaxQuestionContext {
		return "", kanban.FieldError("context_paragraphs", "joined, longer than %d characters", kanban.MaxQuestionContext)
	}
	return joined, nil
}

// QuestionAskOut is the result of question.ask.
type QuestionAskOut struct {
	Question *kanban.Question `json:"question"`
	// Answered is false when the wait ended before an answer; the question
	// stays answerable.
	Answered bool `json:"answered"`
}

// QuestionAnswerIn is the payload of question.answer.
type QuestionAnswerIn struct {
	PendingID    string          `json:"pending_id,omitzero"`
	Answers      []kanban.Answer `json:"answers,omitzero"`
	Rejected     bool            `json:"rejected,omitzero"`
	RejectReason string          `json:"reject_reason,omitzero"`
}

// QuestionAnswerOut is the result of question.answer.
type QuestionAnswerOut struct {
	Question *kanban.Question `json:"question"`
	// Claimed is false when another answer won first.
	Claimed bool `json:"claimed"`
}

// QuestionListIn is the payload of question.list.
type QuestionListIn struct {
	WorkspaceID string `json:"workspace_id,omitzero"`
	TaskID      string `json:"task_id,omitzero"`
	// Kind is user (default: questions for operators) or parent.
	Kind         string `json:"kind,omitzero"`
	State        string `json:"state,omitzero"`
	CreatedSince string `json:"created_since,omitzero"`
	Limit        int    `json:"limit,omitzero"`
	Cursor       string `json:"cursor,omitzero"`
}

func (s *Service) registerQuestions(r *Registry) {
	a := Register(r, kanban.ActionQuestionAsk, AllowSession, s.ask)
	a.Blocking = true
	Register(r, kanban.ActionQuestionAnswer, AllowOperator, func(ctx context.Context, _ Principal, in QuestionAnswerIn) (*QuestionAnswerOut, error) {
		q, claimed, err := s.store.AnswerQuestion(ctx, in.PendingID, in.Answers, in.Rejected, in.RejectReason)
		if err != nil {
			return nil, err
		}
		if claimed {
			s.questions.Wake(q.ID)
			kanban.EventQuestionAnswered.Publish(s.pub, WorkspaceTopic(q.WorkspaceID), q)
			kanban.EventQuestionAnswered.Publish(s.pub, SessionTopic(q.SessionID), q)
		}
		return &QuestionAnswerOut{Question: q, Claimed: claimed}, nil
	})
	Register(r, kanban.ActionQuestionGet, AllowOperator|AllowSession, func(ctx context.Context, p Principal, in IDIn) (*kanban.Question, error) {
		q, err := s.store.GetQuestion(ctx, in.ID)
		if err != nil {
			return nil, err
		}
		if p.Kind == Session && q.SessionID != p.SessionID {
			return nil, kanban.Errorf(kanban.CodeForbidden, "question belongs to another session")
		}
		return q, nil
	})
	Register(r, kanban.ActionQuestionList, AllowOperator, func(ctx context.Context, _ Principal, in QuestionListIn) (*kanban.List[kanban.Question], error) {
		if in.Kind == "" {
			in.Kind = kanban.QuestionForUser
		}
		return s.store.ListQuestions(ctx, kanban.QuestionFilter{WorkspaceID: in.WorkspaceID, TaskID: in.TaskID, Kind: in.Kind,
			State: in.State, CreatedSince: in.CreatedSince}, kanban.Page{Limit: in.Limit, Cursor: in.Cursor})
	})
	Register(r, kanban.ActionQuestionAskParent, AllowSession, s.askParent)
}

// ask stores the question, then waits (bounded) for the first answer.
func (s *Service) ask(ctx context.Context, p Principal, in QuestionAskIn) (*QuestionAskOut, error) {
	wait := s.qWait
	if in.WaitSeconds > 0 && time.Duration(in.WaitSeconds)*time.Second < wait {
		wait = time.Duration(in.WaitSeconds) * time.Second
	}
	sess, err := s.store.GetSession(ctx, p.SessionID)
	if err != nil {
		return nil, err
	}
	if !slices.Contains(sess.Capabilities, kanban.CapUserQuestion) {
		return nil, kanban.Errorf(kanban.CodeForbidden, "this session does not have the user-question capability")
	}
	if err := s.pendingRoom(ctx, sess.ID); err != nil {
		return nil, err
	}
	qctx, err := in.context()
	if err != nil {
		return nil, err
	}
	q, _, err := s.store.CreateQuestion(ctx, kanban.Question{Kind: kanban.QuestionForUser, SessionID: p.SessionID,
		Context: qctx, Questions: in.Questions}, nil)
	if err != nil {
		return nil, err
	}
	woken := s.questions.Add(q.ID)
	defer s.questions.Remove(q.ID, woken)
	s.agents.Waiting(p.SessionID, +1)
	defer s.agents.Waiting(p.SessionID, -1)
	kanban.EventQuestionCreated.Publish(s.pub, WorkspaceTopic(q.WorkspaceID), q)
	kanban.EventQuestionCreated.Publish(s.pub, SessionTopic(q.SessionID), q)
	// An answer may have landed between CreateQuestion and add.
	if cur, err := s.store.GetQuestion(ctx, q.ID); err == nil && cur.State != kanban.QuestionPending {
		return &QuestionAskOut{Question: cur, Answered: true}, nil
	}
	timer := time.NewTimer(wait)
	defer timer.Stop()
	select {
	case <-woken:
	case <-timer.C:
	case <-ctx.Done():
		return nil, kanban.Errorf(kanban.CodeUnavailable, "stopped waiting for an answer; the question stays answerable")
	}
	// Re-read: the answer is stored before waiters wake, and a timeout may
	// race with an answer.
	q, err = s.store.GetQuestion(context.WithoutCancel(ctx), q.ID)
	if err != nil {
		return nil, err
	}
	return &QuestionAskOut{Question: q, Answered: q.State != kanban.QuestionPending}, nil
}

// Waiters lets a call wait until another wakes it by id (question.ask
// for question.answer; an agent's permission request for its resolution).
type Waiters struct {
	mu sync.Mutex
	m  map[string]chan struct{}
}

// NewWaiters returns an empty set of waiters.
func NewWaiters() *Waiters { return &Waiters{m: map[string]chan struct{}{}} }

// Add registers a waiter for id and returns the channel Wake closes.
func (w *Waiters) Add(id string) chan struct{} {
	w.mu.Lock()
	defer w.mu.Unlock()
	ch := make(chan struct{})
	w.m[id] = ch
	return ch
}

// Remove forgets the waiter ch of id (a later Add's waiter stays).
func (w *Waiters) Remove(id string, ch chan struct{}) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.m[id] == ch {
		delete(w.m, id)
	}
}

// Wake closes id's waiter channel, if any.
func (w *Waiters) Wake(id string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if ch, ok := w.m[id]; ok {
		close(ch)
		delete(w.m, id)
	}
}
