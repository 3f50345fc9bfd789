package catalog

import (
	"context"
	"encoding/json"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// Answer bounds advertised in schemas (the store validates answers against
// the question: known ids, offered labels, every question answered once).
const (
	maxQuestionItems   = 4
	maxQuestionOptions = 6
	maxQuestionIDLen   = 64
	maxOptionLabelLen  = 100
	maxAnswerCustomLen = 2000
	maxAnswerReasonLen = 1000
)

var _ = declare(&Group{Name: "external-questions", Tools: []*Tool{
	{
		Name:   "list_pending_questions_kandev",
		Action: "question.list",
		Title:  "List pending questions",
		Description: "List questions agents asked that nobody has answered yet, oldest first. Answer one with " +
			"answer_question_kandev to unblock the agent waiting for it.",
		Input: Obj("", PageProps(P{
			"workspace_id":  ID("Only questions asked in this workspace."),
			"created_since": Str("Only questions asked at or after this time (RFC 3339, e.g. 2026-01-31T12:00:00Z).").Len(1, 64).Format("date-time"),
		})),
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
		Name:   "answer_question_kandev",
		Action: "question.answer",
		Title:  "Answer question",
		Description: "Answer (or reject) a pending question so the asking agent continues. Answer every question of the " +
			"bundle once, with offered option labels or a custom text. The first answer wins: a later one changes nothing " +
			"and returns claimed=false with the stored answer.",
		Input: Obj("", P{
			"question_id": ID("The question bundle to answer (id from list_pending_questions_kandev)."),
			"answers": Arr("One answer per question of the bundle; omit when rejecting.", Obj("The answer to one question.", P{
				"question_id": Str("Id of the question within the bundle (e.g. \"q1\").").Len(1, maxQuestionIDLen),
				"selected": Arr("Labels of the chosen options (exactly one unless the question is multi-select).",
					Str("An offered option's label.").Len(1, maxOptionLabelLen)).Items(1, maxQuestionOptions).Unique(),
				"custom_text": Str("A free-text answer instead of selected options.").Len(1, maxAnswerCustomLen),
			}, "question_id")).Items(1, maxQuestionItems),
			"reject": Bool("Decline to answer the whole bundle (the agent is told it was rejected). Default false.").Default(false),
			"reason": Str("Why, shown to the agent; mainly for rejections.").Len(0, maxAnswerReasonLen),
		}, "question_id"),
		Output: out("The outcome.", P{
			"claimed":  Bool("True when this call answered the question; false when another answer had already won."),
			"question": questionBundleOut,
		}, "claimed", "question"),
		Hints: IdempotentWrite,
		Run:   forwardID("question_id"),
	},
}})

var questionBundleOut = out("A question bundle an agent session asked.", P{
	"id": Str("Question bundle id."), "session_id": Str("Asking session."), "task_id": Str("The session's task."),
	"workspace_id": Str("The task's workspace."),
	"questions": Arr("The questions (1–4).", out("One question.", P{
		"id": Str("Question id within the bundle."), "question": Str("The question."), "header": Str("Short label."),
		"multi_select": Bool("Several options may be selected."),
		"options": Arr("Offered options.", out("One option.", P{
			"label": Str("Label to pass in selected."), "description": Str("What choosing it means."),
		}, "label")),
	}, "id", "question", "options")),
	"state": Str("pending, answered or rejected."),
	"answers": Arr("The answers, once answered.", out("One answer.", P{
		"question_id": Str("Question answered."), "selected": Arr("Chosen labels.", Str("A label.")),
		"custom_text": Str("Free-text answer."),
	}, "question_id")),
	"reason":      Str("Reason given with the answer or rejection."),
	"created_at":  Str("When asked (RFC 3339)."),
	"answered_at": Str("When answered (RFC 3339); absent while pending."),
}, "id", "session_id", "task_id", "workspace_id", "questions", "state", "created_at")
