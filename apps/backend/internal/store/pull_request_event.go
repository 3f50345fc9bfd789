package store

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// The PR watcher's event journal (pull_request_events). An entry is
// recorded with the poll that saw it (RecordPoll) or by a webhook
// (AddPREvents), then claimed by one backend (ClaimPREvents: pending →
// delivering), acted on, and finished (FinishPREvent). An entry whose
// backend died while acting on it is interrupted, never acted on again
// (InterruptPREvents): a prompt or a merge happens at most once.

const prEventCols = `id, pull_request_id, seq, event_key, kind, payload, state, attempts, claimed_by, error, due_at, created_at, updated_at`

func scanPREvent(r rowSource) (*kanban.PREvent, error) {
	var e kanban.PREvent
	var payload, due, created, updated string
	if err := r.Scan(&e.ID, &e.PullRequestID, &e.Seq, &e.Key, &e.Kind, &payload, &e.State, &e.Attempts, &e.ClaimedBy,
		&e.Error, &due, &created, &updated); err != nil {
		return nil, err
	}
	e.Payload = json.RawMessage(payload)
	e.DueAt, e.CreatedAt, e.UpdatedAt = parseTime(due), parseTime(created), parseTime(updated)
	return &e, nil
}

func checkEvents(events []kanban.PREvent) error {
	if len(events) > kanban.MaxPREventsPerPoll {
		return kanban.FieldError("events", "at most %d", kanban.MaxPREventsPerPoll)
	}
	for _, e := range events {
		if err := kanban.CheckLine("events.key", e.Key, true, kanban.MaxPREventKeyLen); err != nil {
			return err
		}
		if err := kanban.CheckLine("events.kind", e.Kind, true, kanban.MaxPREventKindLen); err != nil {
			return err
		}
		if len(e.Payload) > kanban.MaxPREventPayload {
			return kanban.FieldError("events.payload", "larger than %d bytes", kanban.MaxPREventPayload)
		}
		if len(e.Payload) > 0 && !json.Valid(e.Payload) {
			return kanban.FieldError("events.payload", "must be JSON")
		}
	}
	return nil
}

// insertPREvents appends events to a pull request's journal, pending and
// due at now, skipping keys it has; it returns the ones appended.
func insertPREvents(ctx context.Context, tx txn, prID string, events []kanban.PREvent, now time.Time) ([]kanban.PREvent, error) {
	if len(events) == 0 {
		return nil, nil
	}
	var seq int
	if err := tx.QueryRowContext(ctx, `SELECT COALESCE(MAX(seq), 0) FROM pull_request_events WHERE pull_request_id = ?`, prID).Scan(&seq); err != nil {
		return nil, err
	}
	var out []kanban.PREvent
	for _, e := range events {
		payload := string(e.Payload)
		if payload == "" {
			payload = "{}"
		}
		e.ID, e.PullRequestID, e.Seq, e.State, e.DueAt, e.CreatedAt, e.UpdatedAt = kanban.NewID(), prID, seq+1, kanban.EventPending, now, now, now
		e.Payload = json.RawMessage(payload)
		res, err := tx.ExecContext(ctx, `INSERT INTO pull_request_events (`+prEventCols+`) VALUES (?, ?, ?, ?, ?, ?, ?, 0, '', '', ?, ?, ?)
			ON CONFLICT (pull_request_id, event_key) DO NOTHING`, e.ID, prID, e.Seq, e.Key, e.Kind, payload, string(e.State),
			fmtTime(now), fmtTime(now), fmtTime(now))
		if err != nil {
			return nil, err
		}
		if n, err := res.RowsAffected(); err != nil {
			return nil, err
		} else if n == 1 {
			seq++
			out = append(out, e)
		}
	}
	return out, nil
}

// ClaimPREvents claims, for backend, the pending entries due at now of up
// to limit pull requests that have no entry being acted on: they become
// delivering (each attempt counted) and are returned in journal order
// per pull request. Each entry is claimed by one backend only.
func (s *Store) ClaimPREvents(ctx context.Context, backend string, now time.Time, limit int) ([]kanban.PREvent, error) {
	var out []kanban.PREvent
	err := s.tx(ctx, func(tx txn) error {
		prs, err := scanAll(ctx, tx, scanID, `SELECT e.pull_request_id FROM pull_request_events e
			WHERE e.state = 'pending' AND e.due_at <= ? AND NOT EXISTS (SELECT 1 FROM pull_request_events d
			WHERE d.pull_request_id = e.pull_request_id AND d.state = 'delivering')
			GROUP BY e.pull_request_id ORDER BY MIN(e.due_at), e.pull_request_id LIMIT ?`, fmtTime(now), limit)
		if err != nil || len(prs) == 0 {
			return err
		}
		marks := strings.TrimSuffix(strings.Repeat("?, ", len(prs)), ", ")
		args := []any{backend, fmtTime(now), fmtTime(now)}
		for _, id := range prs {
			args = append(args, id)
		}
		if _, err := tx.ExecContext(ctx, `UPDATE pull_request_events SET state = 'delivering', claimed_by = ?, attempts = attempts + 1,
			updated_at = ? WHERE state = 'pending' AND due_at <= ? AND pull_request_id IN (`+marks+`)`, args...); err != nil {
			return err
		}
		out, err = scanAll(ctx, tx, scanPREvent, `SELECT `+prEventCols+` FROM pull_request_events
			WHERE state = 'delivering' AND claimed_by = ? AND pull_request_id IN (`+marks+`) ORDER BY pull_request_id, seq`,
			append([]any{backend}, args[3:]...)...)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("claim pull request events: %w", err)
	}
	return out, nil
}

// PREventOutcome is how acting on a journal entry ended.
type PREventOutcome struct {
	// State is delivered, failed, or pending (retry at RetryAt).
	State   kanban.PREventState
	RetryAt time.Time
	// Error is what went wrong (shown as the pull request's last error;
	// a delivered entry clears that).
	Error string
	// PollNow makes the pull request due at once (after a merge).
	PollNow bool
}

// FinishPREvent ends backend's attempt at a delivering entry. NOT_FOUND
// when it is not delivering under backend (interrupted meanwhile).
func (s *Store) FinishPREvent(ctx context.Context, id, backend string, o PREventOutcome) error {
	switch o.State {
	case kanban.EventDelivered, kanban.EventFailed, kanban.EventPending:
	default:
		return kanban.FieldError("state", "must be delivered, failed or pending")
	}
	errText := kanban.Clip(o.Error, kanban.MaxPRErrorLen)
	err := s.tx(ctx, func(tx txn) error {
		now := kanban.Now()
		due := now
		if o.State == kanban.EventPending && o.RetryAt.After(now) {
			due = o.RetryAt
		}
		var prID string
		if err := tx.QueryRowContext(ctx, `SELECT pull_request_id FROM pull_request_events WHERE id = ? AND state = 'delivering' AND claimed_by = ?`,
			id, backend).Scan(&prID); err != nil {
			return notFound(err, "pull request event")
		}
		if _, err := tx.ExecContext(ctx, `UPDATE pull_request_events SET state = ?, error = ?, due_at = ?, updated_at = ? WHERE id = ?`,
			string(o.State), errText, fmtTime(due), fmtTime(now), id); err != nil {
			return err
		}
		set, args := `last_error = ?, version = version + 1`, []any{errText}
		if o.PollNow {
			set, args = set+`, next_poll_at = ?`, append(args, fmtTime(now))
		}
		_, err := tx.ExecContext(ctx, `UPDATE task_pull_requests SET `+set+` WHERE id = ?`, append(args, prID)...)
		return err
	})
	if err != nil {
		return fmt.Errorf("finish pull request event: %w", err)
	}
	return nil
}

// ReleasePREvents puts backend's delivering entries ids back to pending,
// without counting the attempt (ones it claimed but did not act on).
func (s *Store) ReleasePREvents(ctx context.Context, backend string, ids []string) error {
	if len(ids) == 0 {
		return nil
	}
	args := []any{fmtTime(kanban.Now()), backend}
	for _, id := range ids {
		args = append(args, id)
	}
	err := s.tx(ctx, func(tx txn) error {
		_, err := tx.ExecContext(ctx, `UPDATE pull_request_events SET state = 'pending', attempts = attempts - 1, updated_at = ?
			WHERE state = 'delivering' AND claimed_by = ? AND id IN (`+strings.TrimSuffix(strings.Repeat("?, ", len(ids)), ", ")+`)`, args...)
		return err
	})
	if err != nil {
		return fmt.Errorf("release pull request events: %w", err)
	}
	return nil
}

// InterruptPREvents marks interrupted the entries that a backend other
// than backend was acting on and that no live backend (lease renewed at
// or after since) claimed: that backend died while acting, and whether it
// acted is unknown, so the entry is not acted on again. It returns how
// many. On SQLite every other backend is gone (one process owns the
// database).
func (s *Store) InterruptPREvents(ctx context.Context, backend string, since time.Time) (int, error) {
	var n int64
	err := s.tx(ctx, func(tx txn) error {
		now := fmtTime(kanban.Now())
		res, err := tx.ExecContext(ctx, `UPDATE pull_request_events SET state = 'interrupted', updated_at = ?,
			error = 'the backend acting on it stopped: it is not acted on again'
			WHERE state = 'delivering' AND claimed_by <> ? AND claimed_by NOT IN
			(SELECT id FROM cluster_backends WHERE heartbeat_at >= ?)`, now, backend, fmtTime(since))
		if err != nil {
			return err
		}
		n, err = res.RowsAffected()
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("interrupt pull request events: %w", err)
	}
	return int(n), nil
}

var prEventListing = listing[kanban.PREvent]{what: "list pull request events",
	selectFrom: `SELECT ` + prEventCols + ` FROM pull_request_events`, scan: scanPREvent, cols: []string{"seq"},
	key: func(e kanban.PREvent) []any { return []any{e.Seq} }}

// ListPREvents lists a pull request's journal, oldest first. NOT_FOUND
// when the pull request is missing.
func (s *Store) ListPREvents(ctx context.Context, prID string, p kanban.Page) (*kanban.List[kanban.PREvent], error) {
	p, err := p.Normalize()
	if err != nil {
		return nil, err
	}
	if err := requireRow(ctx, s.stmts, "task_pull_requests", "pull request", prID); err != nil {
		return nil, err
	}
	return prEventListing.page(ctx, s.stmts, p, `pull_request_id = ?`, prID)
}
