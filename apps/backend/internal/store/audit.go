package store

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// The audit log (audit_log, audit_targets): appended by the action
// registry, read a page at a time newest first, pruned by the retention
// sweep. An action's entry is normally appended by tx itself, inside the
// first write transaction of the action that commits (withAudit).

const auditCols = `id, created_at, actor, actor_kind, session_id, task_id, action, summary, via, remote`

func scanAudit(r rowSource) (*kanban.AuditEntry, error) {
	var e kanban.AuditEntry
	var at, action string
	if err := r.Scan(&e.ID, &at, &e.Actor, &e.ActorKind, &e.SessionID, &e.TaskID, &action, &e.Summary, &e.Via, &e.From); err != nil {
		return nil, err
	}
	e.At, e.Action, e.Targets = parseTime(at), kanban.Action(action), []string{}
	return &e, nil
}

// insertAudit appends e in tx.
func insertAudit(ctx context.Context, tx txn, e *kanban.AuditEntry) error {
	if _, err := tx.ExecContext(ctx, `INSERT INTO audit_log (`+auditCols+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		e.ID, fmtTime(e.At), e.Actor, e.ActorKind, e.SessionID, e.TaskID, string(e.Action), e.Summary, e.Via, e.From); err != nil {
		return fmt.Errorf("append audit entry: %w", err)
	}
	for i, t := range e.Targets {
		if _, err := tx.ExecContext(ctx, `INSERT INTO audit_targets (audit_id, position, target_id) VALUES (?, ?, ?)`, e.ID, i, t); err != nil {
			return fmt.Errorf("append audit target: %w", err)
		}
	}
	return nil
}

// withAudit wraps a write transaction's fn so that, when ctx carries an
// action's audit record no other transaction holds or wrote, its entry
// is appended in the same transaction after fn's work — if fn changed
// something (a transaction that only read, such as a deduplicated
// create's, carries no entry). It returns the claimed record and
// whether the last run of the wrapped fn appended it (to settle with the
// transaction's outcome), or nil.
func withAudit(ctx context.Context, fn func(tx txn) error) (func(tx txn) error, *kanban.AuditRecord, *bool) {
	rec := kanban.AuditOf(ctx)
	if !rec.Claim() {
		return fn, nil, nil
	}
	appended := new(bool)
	return func(tx txn) error {
		*appended = false // a PostgreSQL transaction may run again
		before, err := tx.writes(ctx)
		if err != nil {
			return err
		}
		if err := fn(tx); err != nil {
			return err
		}
		after, err := tx.writes(ctx)
		if err != nil || after == before {
			return err
		}
		*appended = true
		return insertAudit(ctx, tx, &rec.Entry)
	}, rec, appended
}

// writes is a count that moves when tx changes a row: on SQLite the
// connection's total_changes() (one writer of a batch runs at a time on
// it), on PostgreSQL 1 once the transaction has a transaction id (one is
// assigned at its first write), else 0.
func (t txn) writes(ctx context.Context) (int64, error) {
	var n int64
	q := `SELECT total_changes()`
	if t.state != nil {
		q = `SELECT CASE WHEN pg_current_xact_id_if_assigned() IS NULL THEN 0 ELSE 1 END`
	}
	if err := t.tx.QueryRowContext(ctx, q).Scan(&n); err != nil {
		return 0, fmt.Errorf("audit: count writes: %w", err)
	}
	return n, nil
}

// AppendAudit appends e in its own transaction.
func (s *Store) AppendAudit(ctx context.Context, e kanban.AuditEntry) error {
	ctx = kanban.WithAudit(ctx, nil)
	return s.tx(ctx, func(tx txn) error { return insertAudit(ctx, tx, &e) })
}

// CompleteAudit appends target to entry id's targets.
func (s *Store) CompleteAudit(ctx context.Context, id, target string) error {
	ctx = kanban.WithAudit(ctx, nil)
	return s.tx(ctx, func(tx txn) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO audit_targets (audit_id, position, target_id)
			SELECT ?, COALESCE(MAX(position), -1) + 1, ? FROM audit_targets WHERE audit_id = ?`, id, target, id)
		return err
	})
}

var auditListing = listing[kanban.AuditEntry]{what: "list audit entries",
	selectFrom: `SELECT ` + auditCols + ` FROM audit_log`, scan: scanAudit, cols: []string{"created_at", "id"}, desc: true,
	key: func(e kanban.AuditEntry) []any { return []any{fmtTime(e.At), e.ID} }}

// ListAudit lists the entries matching f, newest first, with their targets.
func (s *Store) ListAudit(ctx context.Context, f kanban.AuditFilter) (*kanban.List[kanban.AuditEntry], error) {
	p, err := f.Page.Normalize()
	if err != nil {
		return nil, err
	}
	var conds []string
	var args []any
	add := func(cond string, v any) { conds, args = append(conds, cond), append(args, v) }
	if f.Actor != "" {
		add(`actor = ?`, f.Actor)
	}
	if f.Action != "" {
		add(`action = ?`, string(f.Action))
	}
	if f.Target != "" {
		add(`id IN (SELECT audit_id FROM audit_targets WHERE target_id = ?)`, f.Target)
	}
	if !f.Since.IsZero() {
		add(`created_at >= ?`, fmtTime(f.Since))
	}
	if !f.Until.IsZero() {
		add(`created_at < ?`, fmtTime(f.Until))
	}
	out, err := auditListing.page(ctx, s.stmts, p, strings.Join(conds, " AND "), args...)
	if err != nil {
		return nil, err
	}
	return out, s.auditTargets(ctx, out.Items)
}

// auditTargets fills the targets of entries.
func (s *Store) auditTargets(ctx context.Context, entries []kanban.AuditEntry) error {
	if len(entries) == 0 {
		return nil
	}
	idx := make(map[string]int, len(entries))
	args := make([]any, len(entries))
	for i, e := range entries {
		idx[e.ID], args[i] = i, e.ID
	}
	rows, err := s.db.QueryContext(ctx, s.stmts.text(`SELECT audit_id, target_id FROM audit_targets WHERE audit_id IN (`+
		strings.TrimSuffix(strings.Repeat("?, ", len(entries)), ", ")+`) ORDER BY audit_id, position`), args...)
	if err != nil {
		return fmt.Errorf("list audit targets: %w", err)
	}
	defer func() { _ = rows.Close() }()
	for rows.Next() {
		var id, target string
		if err := rows.Scan(&id, &target); err != nil {
			return fmt.Errorf("list audit targets: %w", err)
		}
		e := &entries[idx[id]]
		e.Targets = append(e.Targets, target)
	}
	return rows.Err()
}

// PruneAudit deletes the entries older than before (and their targets).
func (s *Store) PruneAudit(ctx context.Context, before time.Time) (int64, error) {
	ctx = kanban.WithAudit(ctx, nil)
	var n int64
	err := s.tx(ctx, func(tx txn) error {
		if _, err := tx.ExecContext(ctx, `DELETE FROM audit_targets WHERE audit_id IN (SELECT id FROM audit_log WHERE created_at < ?)`, fmtTime(before)); err != nil {
			return err
		}
		res, err := tx.ExecContext(ctx, `DELETE FROM audit_log WHERE created_at < ?`, fmtTime(before))
		if err != nil {
			return err
		}
		n, err = res.RowsAffected()
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("prune audit: %w", err)
	}
	return n, nil
}
