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

// Question bounds.
const (
	maxQuestionItems    = 4
	minQuestionOptions  = 2
	maxQuestionOptions  = 6
	maxQuestionTextLen  = 1000
	maxQuestionIDLen    = 64
	maxOptionLabelLen   = 100
	maxOptionDescLen    = 500
	maxAnswerCustomLen  = 2000
	maxAnswerReasonLen  = 1000
	maxQuestionHeaderLn = 100
)

var questionStates = []string{kanban.QuestionPending, kanban.QuestionAnswered, kanban.QuestionRejected}

const questionColumns = `id, session_id, task_id, workspace_id, questions, state, answers, reason,
	created_at, answered_at`

// CreateQuestion stores a pending question bundle asked by a session; task
// and workspace come from the session. Items without an id get "q1".."q4"
// by position. NOT_FOUND for a missing session.
func (s *Store) CreateQuestion(ctx context.Context, q kanban.Question) (*kanban.Question, error) {
	if err := kanban.CheckText("session_id", q.SessionID, true, kanban.MaxNameLen); err != nil {
		return nil, err
	}
	items := slices.Clone(q.Questions)
	if err := checkQuestionItems(items); err != nil {
		return nil, err
	}
	itemsJSON, err := json.Marshal(items)
	if err != nil {
		return nil, fmt.Errorf("create question: %w", err)
	}
	var out *kanban.Question
	err = s.tx(ctx, func(tx txn) error {
		var taskID, wsID string
		err := tx.QueryRowContext(ctx, `SELECT task_id, workspace_id FROM task_sessions WHERE id = ?`,
			q.SessionID).Scan(&taskID, &wsID)
		if err != nil {
			return notFound(err, "session")
		}
		id := kanban.NewID()
		if _, err := tx.ExecContext(ctx, `INSERT INTO questions (id, session_id, task_id, workspace_id,
			questions, state, answers, reason, created_at) VALUES (?, ?, ?, ?, ?, ?, '[]', '', ?)`,
			id, q.SessionID, taskID, wsID, string(itemsJSON), kanban.QuestionPending,
			fmtTime(kanban.Now())); err != nil {
			return fmt.Errorf("create question: %w", err)
		}
		out, err = getQuestion(ctx, tx, id)
		return err
	})
	return out, err
}

// checkQuestionItems validates the items and assigns missing ids in place.
func checkQuestionItems(items []kanban.QuestionItem) error {
	if len(items) < 1 || len(items) > maxQuestionItems {
		return kanban.FieldError("questions", "must have between 1 and %d items", maxQuestionItems)
	}
	for i := range items {
		it := &items[i]
		if it.ID == "" {
			it.ID = fmt.Sprintf("q%d", i+1)
		}
		path := fmt.Sprintf("questions[%d]", i)
		if err := kanban.CheckText(path+".id", it.ID, true, maxQuestionIDLen); err != nil {
			return err
		}
		if slices.ContainsFunc(items[:i], func(o kanban.QuestionItem) bool { return o.ID == it.ID }) {
			return kanban.FieldError(path+".id", "duplicates another question's id")
		}
		if err := kanban.CheckText(path+".question", it.Question, true, maxQuestionTextLen); err != nil {
			return err
		}
		if err := kanban.CheckText(path+".header", it.Header, false, maxQuestionHeaderLn); err != nil {
			return err
		}
		if err := checkQuestionOptions(path+".options", it.Options); err != nil {
			return err
		}
	}
	return nil
}

func checkQuestionOptions(path string, opts []kanban.QuestionOption) error {
	if len(opts) < minQuestionOptions || len(opts) > maxQuestionOptions {
		return kanban.FieldError(path, "must have between %d and %d options", minQuestionOptions, maxQuestionOptions)
	}
	for j, o := range opts {
		p := fmt.Sprintf("%s[%d]", path, j)
		if err := kanban.CheckText(p+".label", o.Label, true, maxOptionLabelLen); err != nil {
			return err
		}
		if slices.ContainsFunc(opts[:j], func(x kanban.QuestionOption) bool { return x.Label == o.Label }) {
			return kanban.FieldError(p+".label", "duplicates another option's label")
		}
		if err := kanban.CheckText(p+".description", o.Description, true, maxOptionDescLen); err != nil {
			return err
		}
	}
	return nil
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

// AnswerQuestion answers or rejects a pending question. The first answer
// wins: the UPDATE only matches a row still pending, so of concurrent
// answers exactly one claims it; the others (and any answer to a question
// no longer pending) get the stored question with claimed=false and no
// error. Answers are validated only while the question is pending.
func (s *Store) AnswerQuestion(ctx context.Context, id string, answers []kanban.Answer, reject bool, reason string) (*kanban.Question, bool, error) {
	var (
		out     *kanban.Question
		claimed bool
	)
	err := s.tx(ctx, func(tx txn) error {
		cur, err := getQuestion(ctx, tx, id)
		if err != nil {
			return err
		}
		if cur.State != kanban.QuestionPending {
			out = cur
			return nil
		}
		state, err := checkAnswers(cur.Questions, answers, reject, reason)
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
func checkAnswers(items []kanban.QuestionItem, answers []kanban.Answer, reject bool, reason string) (string, error) {
	if err := kanban.CheckText("reason", reason, false, maxAnswerReasonLen); err != nil {
		return "", err
	}
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
	switch {
	case len(a.Selected) > 0 && a.CustomText != "":
		return kanban.FieldError(path, "give either selected or custom_text, not both")
	case len(a.Selected) == 0 && a.CustomText == "":
		return kanban.FieldError(path, "give selected or custom_text")
	case a.CustomText != "":
		return kanban.CheckText(path+".custom_text", a.CustomText, true, maxAnswerCustomLen)
	}
	if !it.MultiSelect && len(a.Selected) != 1 {
		return kanban.FieldError(path+".selected", "must have exactly one label (the question is single-select)")
	}
	for j, label := range a.Selected {
		if !slices.ContainsFunc(it.Options, func(o kanban.QuestionOption) bool { return o.Label == label }) {
			return kanban.FieldError(path+".selected", "item %d is not an offered label", j)
		}
		if slices.Contains(a.Selected[:j], label) {
			return kanban.FieldError(path+".selected", "item %d repeats a label", j)
		}
	}
	return nil
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
	if f.State != "" {
		if !slices.Contains(questionStates, f.State) {
			return nil, kanban.FieldError("state", "must be pending, answered or rejected")
		}
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
	if err := r.Scan(&q.ID, &q.SessionID, &q.TaskID, &q.WorkspaceID, &items, &q.State, &answers,
		&q.Reason, &createdAt, &answeredAt); err != nil {
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
