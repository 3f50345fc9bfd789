package store

import (
	"context"
	"database/sql"
	"fmt"
	"sort"
)

// sqliteTable is what Copy needs to know of one source table.
type sqliteTable struct {
	name     string
	cols     []string // in declaration order
	pk       []int    // indexes into cols of the primary key
	selfRefs []int    // indexes of columns referencing this table
	deps     []string // other tables this one references
}

// sqliteTables reads the tables of a SQLite schema from its catalog,
// parents before the tables that reference them. Left out: each side's
// own schema_migrations, the cluster_ tables, which hold what running
// backends coordinate through rather than the board, and task_blocks,
// which the target's triggers rebuild from the tasks copied.
func sqliteTables(ctx context.Context, tx *sql.Tx) ([]sqliteTable, error) {
	names, err := scanStrings(ctx, tx, `SELECT name FROM sqlite_master WHERE type = 'table'
		AND name NOT LIKE 'sqlite_%' AND name NOT LIKE 'cluster_%' AND name <> 'schema_migrations'
		AND name <> 'task_blocks' ORDER BY name`)
	if err != nil {
		return nil, err
	}
	byName := map[string]*sqliteTable{}
	for _, n := range names {
		t, err := readSQLiteTable(ctx, tx, n)
		if err != nil {
			return nil, err
		}
		byName[n] = t
	}
	return orderTables(byName)
}

func readSQLiteTable(ctx context.Context, tx *sql.Tx, name string) (*sqliteTable, error) {
	t := &sqliteTable{name: name}
	rows, err := tx.QueryContext(ctx, `SELECT name, pk FROM pragma_table_info(?) ORDER BY cid`, name)
	if err != nil {
		return nil, err
	}
	type pkCol struct{ order, idx int }
	var pks []pkCol
	for rows.Next() {
		var col string
		var pk int
		if err := rows.Scan(&col, &pk); err != nil {
			_ = rows.Close()
			return nil, err
		}
		if pk > 0 {
			pks = append(pks, pkCol{pk, len(t.cols)})
		}
		t.cols = append(t.cols, col)
	}
	if err := closeRows(rows); err != nil {
		return nil, err
	}
	sort.Slice(pks, func(i, j int) bool { return pks[i].order < pks[j].order })
	for _, p := range pks {
		t.pk = append(t.pk, p.idx)
	}
	fks, err := tx.QueryContext(ctx, `SELECT "table", "from" FROM pragma_foreign_key_list(?)`, name)
	if err != nil {
		return nil, err
	}
	for fks.Next() {
		var parent, from string
		if err := fks.Scan(&parent, &from); err != nil {
			_ = fks.Close()
			return nil, err
		}
		if parent != name {
			t.deps = append(t.deps, parent)
			continue
		}
		for i, c := range t.cols {
			if c == from {
				t.selfRefs = append(t.selfRefs, i)
			}
		}
	}
	if err := closeRows(fks); err != nil {
		return nil, err
	}
	if len(t.selfRefs) > 0 && len(t.pk) == 0 {
		return nil, fmt.Errorf("table %s references itself but has no primary key", name)
	}
	return t, nil
}

// orderTables sorts tables so that each comes after those it references
// (ties by name, for a stable order).
func orderTables(byName map[string]*sqliteTable) ([]sqliteTable, error) {
	var (
		out   []sqliteTable
		state = map[string]int{} // 1 visiting, 2 done
		visit func(n string) error
	)
	visit = func(n string) error {
		t, ok := byName[n]
		if !ok {
			return fmt.Errorf("a table references %s, which does not exist", n)
		}
		switch state[n] {
		case 1:
			return fmt.Errorf("tables reference each other in a cycle through %s", n)
		case 2:
			return nil
		}
		state[n] = 1
		deps := append([]string(nil), t.deps...)
		sort.Strings(deps)
		for _, d := range deps {
			if err := visit(d); err != nil {
				return err
			}
		}
		state[n] = 2
		out = append(out, *t)
		return nil
	}
	names := make([]string, 0, len(byName))
	for n := range byName {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if err := visit(n); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func scanStrings(ctx context.Context, tx *sql.Tx, query string, args ...any) ([]string, error) {
	rows, err := tx.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			_ = rows.Close()
			return nil, err
		}
		out = append(out, s)
	}
	return out, closeRows(rows)
}

func closeRows(rows *sql.Rows) error {
	err := rows.Err()
	if cerr := rows.Close(); err == nil {
		err = cerr
	}
	return err
}
