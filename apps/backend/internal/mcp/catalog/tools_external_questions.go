package catalog

import (
	"context"
	"encoding/json"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

var groupExternalQuestions = declare(&Group{Name: "external-questions", Tools: []*Tool{
	{
		Name:   "list_pending_questions_kandev",
		Action: kanban.ActionQuestionList,
		Title:  "List pending questions",
		Description: "List questions agents asked that nobody has answered yet, oldest first. Answer one with " +
			"answer_question_kandev to unblock the agent waiting for it.",
		Drop:   []string{"task_id", "kind", "state"},
		Output: listOf(questionBundleOut),
		Hints:  ReadHints,
		Run: func(ctx context.Context, c Call) (any, error) {
			var in map[string]json.RawMessage
			if err := c.Decode(&in); err != nil {
				return nil, err
			}
			in["state"] = json.RawMessage(`"` + kanban.QuestionPending + `"`)
			return c.Forward(ctx, in)
		},
	},
	{
		Action: kanban.ActionQuestionAnswer,
		Title:  "Answer question",
		Description: "Answer (or reject) a pending question bundle by its pending_id (the id from " +
			"list_pending_questions_kandev) so the asking agent continues. Give either answers — one per question of the " +
			"bundle, naming offered options by option_id or giving a custom text — or rejected=true with an optional " +
			"reject_reason, not both. The first resolution wins: a later one changes nothing and returns claimed=false " +
			"with the stored outcome.",
		Output: out("The outcome.", P{
			"claimed":  Bool("True when this call resolved the bundle; false when another resolution had already won."),
			"question": questionBundleOut,
		}, "claimed", "question"),
		Hints: IdempotentWrite,
	},
}})

var questionBundleOut = out("A question bundle an agent session asked.", P{
	"id": Str("Question bundle id (the pending_id to answer with)."), "kind": Str("user (asked of the operator) or parent (asked of the parent task)."),
	"session_id": Str("Asking session."), "task_id": Str("The session's task."), "workspace_id": Str("The task's workspace."),
	"context": Str("Shared background given with the questions."),
	"questions": Arr("The questions (1–4).", out("One question.", P{
		"id": Str("Question id within the bundle."), "title": Str("Short label."), "prompt": Str("The question."),
		"multi_select": Bool("Several options may be selected."),
		"options": Arr("Offered options.", out("One option.", P{
			"option_id": Str("Id to pass in selected_options."), "label": Str("The option as shown."),
			"description": Str("What choosing it means."),
		}, "option_id", "label")),
	}, "id", "prompt", "options")),
	"state": Str("pending, answered or rejected."),
	"answers": Arr("The answers, once answered.", out("One answer.", P{
		"question_id": Str("Question answered."), "selected_options": Arr("Chosen option ids.", Str("An option_id.")),
		"custom_text": Str("Free-text answer."),
	}, "question_id")),
	"reject_reason": Str("Reason given with a rejection."),
	"reply":         Str("The parent task's answer (parent questions)."),
	"created_at":    Str("When asked (RFC 3339)."),
	"answered_at":   Str("When answered (RFC 3339); absent while pending."),
}, "id", "kind", "session_id", "task_id", "workspace_id", "questions", "state", "created_at")
