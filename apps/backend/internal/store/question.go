package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

const questionColumns = `id, kind, session_id, task_id, workspace_id, context, questions, state, answers,
	reason, reply, created_at, answered_at`

// CreateQuestion stores a pending question bundle asked by a session; task
// and workspace come from the session. Items without an id get "q1".."q4"
// by position, options without one "q<n>_opt<m>". NOT_FOUND for a missing
// session. With deliver, the message it returns for the stored question is
// appended in the same transaction (a parent question's prompt to the
// parent), so the question exists exactly when it was delivered.
func (s *Store) CreateQuestion(ctx context.Context, q kanban.Question, deliver func(*kanban.Question) *kanban.Message) (*kanban.Question, *kanban.Message, error) {
	if q.ID != "" && !kanban.ValidID(q.ID) {
		return nil, nil, kanban.FieldError("id", "must be an id")
	}
	if err := kanban.CheckText("session_id", q.SessionID, true, kanban.MaxNameLen); err != nil {
		return nil, nil, err
	}
	if q.Kind == "" {
		q.Kind = kanban.QuestionForUser
	}
	if !slices.Contains(kanban.QuestionKinds, q.Kind) {
		return nil, nil, kanban.FieldError("kind", "must be user or parent")
	}
	items, err := kanban.PrepareQuestions(q.Questions)
	if err != nil {
		return nil, nil, err
	}
	itemsJSON, err := json.Marshal(items)
	if err != nil {
		return nil, nil, fmt.Errorf("create question: %w", err)
	}
	var (
		out *kanban.Question
		msg *kanban.Message
	)
	err = s.tx(ctx, func(tx txn) error {
		var taskID, wsID string
		err := tx.QueryRowContext(ctx, `SELECT task_id, workspace_id FROM task_sessions WHERE id = ?`,
			q.SessionID).Scan(&taskID, &wsID)
		if err != nil {
			return notFound(err, "session")
		}
		id := q.ID
		if id == "" {
			id = kanban.NewID()
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO questions (id, kind, session_id, task_id, workspace_id,
			context, questions, state, answers, reason, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, '[]', '', ?)`,
			id, q.Kind, q.SessionID, taskID, wsID, q.Context, string(itemsJSON), kanban.QuestionPending,
			fmtTime(kanban.Now())); err != nil {
			return fmt.Errorf("create question: %w", err)
		}
		if out, err = getQuestion(ctx, tx, id); err != nil || deliver == nil {
			return err
		}
		msg, err = appendMessage(ctx, tx, *deliver(out))
		return err
	})
	if err != nil {
		return nil, nil, err
	}
	return out, msg, nil
}

// GetQuestion returns a question (NOT_FOUND when missing).
func (s *Store) GetQuestion(ctx context.Context, id string) (*kanban.Question, error) {
	return getQuestion(ctx, s.stmts, id)
}

func getQuestion(ctx context.Context, q queryer, id string) (*kanban.Question, error) {
	row := q.QueryRowContext(ctx, `SELECT `+questionColumns+` FROM questions WHERE id = ?`, id)
	out, err := scanQuestion(row)
	if err != nil {
		return nil, notFound(err, "question")
	}
	return out, nil
}

// AnswerQuestion answers or rejects a pending user question. The first answer
// wins: the UPDATE only matches a row still pending, so of concurrent
// answers exactly one claims it; the others (and any answer to a question
// no longer pending) get the stored question with claimed=false and no
// error. Answers are validated only while the question is pending.
func (s *Store) AnswerQuestion(ctx context.Context, id string, answers []kanban.Answer, reject bool, reason string) (*kanban.Question, bool, error) {
	if err := kanban.CheckText("reject_reason", reason, false, kanban.MaxAnswerReasonLen); err != nil {
		return nil, false, err
	}
	if reason != "" && !reject {
		return nil, false, kanban.FieldError("reject_reason", "is only taken with rejected=true")
	}
	var (
		out     *kanban.Question
		claimed bool
	)
	err := s.tx(ctx, func(tx txn) error {
		cur, err := getQuestion(ctx, tx, id)
		if err != nil {
			return err
		}
		if cur.Kind != kanban.QuestionForUser {
			return kanban.Errorf(kanban.CodeConflict, "this question was asked of the parent task; its agent answers with message_task_kandev reply_to_question_id")
		}
		if cur.State != kanban.QuestionPending {
			out = cur
			return nil
		}
		state, err := checkAnswers(cur.Questions, answers, reject)
		if err != nil {
			return err
		}
		if answers == nil {
			answers = []kanban.Answer{}
		}
		answersJSON, err := json.Marshal(answers)
		if err != nil {
			return fmt.Errorf("answer question: %w", err)
		}
		res, err := tx.ExecContext(ctx, `UPDATE questions SET state = ?, answers = ?, reason = ?, answered_at = ?
			WHERE id = ? AND state = ?`, state, string(answersJSON), reason, fmtTime(kanban.Now()), id,
			kanban.QuestionPending)
		if err != nil {
			return fmt.Errorf("answer question: %w", err)
		}
		n, err := res.RowsAffected()
		if err != nil {
			return fmt.Errorf("answer question: %w", err)
		}
		claimed = n == 1
		out, err = getQuestion(ctx, tx, id)
		return err
	})
	if err != nil {
		return nil, false, err
	}
	return out, claimed, nil
}

// checkAnswers validates a reply against the items and returns the state it
// leads to.
func checkAnswers(items []kanban.QuestionItem, answers []kanban.Answer, reject bool) (string, error) {
	if reject {
		if len(answers) > 0 {
			return "", kanban.FieldError("answers", "must be empty when rejecting")
		}
		return kanban.QuestionRejected, nil
	}
	seen := make(map[string]bool, len(answers))
	for i, a := range answers {
		idx := slices.IndexFunc(items, func(it kanban.QuestionItem) bool { return it.ID == a.QuestionID })
		if idx < 0 {
			return "", kanban.FieldError("answers", "item %d names an unknown question_id", i)
		}
		if seen[a.QuestionID] {
			return "", kanban.FieldError("answers", "item %d answers a question already answered", i)
		}
		seen[a.QuestionID] = true
		if err := checkAnswer(i, items[idx], a); err != nil {
			return "", err
		}
	}
	if len(seen) != len(items) {
		return "", kanban.FieldError("answers", "must answer every question exactly once")
	}
	return kanban.QuestionAnswered, nil
}

func checkAnswer(i int, it kanban.QuestionItem, a kanban.Answer) error {
	path := fmt.Sprintf("answers[%d]", i)
	sel := a.SelectedOptions
	switch {
	case len(sel) > 0 && a.CustomText != "":
		return kanban.FieldError(path, "give either selected_options or custom_text, not both")
	case len(sel) == 0 && a.CustomText == "":
		return kanban.FieldError(path, "give selected_options or custom_text")
	case a.CustomText != "":
		return kanban.CheckText(path+".custom_text", a.CustomText, true, kanban.MaxAnswerCustomLen)
	}
	if !it.MultiSelect && len(sel) != 1 {
		return kanban.FieldError(path+".selected_options", "must have exactly one option_id (the question is single-select)")
	}
	for j, id := range sel {
		if !slices.ContainsFunc(it.Options, func(o kanban.QuestionOption) bool { return o.OptionID == id }) {
			return kanban.FieldError(path+".selected_options", "item %d is not an option_id of question %s (its options: %s)",
				j, it.ID, optionIDs(it.Options))
		}
		if slices.Contains(sel[:j], id) {
			return kanban.FieldError(path+".selected_options", "item %d repeats an option", j)
		}
	}
	return nil
}

// optionIDs lists the stored option ids of a question, for errors.
func optionIDs(opts []kanban.QuestionOption) string {
	ids := make([]string, len(opts))
	for i, o := range opts {
		ids[i] = o.OptionID
	}
	return strings.Join(ids, ", ")
}

// ReplyParentQuestion records the parent task's reply to a pending parent
// question and, in the same transaction, appends deliver (the reply as a
// prompt to the asking task's session). The first reply wins: a reply to a
// question no longer pending returns it with claimed=false and appends
// nothing, so retries deliver once.
func (s *Store) ReplyParentQuestion(ctx context.Context, id, reply string, deliver kanban.Message) (*kanban.Question, *kanban.Message, bool, error) {
	if err := kanban.CheckText("prompt", reply, true, kanban.MaxPromptLen); err != nil {
		return nil, nil, false, err
	}
	var (
		out     *kanban.Question
		msg     *kanban.Message
		claimed bool
	)
	err := s.tx(ctx, func(tx txn) error {
		res, err := tx.ExecContext(ctx, `UPDATE questions SET state = ?, reply = ?, answered_at = ?
			WHERE id = ? AND kind = ? AND state = ?`, kanban.QuestionAnswered, reply, fmtTime(kanban.Now()), id,
			kanban.QuestionForParent, kanban.QuestionPending)
		if err != nil {
			return fmt.Errorf("reply parent question: %w", err)
		}
		n, err := res.RowsAffected()
		if err != nil {
			return fmt.Errorf("reply parent question: %w", err)
		}
		claimed = n == 1
		if claimed {
			if msg, err = appendMessage(ctx, tx, deliver); err != nil {
				return err
			}
		}
		out, err = getQuestion(ctx, tx, id)
		return err
	})
	if err != nil {
		return nil, nil, false, err
	}
	return out, msg, claimed, nil
}

// ListQuestions lists questions oldest first, filtered by f.
func (s *Store) ListQuestions(ctx context.Context, f kanban.QuestionFilter, p kanban.Page) (*kanban.List[kanban.Question], error) {
	p, err := p.Normalize()
	if err != nil {
		return nil, err
	}
	var (
		conds []string
		args  []any
	)
	add := func(cond string, v any) { conds, args = append(conds, cond), append(args, v) }
	if f.WorkspaceID != "" {
		add(`workspace_id = ?`, f.WorkspaceID)
	}
	if f.SessionID != "" {
		add(`session_id = ?`, f.SessionID)
	}
	if f.TaskID != "" {
		add(`task_id = ?`, f.TaskID)
	}
	if f.Kind != "" {
		add(`kind = ?`, f.Kind)
	}
	if f.State != "" {
		add(`state = ?`, f.State)
	}
	if f.CreatedSince != "" {
		t, err := time.Parse(time.RFC3339, f.CreatedSince)
		if err != nil {
			return nil, kanban.FieldError("created_since", "must be an RFC 3339 timestamp")
		}
		add(`created_at >= ?`, fmtTime(t))
	}
	return questionListing.page(ctx, s.stmts, p, strings.Join(conds, " AND "), args...)
}

var questionListing = listing[kanban.Question]{what: "list questions",
	selectFrom: `SELECT ` + questionColumns + ` FROM questions`, scan: scanQuestion, cols: []string{"created_at", "id"},
	key: func(q kanban.Question) []any { return []any{fmtTime(q.CreatedAt), q.ID} }}

func scanQuestion(r rowSource) (*kanban.Question, error) {
	var (
		q              kanban.Question
		items, answers string
		createdAt      string
		answeredAt     sql.NullString
	)
	if err := r.Scan(&q.ID, &q.Kind, &q.SessionID, &q.TaskID, &q.WorkspaceID, &q.Context, &items, &q.State, &answers,
		&q.RejectReason, &q.Reply, &createdAt, &answeredAt); err != nil {
		return nil, err
	}
	if err := json.Unmarshal([]byte(items), &q.Questions); err != nil {
		return nil, fmt.Errorf("question items: %w", err)
	}
	if err := json.Unmarshal([]byte(answers), &q.Answers); err != nil {
		return nil, fmt.Errorf("question answers: %w", err)
	}
	if len(q.Answers) == 0 {
		q.Answers = nil
	}
	q.CreatedAt, q.AnsweredAt = parseTime(createdAt), parseTimePtr(answeredAt)
	return &q, nil
}
