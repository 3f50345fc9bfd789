// Package store implements the kanban service interfaces on SQLite
// (modernc.org/sqlite, pure Go; the embedded default) and on PostgreSQL
// (pgx v5; the store several backends share). It owns the schema (numbered
// migrations in migrations/), transactions, pagination cursors and, on
// PostgreSQL, what backends sharing a database coordinate through: the
// event log, backend leases and advisory locks. It also owns what is
// done to a database file as a whole: the read-only schema version check
// that refuses a newer database (schema_check.go) and SQLite backups and
// restores (backup.go, restore.go). It imports kanban, the database
// drivers, the OpenTelemetry trace API (its spans: trace.go) and the
// standard library only; it must not import transports (action, ws, mcp).
package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
	_ "modernc.org/sqlite" // registers the "sqlite" driver
)

// Store is the SQLite and PostgreSQL implementation of kanban.Store.
type Store struct {
	db  *sql.DB
	eng Engine
	// stmts holds the prepared statements every query runs through.
	stmts *stmtCache
	// writes runs this process's write transactions on SQLite, one batch
	// at a time (group commit, groupcommit.go). Left to SQLite, concurrent
	// BEGIN IMMEDIATE waiters poll in its busy handler and can starve past
	// busy_timeout (SQLITE_BUSY) under load.
	writes *committer
	ckpt   *checkpointer
	// writeMu serialises this process's write transactions on PostgreSQL:
	// it keeps one backend's writers from failing each other's
	// SERIALIZABLE transactions, so only writers on other backends
	// conflict (and run again, pgTx).
	writeMu sync.Mutex
	pg      *pgParts // PostgreSQL only
	// migrated names the migrations opening applied.
	migrated []string
	// observeTx, when set, is told how long each write transaction took
	// (ObserveWrites); pgCommits counts PostgreSQL's committed ones.
	observeTx func(d time.Duration)
	pgCommits atomic.Int64
	// tracer makes the transactions' spans (TraceWith; nil: none).
	tracer trace.Tracer
}

// ObserveWrites has fn told, after each write transaction (a caller's
// Store.tx: on SQLite its wait for and share of a group commit), how long
// it took. Set it before the store serves writes.
func (s *Store) ObserveWrites(fn func(d time.Duration)) { s.observeTx = fn }

// WriteStats counts this process's committed write transactions (on
// SQLite, group commits) and the writes they held (one each on
// PostgreSQL).
func (s *Store) WriteStats() (commits, writes int64) {
	if s.writes != nil {
		return s.writes.batches.Load(), s.writes.writes.Load()
	}
	n := s.pgCommits.Load()
	return n, n
}

// Migrated names the migrations that opening the store applied, oldest
// first (none when it was at this binary's version already).
func (s *Store) Migrated() []string { return s.migrated }

var _ kanban.Store = (*Store)(nil)

// Open opens (creating if needed) the database file kandev.db in dir and
// applies pending migrations. A database written by a newer binary is refused.
func Open(ctx context.Context, dir string) (*Store, error) {
	return OpenSQLiteFile(ctx, filepath.Join(dir, DatabaseFile))
}

// DatabaseFile is the SQLite database's file name in a data dir.
const DatabaseFile = "kandev.db"

// OpenSQLiteFile opens (creating if needed) the SQLite database file path
// and applies pending migrations, as Open does.
func OpenSQLiteFile(ctx context.Context, path string) (*Store, error) {
	// The DSN is built from our own constants and the data dir path only;
	// _pragma values are executed as SQL, so nothing caller-supplied goes here.
	// WAL checkpoints run in the background (checkpointer), not in commits.
	// A newer schema is refused first, by a read that writes nothing: the
	// journal_mode pragma and migrations below would write.
	if err := checkSQLiteNotNewer(ctx, path); err != nil {
		return nil, err
	}
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
	applied, err := migrate(ctx, db, SQLite)
	if err != nil {
		_ = db.Close()
		return nil, err
	}
	stmts, ckpt := newStmtCache(db, SQLite), startCheckpointer(db)
	return &Store{db: db, eng: SQLite, stmts: stmts, ckpt: ckpt, writes: startCommitter(ctx, db, stmts, ckpt.committed),
		migrated: applied}, nil
}

// Close finishes the writes already queued, stops the background work and
// closes the prepared statements and the database (on SQLite, closing
// checkpoints what is left of the WAL). Writes after Close fail.
func (s *Store) Close() error {
	var errs []error
	if s.writes != nil {
		s.writes.close()
	}
	if s.ckpt != nil {
		errs = append(errs, s.ckpt.close())
	}
	if s.pg != nil {
		errs = append(errs, s.pg.close())
	}
	return errors.Join(append(errs, s.stmts.close(), s.db.Close())...)
}

// DB exposes the handle for tests and benchmarks in other packages that
// need to count rows; production code goes through the service methods.
func (s *Store) DB() *sql.DB { return s.db }

// tx runs fn in a write transaction. fn's work commits when it returns
// nil and is undone when it returns an error or panics; tx returns nil
// only once that work is committed. fn must do all its reads and writes
// through tx. Every transaction behaves as if it ran alone, so fn may
// read, check and then write:
//
// On SQLite the transaction is BEGIN IMMEDIATE (through the DSN), possibly
// shared with other callers' fns that run before and after it (group
// commit: see groupcommit.go); a full disk or an I/O error is UNAVAILABLE
// (see storageError). On PostgreSQL writers of one process run one at a
// time (writeMu), each in its own SERIALIZABLE transaction, run again from
// the start when the server reports a serialization failure against
// another backend's writer (pgTx): fn must not have effects outside the
// transaction other than setting its results, since it may run more than
// once.
func (s *Store) tx(ctx context.Context, fn func(tx txn) error) (err error) {
	fn, audit, appended := withAudit(ctx, fn)
	if audit != nil {
		defer func() { audit.Settle(err == nil && *appended) }()
	}
	ctx, span := s.startTx(ctx)
	defer func() { endSpan(span, err) }()
	if s.observeTx != nil {
		start := time.Now()
		defer func() { s.observeTx(time.Since(start)) }()
	}
	if s.eng == Postgres {
		s.writeMu.Lock()
		defer s.writeMu.Unlock()
		err := s.pgTx(ctx, fn)
		if err == nil {
			s.pgCommits.Add(1)
		}
		return err
	}
	return storageError(s.writes.tx(ctx, fn))
}

// runTx runs fn in one PostgreSQL transaction with opts.
func (s *Store) runTx(ctx context.Context, opts *sql.TxOptions, fn func(tx txn) error) (err error) {
	tx, err := s.db.BeginTx(ctx, opts)
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	defer func() {
		if p := recover(); p != nil {
			_ = tx.Rollback()
			panic(p)
		}
		if err != nil {
			_ = tx.Rollback()
		}
	}()
	t := txn{tx: tx, stmts: s.stmts, ctx: ctx, state: &txState{}}
	if err = fn(t); err != nil {
		if isRetryable(t.state.first) && !isRetryable(err) {
			// fn handled a statement's serialization failure and went on
			// in the aborted transaction: the failure is what ended it.
			return fmt.Errorf("%w (after: %w)", t.state.first, err)
		}
		return err
	}
	if err = tx.Commit(); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	return nil
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
