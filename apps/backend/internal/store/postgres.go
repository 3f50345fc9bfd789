package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
)

// Pool and session defaults of a PostgreSQL store. The URL may override
// each (see ParsePostgresURL).
const (
	defaultPoolMaxConns  = 10
	maxPoolMaxConns      = 200
	defaultStmtTimeout   = "30s"
	defaultIdleInTx      = "60s"
	defaultConnectTimout = 10 * time.Second
	// maxTxAttempts bounds how often a transaction that lost a
	// serialization conflict runs again; retryBackoff is the first pause.
	maxTxAttempts = 20
	retryBackoff  = time.Millisecond
	// migrationLockKey is the advisory lock backends hold while migrating.
	migrationLockKey = 0x6b616e646576 // "kandev"
)

// PostgresConfig is a parsed PostgreSQL URL: the connection settings and
// the pool bound.
type PostgresConfig struct {
	Conn *pgx.ConnConfig
	// MaxConns bounds the pool (URL parameter pool_max_conns).
	MaxConns int
}

// IsPostgresURL reports whether u selects PostgreSQL.
func IsPostgresURL(u string) bool {
	return strings.HasPrefix(u, "postgres://") || strings.HasPrefix(u, "postgresql://")
}

// ParsePostgresURL parses a postgres:// URL. Besides libpq's settings it
// takes pool_max_conns (default 10, at most 200); statement_timeout
// (default 30s), idle_in_transaction_session_timeout (default 60s) and
// application_name (default kandev) are passed to the server, and jit
// (default off: the store's statements are short index walks, for which
// compiling a plan costs more than it saves). Errors never
// repeat the URL, which may hold a password.
func ParsePostgresURL(u string) (*PostgresConfig, error) {
	if !IsPostgresURL(u) {
		return nil, errors.New("database URL must start with postgres:// or postgresql://")
	}
	pu, err := url.Parse(u)
	if err != nil {
		return nil, errors.New("database URL is not a valid URL")
	}
	q := pu.Query()
	maxConns := defaultPoolMaxConns
	if v := q.Get("pool_max_conns"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > maxPoolMaxConns {
			return nil, fmt.Errorf("database URL: pool_max_conns must be a number from 1 to %d", maxPoolMaxConns)
		}
		maxConns = n
	}
	q.Del("pool_max_conns")
	pu.RawQuery = q.Encode()
	cfg, err := pgx.ParseConfig(pu.String())
	if err != nil {
		return nil, errors.New("database URL: not a valid PostgreSQL connection URL")
	}
	if q.Get("connect_timeout") == "" {
		cfg.ConnectTimeout = defaultConnectTimout
	}
	for k, v := range map[string]string{"statement_timeout": defaultStmtTimeout,
		"idle_in_transaction_session_timeout": defaultIdleInTx, "application_name": "kandev", "jit": "off"} {
		if _, ok := cfg.RuntimeParams[k]; !ok {
			cfg.RuntimeParams[k] = v
		}
	}
	return &PostgresConfig{Conn: cfg, MaxConns: maxConns}, nil
}

// RedactURL returns u with its password replaced, for logs and banners.
func RedactURL(u string) string {
	pu, err := url.Parse(u)
	if err != nil {
		return "(invalid URL)"
	}
	q := pu.Query()
	if q.Has("password") {
		q.Set("password", "xxxxx")
		pu.RawQuery = q.Encode()
	}
	return pu.Redacted()
}

// pgParts is what a PostgreSQL store holds besides its pool.
type pgParts struct {
	cfg *PostgresConfig
	// retries counts transactions run again after a serialization failure.
	retries atomic.Int64
	// closers run on Close (listeners, leases), last added first.
	closers []func() error
}

func (p *pgParts) close() error {
	var errs []error
	for i := len(p.closers) - 1; i >= 0; i-- {
		errs = append(errs, p.closers[i]())
	}
	return errors.Join(errs...)
}

// OpenPostgres connects to the PostgreSQL database of rawURL (see
// ParsePostgresURL) and applies pending migrations. A database written by
// a newer binary is refused.
func OpenPostgres(ctx context.Context, rawURL string) (*Store, error) {
	cfg, err := ParsePostgresURL(rawURL)
	if err != nil {
		return nil, err
	}
	db := openPGPool(cfg)
	if err := db.PingContext(ctx); err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("open database: %w", err)
	}
	// A newer schema is refused in a read-only transaction, before the
	// migration lock and migrate's CREATE TABLE; migrate checks again
	// under the lock (a backend may have upgraded the schema meanwhile).
	if err := pgCheckNotNewer(ctx, db); err != nil {
		_ = db.Close()
		return nil, err
	}
	s := &Store{db: db, eng: Postgres, stmts: newStmtCache(db, Postgres), pg: &pgParts{cfg: cfg}}
	if s.migrated, err = s.pgMigrate(ctx); err != nil {
		_ = db.Close()
		return nil, err
	}
	return s, nil
}

// openPGPool returns the bounded pool of cfg (not yet connected).
func openPGPool(cfg *PostgresConfig) *sql.DB {
	db := stdlib.OpenDB(*cfg.Conn)
	db.SetMaxOpenConns(cfg.MaxConns)
	db.SetMaxIdleConns(cfg.MaxConns)
	db.SetConnMaxIdleTime(5 * time.Minute)
	db.SetConnMaxLifetime(time.Hour)
	return db
}

// pgCheckNotNewer refuses a database whose schema is newer than this
// binary's, reading it only.
func pgCheckNotNewer(ctx context.Context, db *sql.DB) error {
	v, err := pgSchemaVersion(ctx, db)
	if err != nil {
		return err
	}
	return checkNotNewer(v)
}

// pgMigrate migrates under the migration advisory lock, on one connection.
func (s *Store) pgMigrate(ctx context.Context) ([]string, error) {
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return nil, fmt.Errorf("migrate: %w", err)
	}
	defer func() { _ = conn.Close() }()
	if _, err := conn.ExecContext(ctx, `SELECT pg_advisory_lock($1)`, migrationLockKey); err != nil {
		return nil, fmt.Errorf("migrate: lock: %w", err)
	}
	applied, err := migrate(ctx, conn, Postgres)
	if _, uerr := conn.ExecContext(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock($1)`, migrationLockKey); uerr != nil && err == nil {
		err = fmt.Errorf("migrate: unlock: %w", uerr)
	}
	return applied, err
}

// pgTx runs fn in a SERIALIZABLE transaction, again from the start (after
// a short random pause, doubling up to 64 ms) while it ends in a
// serialization failure or a deadlock, at most maxTxAttempts times (about
// a second of pauses in all). The caller holds writeMu. SERIALIZABLE makes every
// read-check-write of the store (dense task positions, wip limits, first
// answer wins, dependency cycles, message sequence numbers) as safe
// across backends as SQLite's single writer makes it in one process.
func (s *Store) pgTx(ctx context.Context, fn func(tx txn) error) error {
	opts := &sql.TxOptions{Isolation: sql.LevelSerializable}
	pause := retryBackoff
	for attempt := 1; ; attempt++ {
		err := s.runTx(ctx, opts, fn)
		if err == nil || !isRetryable(err) || attempt == maxTxAttempts {
			return err
		}
		s.pg.retries.Add(1)
		d := time.Duration(float64(pause) * (0.5 + rand.Float64())) //nolint:gosec // retry jitter needs no cryptographic randomness
		select {
		case <-ctx.Done():
			return err
		case <-time.After(d):
		}
		pause = min(pause*2, 64*time.Millisecond)
	}
}

// TxRetries counts the PostgreSQL transactions that ran again after a
// serialization failure (0 on SQLite).
func (s *Store) TxRetries() int64 {
	if s.pg == nil {
		return 0
	}
	return s.pg.retries.Load()
}
