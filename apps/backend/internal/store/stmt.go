package store

import (
	"context"
	"database/sql"
	"errors"
	"sync"

	"go.opentelemetry.io/otel/trace"
)

// maxCachedStmts bounds the statement cache. Our queries are constants and
// listing queries assembled from constants (a few hundred shapes at most);
// a text beyond the bound, such as one with a caller-chosen number of
// placeholders, runs unprepared.
const maxCachedStmts = 512

// stmtCache prepares each distinct SQL text once per database handle, so
// SQLite parses and plans a query once per connection instead of on every
// call: database/sql prepares a cached *sql.Stmt on each pooled connection
// the first time it runs there, and tx.StmtContext reuses that
// connection's statement inside a transaction.
//
// When a text cannot be prepared (or the cache is full or closed) the
// query runs unprepared, so callers see exactly the errors an unprepared
// query gives. A statement is never run twice at once on one connection:
// every query of ours is read to the end (scanAll) or is a single row
// before the next one starts.
//
// On PostgreSQL nothing is prepared here: pgx prepares and caches each
// statement per connection itself. The cache keeps the query rewritten in
// PostgreSQL's placeholders instead (rebind), so each text is rewritten
// once.
//
// The cache is itself the queryer for reads outside a transaction.
type stmtCache struct {
	db     *sql.DB
	pg     bool
	mu     sync.RWMutex
	stmts  map[string]*sql.Stmt
	texts  map[string]string // PostgreSQL: query → rebound query
	closed bool
	// tracer makes each statement's span (Store.TraceWith; nil: none).
	tracer trace.Tracer
}

func newStmtCache(db *sql.DB, eng Engine) *stmtCache {
	return &stmtCache{db: db, pg: eng == Postgres, stmts: map[string]*sql.Stmt{}, texts: map[string]string{}}
}

// text returns query as the engine runs it: on PostgreSQL with $n
// placeholders (rewritten once per text, within the cache's bound).
func (c *stmtCache) text(query string) string {
	if !c.pg {
		return query
	}
	c.mu.RLock()
	t, ok := c.texts[query]
	c.mu.RUnlock()
	if ok {
		return t
	}
	t = rebind(query)
	c.mu.Lock()
	if len(c.texts) < maxCachedStmts {
		c.texts[query] = t
	}
	c.mu.Unlock()
	return t
}

// stmt returns the prepared statement of query, preparing it on first
// use; nil means "run it unprepared" (always, on PostgreSQL).
func (c *stmtCache) stmt(ctx context.Context, query string) *sql.Stmt {
	if c.pg {
		return nil
	}
	c.mu.RLock()
	st, ok := c.stmts[query]
	skip := c.closed || len(c.stmts) >= maxCachedStmts
	c.mu.RUnlock()
	if ok || skip {
		return st
	}
	st, err := c.db.PrepareContext(ctx, query)
	if err != nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if cur, ok := c.stmts[query]; ok || c.closed || len(c.stmts) >= maxCachedStmts {
		_ = st.Close() // unused: another caller prepared it first, or the cache closed
		return cur
	}
	c.stmts[query] = st
	return st
}

// close closes every cached statement; later queries run unprepared (and
// fail on the closed database).
func (c *stmtCache) close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closed = true
	var errs []error
	for q, st := range c.stmts {
		errs = append(errs, st.Close())
		delete(c.stmts, q)
	}
	return errors.Join(errs...)
}

// ExecContext runs query on the pool.
func (c *stmtCache) ExecContext(ctx context.Context, query string, args ...any) (res sql.Result, err error) {
	ctx, span := c.startQuery(ctx, query)
	defer func() { endSpan(span, err) }()
	if st := c.stmt(ctx, query); st != nil {
		return st.ExecContext(ctx, args...)
	}
	return c.db.ExecContext(ctx, c.text(query), args...)
}

// QueryContext runs query on the pool (its span ends once the rows are
// there, not once they are read).
func (c *stmtCache) QueryContext(ctx context.Context, query string, args ...any) (rows *sql.Rows, err error) {
	ctx, span := c.startQuery(ctx, query)
	defer func() { endSpan(span, err) }()
	if st := c.stmt(ctx, query); st != nil {
		return st.QueryContext(ctx, args...)
	}
	return c.db.QueryContext(ctx, c.text(query), args...)
}

// QueryRowContext runs query on the pool.
func (c *stmtCache) QueryRowContext(ctx context.Context, query string, args ...any) (row *sql.Row) {
	ctx, span := c.startQuery(ctx, query)
	if span != nil {
		defer func() {
			err := row.Err()
			if errors.Is(err, sql.ErrNoRows) {
				err = nil
			}
			endSpan(span, err)
		}()
	}
	if st := c.stmt(ctx, query); st != nil {
		return st.QueryRowContext(ctx, args...)
	}
	return c.db.QueryRowContext(ctx, c.text(query), args...)
}

// txn is a write transaction (see Store.tx) that runs its queries through
// txn is a write transaction (see Store.tx) that runs its queries through
// the statement cache. On SQLite several callers' work can share it (group
// commit), so its queries run under the transaction's own context, ctx,
// and ignore the one they are given: a caller's cancellation would
// interrupt the statement, and SQLite rolls back the whole transaction of
// an interrupted write. On PostgreSQL (one caller per transaction) it
// notes the first error a statement returns: a failed statement aborts
// the transaction, so a serialization failure may only show up later as
// "transaction aborted" if a caller handled the first error.
type txn struct {
	tx    *sql.Tx
	stmts *stmtCache
	ctx   context.Context
	state *txState // PostgreSQL only
}

type txState struct{ first error }

func (t txn) note(err error) {
	if err != nil && t.state != nil && t.state.first == nil {
		t.state.first = err
	}
}

// ExecContext runs query in the transaction.
func (t txn) ExecContext(_ context.Context, query string, args ...any) (sql.Result, error) {
	var (
		res sql.Result
		err error
	)
	if st := t.stmts.stmt(t.ctx, query); st != nil {
		res, err = t.tx.StmtContext(t.ctx, st).ExecContext(t.ctx, args...)
	} else {
		res, err = t.tx.ExecContext(t.ctx, t.stmts.text(query), args...)
	}
	t.note(err)
	return res, err
}

// QueryContext runs query in the transaction.
func (t txn) QueryContext(_ context.Context, query string, args ...any) (*sql.Rows, error) {
	var (
		rows *sql.Rows
		err  error
	)
	if st := t.stmts.stmt(t.ctx, query); st != nil {
		rows, err = t.tx.StmtContext(t.ctx, st).QueryContext(t.ctx, args...)
	} else {
		rows, err = t.tx.QueryContext(t.ctx, t.stmts.text(query), args...)
	}
	t.note(err)
	return rows, err
}

// QueryRowContext runs query in the transaction.
func (t txn) QueryRowContext(_ context.Context, query string, args ...any) *sql.Row {
	var row *sql.Row
	if st := t.stmts.stmt(t.ctx, query); st != nil {
		row = t.tx.StmtContext(t.ctx, st).QueryRowContext(t.ctx, args...)
	} else {
		row = t.tx.QueryRowContext(t.ctx, t.stmts.text(query), args...)
	}
	if err := row.Err(); !errors.Is(err, sql.ErrNoRows) {
		t.note(err)
	}
	return row
}
