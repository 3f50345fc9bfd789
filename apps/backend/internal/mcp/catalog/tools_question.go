package catalog

import (
	"context"
	"encoding/json"
	"errors"
	"sync/atomic"
	"time"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// Bounds of ask_user_question_kandev; the store enforces the same.
const (
	askMaxQuestions    = 4
	askMinOptions      = 2
	askMaxOptions      = 6
	askMaxQuestionText = 1000
	askMaxHeader       = 100
	askMaxLabel        = 100
	askMaxOptionDesc   = 500
	askDefaultTimeout  = 600
	askMaxTimeout      = 3600
)

// DefaultQuestionKeepAlive is how often ask_user_question_kandev sends a
// progress notification while it waits.
const DefaultQuestionKeepAlive = 20 * time.Second

// questionKeepAlive is the current interval in nanoseconds (0: the
// default); atomic so a test may change it while calls run.
var questionKeepAlive atomic.Int64

// SetQuestionKeepAlive changes the keep-alive interval (tests shorten it;
// 0 restores the default) and returns the previous one.
func SetQuestionKeepAlive(d time.Duration) time.Duration {
	prev := time.Duration(questionKeepAlive.Swap(int64(d)))
	if prev == 0 {
		prev = DefaultQuestionKeepAlive
	}
	return prev
}

func keepAliveInterval() time.Duration {
	if d := time.Duration(questionKeepAlive.Load()); d > 0 {
		return d
	}
	return DefaultQuestionKeepAlive
}

// askGrace is how much longer than the wait the backend call may take
// before the tool gives up on it.
const askGrace = 30 * time.Second

var _ = declare(&Group{Name: "user-question", Tools: []*Tool{
	{
		Name:   "ask_user_question_kandev",
		Action: "question.ask",
		Title:  "Ask the user a question",
		Description: "Ask the operator 1–4 multiple-choice questions and wait for the answer. Use it when you cannot " +
			"proceed without a decision only a person can make. The call blocks until the operator answers or rejects " +
			"(sending progress notifications every 20 s when you pass a progress token), or until timeout_seconds pass: " +
			"then status is pending and the question stays answerable. The operator may answer with a custom text instead " +
			"of an option.",
		Input: Obj("", P{
			"questions": Arr("The questions, shown together.", Obj("One question.", P{
				"id": Str("Your id for the question, echoed in its answer. Default: q1..q4 by position.").
					Pattern(idPattern),
				"question": Str("The question, ending with a question mark.").Len(1, askMaxQuestionText),
				"header":   Str("Very short label shown above the question, e.g. \"Database\".").Len(1, askMaxHeader),
				"multi_select": Bool("Allow choosing several options. Default false (exactly one).").
					Default(false),
				"options": Arr("The offered answers, in display order; labels must be distinct.", Obj("One option.", P{
					"label":       Str("The option as the operator picks it.").Len(1, askMaxLabel),
					"description": Str("What choosing it means.").Len(1, askMaxOptionDesc),
				}, "label", "description")).Items(askMinOptions, askMaxOptions),
			}, "question", "options")).Items(1, askMaxQuestions),
			"timeout_seconds": Int("How long to wait for the answer, in seconds: 1–3600, default 600. The server may "+
				"cap it lower.").Range(1, askMaxTimeout).Default(askDefaultTimeout),
		}, "questions"),
		Output: out("The outcome of the question.", P{
			"question_id": Str("Id of the stored question bundle."),
			"status": Enum("answered: answers holds the reply; rejected: the operator declined (see reason); "+
				"pending: no answer yet, the question stays answerable.", kanban.QuestionAnswered, kanban.QuestionRejected, kanban.QuestionPending),
			"answers": Arr("One answer per question (answered only).", out("An answer.", P{
				"question_id": Str("The question it answers."),
				"selected":    Arr("Chosen option labels.", Str("A label.")),
				"custom_text": Str("The operator's own answer instead of an option."),
			}, "question_id")),
			"reason":  Str("The operator's reason, if given."),
			"message": Str("What happened, in words."),
		}, "question_id", "status", "answers", "message"),
		Hints: Hints{OpenWorld: true},
		Run:   askUser,
	},
}})

// askResult is the tool's structured result.
type askResult struct {
	QuestionID string          `json:"question_id"`
	Status     string          `json:"status"`
	Answers    []kanban.Answer `json:"answers"`
	Reason     string          `json:"reason,omitempty"`
	Message    string          `json:"message"`
}

// askUser calls question.ask, which waits for the operator, bounded by
// the caller's timeout, while sending progress keep-alives.
func askUser(ctx context.Context, c Call) (any, error) {
	var in struct {
		Questions      json.RawMessage `json:"questions"`
		TimeoutSeconds int             `json:"timeout_seconds"`
	}
	if err := c.Decode(&in); err != nil {
		return nil, err
	}
	if in.TimeoutSeconds == 0 {
		in.TimeoutSeconds = askDefaultTimeout
	}
	wait := time.Duration(in.TimeoutSeconds) * time.Second
	ctx, cancel := context.WithTimeout(ctx, wait+askGrace)
	defer cancel()
	stop := keepAlive(c, wait)
	defer stop()
	var res struct {
		Question *kanban.Question `json:"question"`
		Answered bool             `json:"answered"`
	}
	payload := map[string]any{"questions": in.Questions, "wait_seconds": in.TimeoutSeconds}
	if err := c.Backend.Call(ctx, c.Action, payload, &res); err != nil {
		return nil, err
	}
	q := res.Question
	if q == nil {
		return nil, errors.New("question.ask returned no question")
	}
	out := askResult{QuestionID: q.ID, Status: q.State, Answers: q.Answers, Reason: q.Reason}
	if out.Answers == nil {
		out.Answers = []kanban.Answer{}
	}
	switch q.State {
	case kanban.QuestionAnswered:
		out.Message = "The operator answered."
	case kanban.QuestionRejected:
		out.Message = "The operator declined to answer; see reason if given."
	default:
		out.Status = kanban.QuestionPending
		out.Message = "No answer yet; the question stays answerable. Continue with what you can do without it, or ask again later."
	}
	return out, nil
}

// keepAlive sends a progress notification every keep-alive interval until
// stop is called. Progress counts elapsed seconds out of the wait.
func keepAlive(c Call, wait time.Duration) (stop func()) {
	if c.Progress == nil {
		return func() {}
	}
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		start := time.Now()
		t := time.NewTicker(keepAliveInterval())
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				elapsed := time.Since(start)
				c.Progress(elapsed.Seconds(), wait.Seconds(), "waiting for the operator's answer")
			}
		}
	}()
	return func() {
		close(done)
		<-finished
	}
}
