package reliability

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/kandev/kandev/apps/backend/internal/store"
)

// openStore opens a stopped server's database (which also re-applies
// migrations: none may be pending, and applying none must be harmless).
func openStore(ctx context.Context, dataDir string) (*store.Store, error) {
	st, err := store.Open(ctx, dataDir)
	if err != nil {
		return nil, fmt.Errorf("reopen database: %w", err)
	}
	return st, nil
}

// inStore opens a stopped server's database, runs check on it, then
// PRAGMA integrity_check; a database that does not reopen fails the
// scenario's "database reopens" check.
func inStore(ctx context.Context, sc *scenarioRun, dataDir string, check func(db *sql.DB)) {
	st, err := openStore(ctx, dataDir)
	if err != nil {
		sc.checkf("database reopens", false, "%v", err)
		return
	}
	defer func() { _ = st.Close() }()
	check(st.DB())
	sc.check(integrity(ctx, st.DB()))
}

// ack is an acknowledged task create.
type ack struct {
	id, title string
}

// checkAcks looks every acknowledged create up by its unique title: it
// must exist exactly once, with the acknowledged id. It returns how many
// are lost (missing, duplicated or with another id).
func checkAcks(ctx context.Context, db *sql.DB, acks []ack) (int, error) {
	lost := 0
	for _, a := range acks {
		rows, err := db.QueryContext(ctx, `SELECT id FROM tasks WHERE title = ?`, a.title)
		if err != nil {
			return 0, err
		}
		var ids []string
		for rows.Next() {
			var id string
			if err := rows.Scan(&id); err != nil {
				_ = rows.Close()
				return 0, err
			}
			ids = append(ids, id)
		}
		_ = rows.Close()
		if len(ids) != 1 || ids[0] != a.id {
			lost++
		}
	}
	return lost, nil
}

// countLike counts tasks whose title starts with prefix.
func countLike(ctx context.Context, db *sql.DB, prefix string) (int, error) {
	var n int
	err := db.QueryRowContext(ctx, `SELECT COUNT(*) FROM tasks WHERE substr(title, 1, ?) = ?`, len(prefix), prefix).Scan(&n)
	return n, err
}

// positionsDense checks that every step's task positions are 0..n-1:
// they are the ranks of the stored keys (store's task_position.go), so
// the keys must be unique within the step and the step's task_blocks
// counts, which ranks are computed from, those of its tasks.
func positionsDense(ctx context.Context, db *sql.DB) check {
	const name = "positions per step are a permutation"
	rows, err := db.QueryContext(ctx, `SELECT workflow_step_id, COUNT(*), COUNT(DISTINCT position),
		(SELECT COUNT(*) FROM (SELECT position >> 30 AS block, COUNT(*) AS n FROM tasks k
			WHERE k.workflow_step_id = t.workflow_step_id GROUP BY position >> 30) c
		 LEFT JOIN task_blocks b ON b.step_id = t.workflow_step_id AND b.block = c.block
		 WHERE b.n IS NULL OR b.n <> c.n)
		FROM tasks t GROUP BY workflow_step_id`)
	if err != nil {
		return checkf(name, false, "query: %v", err)
	}
	defer func() { _ = rows.Close() }()
	steps, bad := 0, []string{}
	for rows.Next() {
		var step string
		var n, distinct, miscounted int
		if err := rows.Scan(&step, &n, &distinct, &miscounted); err != nil {
			return checkf(name, false, "scan: %v", err)
		}
		steps++
		if distinct != n || miscounted != 0 {
			bad = append(bad, fmt.Sprintf("%d tasks with %d distinct keys, %d blocks miscounted", n, distinct, miscounted))
		}
	}
	if err := rows.Err(); err != nil {
		return checkf(name, false, "rows: %v", err)
	}
	if len(bad) == 0 {
		bad = []string{"none"}
	}
	return checkf(name, bad[0] == "none", "%d steps checked; not dense: %s", steps, strings.Join(bad, ", "))
}

// wipHeld checks that no step holds more live tasks than its wip_limit.
func wipHeld(ctx context.Context, db *sql.DB) check {
	rows, err := db.QueryContext(ctx, `SELECT s.name, s.wip_limit, COUNT(t.id) FROM workflow_steps s
		LEFT JOIN tasks t ON t.workflow_step_id = s.id AND t.archived_at IS NULL
		WHERE s.wip_limit > 0 GROUP BY s.id`)
	if err != nil {
		return checkf("WIP limits held", false, "query: %v", err)
	}
	defer func() { _ = rows.Close() }()
	var parts []string
	ok := true
	for rows.Next() {
		var name string
		var limit, n int
		if err := rows.Scan(&name, &limit, &n); err != nil {
			return checkf("WIP limits held", false, "scan: %v", err)
		}
		ok = ok && n <= limit
		parts = append(parts, fmt.Sprintf("%s %d of %d", name, n, limit))
	}
	return checkf("WIP limits held", ok && len(parts) > 0, "%s", strings.Join(parts, ", "))
}

// integrity runs PRAGMA integrity_check and foreign_key_check.
func integrity(ctx context.Context, db *sql.DB) check {
	var res string
	if err := db.QueryRowContext(ctx, `PRAGMA integrity_check`).Scan(&res); err != nil {
		return checkf("PRAGMA integrity_check ok", false, "%v", err)
	}
	rows, err := db.QueryContext(ctx, `PRAGMA foreign_key_check`)
	if err != nil {
		return checkf("PRAGMA integrity_check ok", false, "foreign_key_check: %v", err)
	}
	fk := 0
	for rows.Next() {
		fk++
	}
	_ = rows.Close()
	return checkf("PRAGMA integrity_check ok", res == "ok" && fk == 0, "integrity_check: %s; foreign key violations: %d", res, fk)
}

// scalar runs a one-number query.
func scalar(ctx context.Context, db *sql.DB, query string, args ...any) (int, error) {
	var n int
	err := db.QueryRowContext(ctx, query, args...).Scan(&n)
	return n, err
}
