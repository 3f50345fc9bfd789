package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
)

// CopyTable is one table a copy wrote: its name and row count (equal in
// the source and the target once the copy has succeeded).
type CopyTable struct {
	Name string
	Rows int
}

// Copy copies every table of the SQLite store src into the PostgreSQL
// store dst, rows as they are (ids and timestamps kept), in one target
// transaction: all of it lands or none. Both stores are at this binary's
// schema version (opening migrated them). It refuses a target that holds
// any row, and after writing compares every table's row count in the
// target with the source's before committing. The source is read in one
// transaction, so writers on it wait until the copy is done.
func Copy(ctx context.Context, src, dst *Store) ([]CopyTable, error) {
	if src.eng != SQLite || dst.eng != Postgres {
		return nil, errors.New("copy: the source must be a SQLite database and the target a PostgreSQL database")
	}
	stx, err := src.db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, fmt.Errorf("copy: read source: %w", err)
	}
	defer func() { _ = stx.Rollback() }()
	tables, err := sqliteTables(ctx, stx)
	if err != nil {
		return nil, fmt.Errorf("copy: source schema: %w", err)
	}
	conn, err := dst.db.Conn(ctx)
	if err != nil {
		return nil, fmt.Errorf("copy: target: %w", err)
	}
	defer func() { _ = conn.Close() }()
	var out []CopyTable
	err = conn.Raw(func(dc any) error {
		pc := dc.(*stdlib.Conn).Conn()
		out, err = copyInto(ctx, stx, pc, tables)
		return err
	})
	return out, err
}

// copyInto writes tables into the target connection pc in one transaction.
func copyInto(ctx context.Context, stx *sql.Tx, pc *pgx.Conn, tables []sqliteTable) ([]CopyTable, error) {
	ttx, err := pc.Begin(ctx)
	if err != nil {
		return nil, fmt.Errorf("copy: target: %w", err)
	}
	defer func() { _ = ttx.Rollback(context.WithoutCancel(ctx)) }()
	for _, t := range tables {
		var n int
		// t.name comes from the source's catalog and is checked against
		// the target's; quoted as an identifier all the same.
		if err := ttx.QueryRow(ctx, `SELECT COUNT(*) FROM `+pgx.Identifier{t.name}.Sanitize()).Scan(&n); err != nil {
			return nil, fmt.Errorf("copy: the target has no table %s like the source's (migrate both with this binary): %w", t.name, err)
		}
		if n > 0 {
			return nil, fmt.Errorf("copy: the target database is not empty (table %s has %d rows); copy into a new, empty database", t.name, n)
		}
	}
	var out []CopyTable
	for _, t := range tables {
		n, err := copyTable(ctx, stx, ttx, t)
		if err != nil {
			return nil, fmt.Errorf("copy %s: %w", t.name, err)
		}
		out = append(out, CopyTable{Name: t.name, Rows: n})
	}
	if err := verifyCounts(ctx, stx, ttx, out); err != nil {
		return nil, err
	}
	if err := ttx.Commit(ctx); err != nil {
		return nil, fmt.Errorf("copy: commit: %w", err)
	}
	return out, nil
}

// copyTable streams t's rows into the target with COPY. Columns that
// reference t itself are written NULL first and set once every row is
// in, so rows may come in any order.
func copyTable(ctx context.Context, stx *sql.Tx, ttx pgx.Tx, t sqliteTable) (int, error) {
	rows, err := stx.QueryContext(ctx, `SELECT `+quoteCols(t.cols)+` FROM `+pgx.Identifier{t.name}.Sanitize())
	if err != nil {
		return 0, err
	}
	defer func() { _ = rows.Close() }()
	var selfRefs [][]any // primary key values then self-referencing values, per row
	src := &rowsSource{rows: rows, n: len(t.cols), each: func(vals []any) {
		if len(t.selfRefs) == 0 {
			return
		}
		keep := make([]any, 0, len(t.pk)+len(t.selfRefs))
		for _, i := range t.pk {
			keep = append(keep, vals[i])
		}
		for _, i := range t.selfRefs {
			keep = append(keep, vals[i])
			vals[i] = nil
		}
		selfRefs = append(selfRefs, keep)
	}}
	n, err := ttx.CopyFrom(ctx, pgx.Identifier{t.name}, t.cols, src)
	if err != nil {
		return 0, err
	}
	if err := rows.Err(); err != nil {
		return 0, err
	}
	return int(n), restoreSelfRefs(ctx, ttx, t, selfRefs)
}

// restoreSelfRefs sets the self-referencing columns copyTable held back.
func restoreSelfRefs(ctx context.Context, ttx pgx.Tx, t sqliteTable, kept [][]any) error {
	if len(kept) == 0 {
		return nil
	}
	var sets, conds []string
	for j, i := range t.selfRefs {
		sets = append(sets, fmt.Sprintf("%s = $%d", pgx.Identifier{t.cols[i]}.Sanitize(), len(t.pk)+j+1))
	}
	for j, i := range t.pk {
		conds = append(conds, fmt.Sprintf("%s = $%d", pgx.Identifier{t.cols[i]}.Sanitize(), j+1))
	}
	q := `UPDATE ` + pgx.Identifier{t.name}.Sanitize() + ` SET ` + strings.Join(sets, ", ") + ` WHERE ` + strings.Join(conds, " AND ")
	batch := &pgx.Batch{}
	for _, vals := range kept {
		if slices.ContainsFunc(vals[len(t.pk):], func(v any) bool { return v != nil }) {
			batch.Queue(q, vals...)
		}
	}
	return ttx.SendBatch(ctx, batch).Close()
}

// verifyCounts compares each copied table's rows in the target with the
// source's.
func verifyCounts(ctx context.Context, stx *sql.Tx, ttx pgx.Tx, copied []CopyTable) error {
	for _, c := range copied {
		var want, got int
		q := `SELECT COUNT(*) FROM ` + pgx.Identifier{c.Name}.Sanitize()
		if err := stx.QueryRowContext(ctx, q).Scan(&want); err != nil {
			return fmt.Errorf("copy: count source %s: %w", c.Name, err)
		}
		if err := ttx.QueryRow(ctx, q).Scan(&got); err != nil {
			return fmt.Errorf("copy: count target %s: %w", c.Name, err)
		}
		if got != want || c.Rows != want {
			return fmt.Errorf("copy: table %s has %d rows in the target after copying %d, want %d; nothing was copied", c.Name, got, c.Rows, want)
		}
	}
	return nil
}

// rowsSource feeds database/sql rows to COPY, calling each on every row's
// values before they are sent.
type rowsSource struct {
	rows *sql.Rows
	n    int
	each func([]any)
	vals []any
	err  error
}

func (r *rowsSource) Next() bool {
	if !r.rows.Next() {
		return false
	}
	r.vals = make([]any, r.n)
	ptrs := make([]any, r.n)
	for i := range ptrs {
		ptrs[i] = &r.vals[i]
	}
	if r.err = r.rows.Scan(ptrs...); r.err != nil {
		return false
	}
	r.each(r.vals)
	return true
}

func (r *rowsSource) Values() ([]any, error) { return r.vals, r.err }
func (r *rowsSource) Err() error             { return errors.Join(r.err, r.rows.Err()) }

func quoteCols(cols []string) string {
	q := make([]string, len(cols))
	for i, c := range cols {
		q[i] = pgx.Identifier{c}.Sanitize()
	}
	return strings.Join(q, ", ")
}
