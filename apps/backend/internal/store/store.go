// Package store implements the kanban service interfaces on SQLite
// (modernc.org/sqlite, pure Go). It owns the schema (numbered migrations in
// migrations/), transactions and pagination cursors. It imports kanban and
// the standard library only; it must not import transports (action, ws, mcp).
package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
	_ "modernc.org/sqlite" // registers the "sqlite" driver
)

// Store is the SQLite implementation of kanban.Store.
type Store struct {
	db *sql.DB
	// stmts holds the prepared statements every query runs through.
	stmts *stmtCache
	// writes runs this process's write transactions, one batch at a time
	// (group commit, groupcommit.go). Left to SQLite, concurrent BEGIN
	// IMMEDIATE waiters poll in its busy handler and can starve past
	// busy_timeout (SQLITE_BUSY) under load.
	writes *committer
	ckpt   *checkpointer
}

var _ kanban.Store = (*Store)(nil)

// Open opens (creating if needed) the database file kandev.db in dir and
// applies pending migrations. A database written by a newer binary is refused.
func Open(ctx context.Context, dir string) (*Store, error) {
	path := filepath.Join(dir, "kandev.db")
	// The DSN is built from our own constants and the data dir path only;
	// _pragma values are executed as SQL, so nothing caller-supplied goes here.
	// WAL checkpoints run in the background (checkpointer), not in commits.
	dsn := "file:" + path + "?_pragma=journal_mode(WAL)&_pragma=busy_timeout(5000)" +
		"&_pragma=synchronous(NORMAL)&_pragma=foreign_keys(1)&_pragma=wal_autocheckpoint(0)&_pragma=temp_store(MEMORY)&_txlock=immediate"
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("open database: %w", err)
	}
	db.SetMaxOpenConns(8)
	db.SetMaxIdleConns(8)
	db.SetConnMaxIdleTime(5 * time.Minute)
	if err := db.PingContext(ctx); err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("open database: %w", err)
	}
	if err := migrate(ctx, db); err != nil {
		_ = db.Close()
		return nil, err
	}
	stmts, ckpt := newStmtCache(db), startCheckpointer(db)
	return &Store{db: db, stmts: stmts, ckpt: ckpt, writes: startCommitter(db, stmts, ckpt.committed)}, nil
}

// Close finishes the writes already queued, stops the background
// checkpoints and closes the prepared statements and the database (which
// checkpoints what is left of the WAL). Writes after Close fail.
func (s *Store) Close() error {
	s.writes.close()
	return errors.Join(s.ckpt.close(), s.stmts.close(), s.db.Close())
}

// DB exposes the handle for tests and benchmarks in other packages that
// need to count rows; production code goes through the service methods.
func (s *Store) DB() *sql.DB { return s.db }

// tx runs fn in a write transaction (BEGIN IMMEDIATE through the DSN),
// possibly shared with other callers' fns (group commit: see
// groupcommit.go). fn's work commits when it returns nil and is undone
// when it returns an error or panics, without affecting the others; tx
// returns nil only once that work is committed. fn must do all its reads
// and writes through tx: a read on the pool would not see the work of
// the writers before it in the batch. A full disk or an I/O error is
// UNAVAILABLE (see storageError).
func (s *Store) tx(ctx context.Context, fn func(tx txn) error) error {
	return storageError(s.writes.tx(ctx, fn))
}

// queryer is what *sql.DB, *sql.Tx, the statement cache (reads on the
// pool) and txn (a write transaction) offer.
type queryer interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// rowSource is what both *sql.Row and *sql.Rows offer a scan function.
type rowSource interface{ Scan(dest ...any) error }

// scanAll runs a query and scans every row with scan.
func scanAll[T any](ctx context.Context, q queryer, scan func(rowSource) (*T, error), query string, args ...any) (out []T, err error) {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer func() {
		if cerr := rows.Close(); cerr != nil && err == nil {
			err = cerr
		}
	}()
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, *v)
	}
	return out, rows.Err()
}

// nullString maps "" to SQL NULL, for optional foreign and unique keys.
func nullString(s string) sql.NullString { return sql.NullString{String: s, Valid: s != ""} }

// setIf sets *dst to *v when v is not nil.
func setIf[T any](dst *T, v *T) {
	if v != nil {
		*dst = *v
	}
}

// notFound maps sql.ErrNoRows to a NOT_FOUND error for kind.
func notFound(err error, kind string) error {
	if errors.Is(err, sql.ErrNoRows) {
		return kanban.NotFound(kind)
	}
	return err
}
