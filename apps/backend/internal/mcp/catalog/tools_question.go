package catalog

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"time"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// DefaultQuestionKeepAlive is how often ask_user_question_kandev sends a
// progress notification while it waits, unless the call's KeepAlive says
// otherwise.
const DefaultQuestionKeepAlive = 20 * time.Second

// askGrace is how much longer than the wait the backend call may take
// before the tool gives up on it.
const askGrace = 30 * time.Second

var groupUserQuestion = declare(&Group{Name: "user-question", Tools: []*Tool{
	{
		Name:   "ask_user_question_kandev",
		Action: kanban.ActionQuestionAsk,
		Title:  "Ask the user a question",
		Description: "Ask the operator 1–4 related multiple-choice questions and wait for the answers. Use it only for a " +
			"decision a person must make, bundling related questions. Blocks until answered or rejected (progress every " +
			"20 s with a progress token) or timeout_seconds: then status is pending and it stays answerable. Answers " +
			"name options by option_id, or carry the operator's custom text.",
		Input: adapt(kanban.ActionQuestionAsk, P{
			"timeout_seconds": Int("Seconds to wait for the answer; the server may cap it.").Range(1, kanban.MaxQuestionWait).Default(kanban.DefaultQuestionWait),
		}, "wait_seconds"),
		Output: out("The outcome of the question.", P{
			"pending_id": Str("Id of the stored question bundle."),
			"status": Enum("answered: answers holds the reply; rejected: the operator declined (see reject_reason); "+
				"pending: no answer yet, the question stays answerable.", kanban.QuestionAnswered, kanban.QuestionRejected, kanban.QuestionPending),
			"rejected": Bool("True when the operator rejected the whole bundle."),
			"answers": Arr("One answer per question, in question order (answered only).", out("An answer.", P{
				"question_id":      Str("The question it answers."),
				"selected_options": Arr("The chosen options' option_id values.", Str("An option_id.")),
				"custom_text":      Str("The operator's own answer instead of an option."),
			}, "question_id")),
			"reject_reason": Str("The operator's reason for rejecting, if given."),
			"message":       Str("What happened, in words."),
		}, "pending_id", "status", "rejected", "answers", "message"),
		ShowOutput: true,
		Hints:      Hints{OpenWorld: true},
		Run:        askUser,
	},
}})

var groupParentQuestion = declare(&Group{Name: "parent-question", Tools: []*Tool{
	{
		Action: kanban.ActionQuestionAskParent,
		Title:  "Ask the parent task a question",
		Description: "Ask your direct parent task 1–4 questions when this autopilot subtask reaches a decision it cannot " +
			"make safely on its own. Only autopilot subtasks have this tool (they never ask the operator). The questions " +
			"are stored and delivered to the parent's agent as a prompt; the call returns at once with question_id and " +
			"does not wait. End your turn: the parent's answer (message_task_kandev with reply_to_question_id) arrives as " +
			"your next prompt. Fails with CONFLICT when the parent has no running session.",
		Output: out("The stored question.", P{
			"question_id":       Str("Id the parent answers with (reply_to_question_id)."),
			"status":            Enum("waiting_for_parent: delivered; the answer comes as your next prompt.", kanban.QuestionWaitingForParent),
			"parent_task_id":    Str("The parent task asked."),
			"parent_session_id": Str("The parent's session the question was delivered to."),
		}, "question_id", "status", "parent_task_id", "parent_session_id"),
		Hints: Hints{OpenWorld: true},
	},
}})

// askResult is the tool's structured result.
type askResult struct {
	PendingID    string          `json:"pending_id"`
	Status       string          `json:"status"`
	Rejected     bool            `json:"rejected"`
	Answers      []kanban.Answer `json:"answers"`
	RejectReason string          `json:"reject_reason,omitempty"`
	Message      string          `json:"message"`
}

// askUser calls question.ask, which waits for the operator, bounded by
// the caller's timeout, while sending progress keep-alives.
func askUser(ctx context.Context, c Call) (any, error) {
	var payload map[string]json.RawMessage
	if err := c.Decode(&payload); err != nil {
		return nil, err
	}
	timeout := kanban.DefaultQuestionWait
	if t, ok := payload["timeout_seconds"]; ok {
		if err := json.Unmarshal(t, &timeout); err != nil {
			return nil, err
		}
		delete(payload, "timeout_seconds")
	}
	// question.ask's payload is the arguments with the wait in wait_seconds.
	payload["wait_seconds"] = json.RawMessage(strconv.Itoa(timeout))
	wait := time.Duration(timeout) * time.Second
	ctx, cancel := context.WithTimeout(ctx, wait+askGrace)
	defer cancel()
	stop := keepAlive(c, wait)
	defer stop()
	var res struct {
		Question *kanban.Question `json:"question"`
		Answered bool             `json:"answered"`
	}
	if err := c.Backend.Call(ctx, c.Action, payload, &res); err != nil {
		return nil, err
	}
	q := res.Question
	if q == nil {
		return nil, errors.New("question.ask returned no question")
	}
	out := askResult{PendingID: q.ID, Status: q.State, Rejected: q.State == kanban.QuestionRejected, Answers: q.Answers,
		RejectReason: q.RejectReason}
	if out.Answers == nil {
		out.Answers = []kanban.Answer{}
	}
	switch q.State {
	case kanban.QuestionAnswered:
		out.Message = "The operator answered."
	case kanban.QuestionRejected:
		out.Message = "The operator declined to answer; see reject_reason if given."
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
		every := c.KeepAlive
		if every <= 0 {
			every = DefaultQuestionKeepAlive
		}
		t := time.NewTicker(every)
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
