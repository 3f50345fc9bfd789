package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// A task's PR automation settings: task-wide fields (task_pr_automation)
// and the switches of each linked pull request (columns of
// task_pull_requests), read and written as the reference's
// get_/update_task_pr_automation_kandev (and _mr_ for GitLab) do.

// PRAutomation returns a task's PR automation settings over its pull
// requests on forge. NOT_FOUND when the task is missing.
func (s *Store) PRAutomation(ctx context.Context, taskID string, forge kanban.ForgeKind) (*kanban.PRAutomation, error) {
	return readPRAutomation(ctx, s.stmts, taskID, forge)
}

func readPRAutomation(ctx context.Context, q queryer, taskID string, forge kanban.ForgeKind) (*kanban.PRAutomation, error) {
	if !forge.Valid() {
		return nil, kanban.FieldError("forge", "must be github or gitlab")
	}
	if err := requireRow(ctx, q, "tasks", "task", taskID); err != nil {
		return nil, err
	}
	out := &kanban.PRAutomation{TaskID: taskID, AutoFixMaxRounds: kanban.MaxAutoFixRounds,
		PRStates: []kanban.PRStateEntry{}, PROptions: []kanban.PROptionsEntry{}}
	var override sql.NullString
	var updated string
	err := q.QueryRowContext(ctx, `SELECT auto_fix_prompt_override, review_reviewer_login, updated_at FROM task_pr_automation
		WHERE task_id = ?`, taskID).Scan(&override, &out.ReviewReviewerLogin, &updated)
	switch {
	case err == nil:
		at := parseTime(updated)
		out.UpdatedAt = &at
		if override.Valid {
			out.AutoFixPromptOverride = &override.String
		}
	case !errors.Is(err, sql.ErrNoRows):
		return nil, fmt.Errorf("pr automation: %w", err)
	}
	out.EffectiveAutoFixPrompt, out.UsingDefaultPrompt = kanban.DefaultAutoFixPrompt, out.AutoFixPromptOverride == nil
	if out.AutoFixPromptOverride != nil {
		out.EffectiveAutoFixPrompt = *out.AutoFixPromptOverride
	}
	rows, err := scanAll(ctx, q, scanPRRow, `SELECT `+prCols+` FROM task_pull_requests WHERE task_id = ? AND forge = ?
		ORDER BY created_at, id LIMIT ?`, taskID, string(forge), kanban.MaxLimit)
	if err != nil {
		return nil, fmt.Errorf("pr automation: %w", err)
	}
	all := kanban.PROptions{AutoFixEnabled: len(rows) > 0, AutoMergeEnabled: len(rows) > 0, PromptOnReviewRequested: len(rows) > 0,
		PromptOnMerged: len(rows) > 0, PromptOnClosed: len(rows) > 0}
	for _, r := range rows {
		o := r.Options
		out.PROptions = append(out.PROptions, kanban.PROptionsEntry{TaskID: taskID, RepositoryID: r.RepositoryID, PRNumber: r.Number,
			PROptions: o, CreatedAt: r.CreatedAt, UpdatedAt: r.optionsUpdated})
		out.PRStates = append(out.PRStates, kanban.PRStateEntry{RepositoryID: r.RepositoryID, PRNumber: r.Number, PRAutomationState: r.Automation})
		all.AutoFixEnabled = all.AutoFixEnabled && o.AutoFixEnabled
		all.AutoMergeEnabled = all.AutoMergeEnabled && o.AutoMergeEnabled
		all.PromptOnReviewRequested = all.PromptOnReviewRequested && o.PromptOnReviewRequested
		all.PromptOnMerged = all.PromptOnMerged && o.PromptOnMerged
		all.PromptOnClosed = all.PromptOnClosed && o.PromptOnClosed
		if out.UpdatedAt == nil || r.optionsUpdated.After(*out.UpdatedAt) {
			at := r.optionsUpdated
			out.UpdatedAt = &at
		}
	}
	out.AutoFixEnabled, out.AutoMergeEnabled = all.AutoFixEnabled, all.AutoMergeEnabled
	out.PromptOnReviewRequested, out.PromptOnMerged, out.PromptOnClosed = all.PromptOnReviewRequested, all.PromptOnMerged, all.PromptOnClosed
	return out, nil
}

// checkAutomationUpdate validates u before anything is written.
func checkAutomationUpdate(u kanban.PRAutomationUpdate) error {
	if (u.RepositoryID == nil) != (u.PRNumber == nil) {
		return kanban.FieldError("repository_id", "and pr_number name a pull request together: give both or neither")
	}
	if u.PRNumber != nil && (*u.PRNumber < 1 || *u.PRNumber > kanban.MaxPRNumber) {
		return kanban.FieldError("pr_number", "must be a pull request number (1 to %d)", kanban.MaxPRNumber)
	}
	if u.AutoFixPromptOverride != nil {
		if err := kanban.CheckText("auto_fix_prompt_override", *u.AutoFixPromptOverride, false, kanban.MaxPromptLen); err != nil {
			return err
		}
	}
	if u.ReviewReviewerLogin != nil {
		return kanban.CheckLine("review_reviewer_login", *u.ReviewReviewerLogin, false, kanban.MaxReviewerLoginLen)
	}
	return nil
}

// UpdatePRAutomation changes a task's PR automation settings on forge (see
// kanban.PRAutomationUpdate) in one transaction and returns them as
// PRAutomation does. VALIDATION_ERROR when RepositoryID and PRNumber name
// no pull request of the task on forge (nothing is written); NOT_FOUND
// when the task is missing.
func (s *Store) UpdatePRAutomation(ctx context.Context, taskID string, forge kanban.ForgeKind, u kanban.PRAutomationUpdate) (*kanban.PRAutomation, error) {
	if !forge.Valid() {
		return nil, kanban.FieldError("forge", "must be github or gitlab")
	}
	if err := checkAutomationUpdate(u); err != nil {
		return nil, err
	}
	var out *kanban.PRAutomation
	err := s.tx(ctx, func(tx txn) error {
		if err := requireRow(ctx, tx, "tasks", "task", taskID); err != nil {
			return err
		}
		now := fmtTime(kanban.Now())
		if u.AutoFixPromptOverride != nil || u.ReviewReviewerLogin != nil {
			if err := writeTaskAutomation(ctx, tx, taskID, u, now); err != nil {
				return err
			}
		}
		if err := writePROptions(ctx, tx, taskID, forge, u, now); err != nil {
			return err
		}
		var err error
		out, err = readPRAutomation(ctx, tx, taskID, forge)
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

func writeTaskAutomation(ctx context.Context, tx txn, taskID string, u kanban.PRAutomationUpdate, now string) error {
	if _, err := tx.ExecContext(ctx, `INSERT INTO task_pr_automation (task_id, created_at, updated_at) VALUES (?, ?, ?)
		ON CONFLICT (task_id) DO NOTHING`, taskID, now, now); err != nil {
		return fmt.Errorf("update pr automation: %w", err)
	}
	if u.AutoFixPromptOverride != nil {
		if _, err := tx.ExecContext(ctx, `UPDATE task_pr_automation SET auto_fix_prompt_override = ?, updated_at = ? WHERE task_id = ?`,
			nullString(*u.AutoFixPromptOverride), now, taskID); err != nil {
			return fmt.Errorf("update pr automation: %w", err)
		}
	}
	if u.ReviewReviewerLogin != nil {
		if _, err := tx.ExecContext(ctx, `UPDATE task_pr_automation SET review_reviewer_login = ?, updated_at = ? WHERE task_id = ?`,
			*u.ReviewReviewerLogin, now, taskID); err != nil {
			return fmt.Errorf("update pr automation: %w", err)
		}
	}
	return nil
}

// writePROptions sets the switches of u on the pull request it names, or
// on every pull request of the task on forge. Turning auto-fix on (from
// off) starts its rounds over.
func writePROptions(ctx context.Context, tx txn, taskID string, forge kanban.ForgeKind, u kanban.PRAutomationUpdate, now string) error {
	where, args := `task_id = ? AND forge = ?`, []any{taskID, string(forge)}
	if u.PRNumber != nil {
		where, args = where+` AND repository_id = ? AND number = ?`, append(args, *u.RepositoryID, *u.PRNumber)
		var one int
		if err := tx.QueryRowContext(ctx, `SELECT 1 FROM task_pull_requests WHERE `+where, args...).Scan(&one); errors.Is(err, sql.ErrNoRows) {
			return kanban.FieldError("pr_number", "must name a pull request linked to the task (with repository_id)")
		} else if err != nil {
			return fmt.Errorf("update pr automation: %w", err)
		}
	}
	sets, vals := []string{}, []any{}
	for _, sw := range []struct {
		col string
		v   *bool
	}{{"auto_merge_enabled", u.AutoMergeEnabled}, {"prompt_on_review_requested", u.PromptOnReviewRequested},
		{"prompt_on_merged", u.PromptOnMerged}, {"prompt_on_closed", u.PromptOnClosed}} {
		if sw.v != nil {
			sets, vals = append(sets, sw.col+` = ?`), append(vals, boolInt(*sw.v))
		}
	}
	if u.AutoFixEnabled != nil {
		on := boolInt(*u.AutoFixEnabled)
		// Re-enabling starts over: the rounds, and when they were spent.
		sets = append(sets, `auto_fix_rounds = CASE WHEN auto_fix_enabled = 0 AND ? = 1 THEN 0 ELSE auto_fix_rounds END`,
			`auto_fix_exhausted_at = CASE WHEN auto_fix_enabled = 0 AND ? = 1 THEN NULL ELSE auto_fix_exhausted_at END`,
			`last_fix_at = CASE WHEN auto_fix_enabled = 0 AND ? = 1 THEN NULL ELSE last_fix_at END`, `auto_fix_enabled = ?`)
		vals = append(vals, on, on, on, on)
	}
	if len(sets) == 0 {
		return nil
	}
	sets = append(sets, `options_updated_at = ?`, `version = version + 1`)
	vals = append(vals, now)
	if _, err := tx.ExecContext(ctx, `UPDATE task_pull_requests SET `+strings.Join(sets, ", ")+` WHERE `+where, append(vals, args...)...); err != nil {
		return fmt.Errorf("update pr automation: %w", err)
	}
	return nil
}
