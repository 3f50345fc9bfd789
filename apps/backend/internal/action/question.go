package action

import (
	"context"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
	"github.com/kandev/kandev/apps/backend/internal/schema"
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

var _ = declare(Def[QuestionAskIn, *QuestionAskOut]{
	Name:     kanban.ActionQuestionAsk,
	Effect:   Writes,
	Allow:    AllowSession,
	Blocking: true,
	Schema: askInput("the operator", schema.P{
		"wait_seconds": schema.Int("Longest wait for an answer in seconds; 0: the server's maximum.").Range(0, kanban.MaxQuestionWait),
	}),
	Run: (*Service).ask,
})

var _ = declare(Def[QuestionAnswerIn, *QuestionAnswerOut]{
	Name:   kanban.ActionQuestionAnswer,
	Effect: Writes,
	Tool:   "answer_question_kandev",
	Allow:  AllowOperator,
	Schema: schema.Obj("", schema.P{
		"pending_id": idProp("The question bundle to answer (its id from list_pending_questions_kandev)."),
		"answers": schema.Arr("One answer per question of the bundle, in any order; omit when rejecting.", schema.Obj("The answer to one question.", schema.P{
			"question_id": schema.Str("Id of the question within the bundle (e.g. \"q1\").").Len(1, kanban.MaxQuestionIDLen),
			"selected_options": schema.Arr("option_id values of the chosen options (exactly one unless the question is "+
				"multi-select).", schema.Str("An offered option's option_id.").Len(1, kanban.MaxQuestionIDLen)).Items(1, kanban.MaxQuestionOptions).Unique(),
			"custom_text": schema.Str("A free-text answer instead of selected options.").Len(1, kanban.MaxAnswerCustomLen),
		}, "question_id")).Items(1, kanban.MaxQuestionItems),
		"rejected":      schema.Bool("Reject the whole bundle instead of answering it (the agent is told).").Default(false),
		"reject_reason": schema.Str("Why, shown to the agent; only with rejected=true.").Len(0, kanban.MaxAnswerReasonLen),
	}, "pending_id"),
	Run: func(s *Service, ctx context.Context, _ Principal, in QuestionAnswerIn) (*QuestionAnswerOut, error) {
		q, claimed, err := s.store.AnswerQuestion(ctx, in.PendingID, in.Answers, in.Rejected, in.RejectReason)
		if err != nil {
			return nil, err
		}
		if claimed {
			s.questions.Wake(q.ID)
			kanban.EventQuestionAnswered.PublishContext(ctx, s.pub, WorkspaceTopic(q.WorkspaceID), q)
			kanban.EventQuestionAnswered.PublishContext(ctx, s.pub, SessionTopic(q.SessionID), q)
		}
		return &QuestionAnswerOut{Question: q, Claimed: claimed}, nil
	},
})

var _ = declare(Def[IDIn, *kanban.Question]{
	Name:   kanban.ActionQuestionGet,
	Effect: Reads,
	Allow:  AllowOperator | AllowSession,
	Schema: idOnly("The question bundle."),
	Run: func(s *Service, ctx context.Context, p Principal, in IDIn) (*kanban.Question, error) {
		q, err := s.store.GetQuestion(ctx, in.ID)
		if err != nil {
			return nil, err
		}
		if p.Kind == Session && q.SessionID != p.SessionID {
			return nil, kanban.Errorf(kanban.CodeForbidden, "question belongs to another session")
		}
		return q, nil
	},
})

var _ = declare(Def[QuestionListIn, *kanban.List[kanban.Question]]{
	Name:   kanban.ActionQuestionList,
	Effect: Reads,
	Allow:  AllowOperator,
	Schema: schema.Obj("", pageProps(schema.P{
		"workspace_id":  idProp("Only questions asked in this workspace."),
		"created_since": schema.Str("Only questions asked at or after this time (RFC 3339, e.g. 2026-01-31T12:00:00Z).").Len(1, kanban.MaxTimestampLen).Format("date-time"),
		"task_id":       idProp("Only questions of this task."),
		"kind":          schema.Enum("Who is asked (default user).", kanban.QuestionKinds...),
		"state":         schema.Enum("Only questions in this state.", kanban.QuestionStates...),
	})),
	Run: func(s *Service, ctx context.Context, _ Principal, in QuestionListIn) (*kanban.List[kanban.Question], error) {
		if in.Kind == "" {
			in.Kind = kanban.QuestionForUser
		}
		return s.store.ListQuestions(ctx, kanban.QuestionFilter{WorkspaceID: in.WorkspaceID, TaskID: in.TaskID, Kind: in.Kind,
			State: in.State, CreatedSince: in.CreatedSince}, kanban.Page{Limit: in.Limit, Cursor: in.Cursor})
	},
})

var _ = declare(Def[QuestionBundleIn, *ParentAskOut]{
	Name:   kanban.ActionQuestionAskParent,
	Effect: Writes,
	Tool:   "ask_parent_question_kandev",
	Allow:  AllowSession,
	Schema: askInput("the parent task's agent", nil),
	Run:    (*Service).askParent,
})

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
	kanban.EventQuestionCreated.PublishContext(ctx, s.pub, WorkspaceTopic(q.WorkspaceID), q)
	kanban.EventQuestionCreated.PublishContext(ctx, s.pub, SessionTopic(q.SessionID), q)
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

// askInput is the payload of both question actions: 1–4 questions with
// options and shared context, shown to asked.
func askInput(asked string, extra schema.P) schema.S {
	props := schema.P{
		"questions": schema.Arr("The questions, shown together.", schema.Obj("One question.", schema.P{
			"id": schema.Str("Key of its answer; default q1..q4 by position.").
				Pattern(kanban.IDPattern),
			"title":  schema.Str("Short label above the prompt, e.g. \"Database\".").Len(1, kanban.MaxQuestionTitleLen),
			"prompt": schema.Str("The question text shown to "+asked+".").Len(1, kanban.MaxQuestionTextLen),
			"multi_select": schema.Bool("Allow several options (default: exactly one).").
				Default(false),
			"options": schema.Arr("Concrete choices in display order, distinct labels.", schema.Obj("One option.", schema.P{
				"option_id":   schema.Str("Id answers name it by; default q<n>_opt<m> (1-based positions).").Pattern(kanban.IDPattern),
				"label":       schema.Str("1–5 words shown as the option.").Len(1, kanban.MaxOptionLabelLen),
				"description": schema.Str("What choosing it means.").Len(1, kanban.MaxOptionDescLen),
			}, "label", "description")).Items(kanban.MinQuestionOptions, kanban.MaxQuestionOptions),
		}, "prompt", "options")).Items(1, kanban.MaxQuestionItems),
		"context":            schema.Str("Shared background shown with the questions, verbatim.").Len(1, kanban.MaxQuestionContext),
		"context_paragraphs": schema.Arr("Shared background as paragraphs; replaces context when non-empty.", schema.Str("One paragraph.").Len(0, kanban.MaxContextParagraphLen)).Items(0, kanban.MaxContextParagraphs),
	}
	for k, v := range extra {
		props[k] = v
	}
	return schema.Obj("", props, "questions")
}
