package store

import (
	"context"
	"database/sql"
	"embed"
	"fmt"
	"io/fs"
	"sort"
	"strconv"
	"strings"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

//go:embed migrations/*.sql
var migrationFS embed.FS

type migration struct {
	version int
	name    string
	sql     string
}

// A migration is a file migrations/NNNN_name.sql that both engines run,
// or a pair NNNN_name.sqlite.sql and NNNN_name.postgres.sql where no
// portable form of the change exists: each engine runs its own file.

// loadMigrations returns the migrations eng runs, in version order.
func loadMigrations(eng Engine) ([]migration, error) { return readMigrations(migrationFS, eng) }

// readMigrations reads the migrations eng runs from fsys's migrations/.
func readMigrations(fsys fs.FS, eng Engine) ([]migration, error) {
	names, err := fs.Glob(fsys, "migrations/*.sql")
	if err != nil {
		return nil, err
	}
	type files struct{ common, sqlite, postgres string }
	byVersion := map[int]*files{}
	for _, n := range names {
		base := strings.TrimPrefix(n, "migrations/")
		v, err := strconv.Atoi(strings.SplitN(base, "_", 2)[0])
		if err != nil {
			return nil, fmt.Errorf("migration %s: name must start with a number", base)
		}
		f := byVersion[v]
		if f == nil {
			f = &files{}
			byVersion[v] = f
		}
		slot := &f.common
		switch {
		case strings.HasSuffix(base, ".sqlite.sql"):
			slot = &f.sqlite
		case strings.HasSuffix(base, ".postgres.sql"):
			slot = &f.postgres
		}
		if *slot != "" {
			return nil, fmt.Errorf("migrations %s and %s have the same version", *slot, base)
		}
		*slot = base
	}
	var ms []migration
	for v, f := range byVersion {
		engineSpecific := f.sqlite != "" || f.postgres != ""
		if f.common != "" && engineSpecific || f.common == "" && (f.sqlite == "" || f.postgres == "") {
			return nil, fmt.Errorf("migration %d: want one NNNN_name.sql, or both NNNN_name.sqlite.sql and NNNN_name.postgres.sql", v)
		}
		name := f.common
		if name == "" {
			name = map[Engine]string{SQLite: f.sqlite, Postgres: f.postgres}[eng]
		}
		b, err := fs.ReadFile(fsys, "migrations/"+name)
		if err != nil {
			return nil, err
		}
		ms = append(ms, migration{version: v, name: name, sql: string(b)})
	}
	sort.Slice(ms, func(i, j int) bool { return ms[i].version < ms[j].version })
	return ms, nil
}

// MigrationCount is how many migrations this binary applies to a fresh
// database (versions may skip numbers reserved for other changes).
func MigrationCount() int {
	ms, err := loadMigrations(SQLite)
	if err != nil {
		return 0
	}
	return len(ms)
}

// LatestVersion is the schema version this binary writes.
func LatestVersion() int {
	ms, err := loadMigrations(SQLite)
	if err != nil || len(ms) == 0 {
		return 0
	}
	return ms[len(ms)-1].version
}

// migrationConn is what a *sql.DB and a *sql.Conn offer migrate.
type migrationConn interface {
	BeginTx(ctx context.Context, opts *sql.TxOptions) (*sql.Tx, error)
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// migrate applies pending migrations, each in its own transaction, and
// refuses a database whose schema is newer than this binary knows. It
// returns the names of the migrations it applied. On PostgreSQL the
// caller holds the migration lock (pgMigrate), so backends starting
// together apply each migration once.
func migrate(ctx context.Context, db migrationConn, eng Engine) ([]string, error) {
	ms, err := loadMigrations(eng)
	if err != nil {
		return nil, fmt.Errorf("migrate: %w", err)
	}
	return migrateTo(ctx, db, eng, ms)
}

// migrateTo applies the migrations of ms the database lacks (ms, in
// version order, is a binary's migrations: migrate's own, or in tests
// those of a later release).
func migrateTo(ctx context.Context, db migrationConn, eng Engine, ms []migration) ([]string, error) {
	if _, err := db.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
		version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)`); err != nil {
		return nil, fmt.Errorf("migrate: %w", err)
	}
	var current int
	if err := db.QueryRowContext(ctx, `SELECT COALESCE(MAX(version), 0) FROM schema_migrations`).Scan(&current); err != nil {
		return nil, fmt.Errorf("migrate: %w", err)
	}
	latest := 0
	if len(ms) > 0 {
		latest = ms[len(ms)-1].version
	}
	if current > latest {
		return nil, &NewerSchemaError{Database: current, Binary: latest}
	}
	done, err := appliedVersions(ctx, db)
	if err != nil {
		return nil, err
	}
	record := `INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)`
	if eng == Postgres {
		record = rebind(record)
	}
	var applied []string
	for _, m := range ms {
		if done[m.version] {
			continue // versions are applied once each, whatever order they arrived in
		}
		if err := applyMigration(ctx, db, m, record); err != nil {
			return applied, err
		}
		applied = append(applied, m.name)
	}
	return applied, nil
}

// applyMigration runs m and records it, in one transaction.
func applyMigration(ctx context.Context, db migrationConn, m migration, record string) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("migrate %s: %w", m.name, err)
	}
	if _, err := tx.ExecContext(ctx, m.sql); err != nil {
		_ = tx.Rollback()
		return fmt.Errorf("migrate %s: %w", m.name, err)
	}
	if _, err := tx.ExecContext(ctx, record, m.version, m.name, fmtTime(kanban.Now())); err != nil {
		_ = tx.Rollback()
		return fmt.Errorf("migrate %s: %w", m.name, err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("migrate %s: %w", m.name, err)
	}
	return nil
}

// appliedVersions returns the migration versions recorded as applied.
func appliedVersions(ctx context.Context, db migrationConn) (map[int]bool, error) {
	rows, err := db.QueryContext(ctx, `SELECT version FROM schema_migrations`)
	if err != nil {
		return nil, fmt.Errorf("migrate: %w", err)
	}
	defer rows.Close()
	out := map[int]bool{}
	for rows.Next() {
		var v int
		if err := rows.Scan(&v); err != nil {
			return nil, fmt.Errorf("migrate: %w", err)
		}
		out[v] = true
	}
	return out, rows.Err()
}
