package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
)

// Group commit: write transactions that wait at the same moment share one
// SQLite transaction and one WAL commit.
//
// Store.tx queues its caller (a writer) for the committer, one goroutine
// per Store. The committer takes every writer queued at that moment (at
// most maxBatch), opens one transaction and hands it to each writer in
// turn; a writer runs its own fn, in its own goroutine, inside a savepoint
// of that transaction: an error or a panic rolls back to the savepoint, so
// it undoes that writer's work only and its batch neighbours go on. Then
// the committer commits once and answers each writer that succeeded. A
// writer is acknowledged (tx returns nil) only after the commit that holds
// its work returned, so every acknowledged write is in the WAL on disk
// (synchronous=NORMAL: a process crash, kill -9 included, loses none).
//
// Writers run one after the other in queue order, each seeing the work of
// those before it in the batch, so the batch is serial: exactly as if each
// had committed on its own, in that order. A batch of one runs without a
// savepoint, as a plain transaction.

// maxBatch bounds how many writers share a transaction.
const maxBatch = 64

// errStoreClosed answers writers after Close.
var errStoreClosed = errors.New("store is closed")

// errBatchAborted answers the writers of a batch whose transaction SQLite
// abandoned (disk full, I/O error): their work was lost with it and was
// never acknowledged.
var errBatchAborted = errors.New("write transaction aborted by the database; retry")

// Writer states: a queued writer is claimed by the committer when its turn
// comes, or abandoned by its caller whose context ended first; whichever
// happens first wins.
const (
	writerQueued int32 = iota
	writerClaimed
	writerAbandoned
)

// writer is one Store.tx call.
type writer struct {
	ctx   context.Context
	fn    func(tx txn) error
	state atomic.Int32
	turn  chan turn    // the committer's hand-off: run fn now
	ran   chan outcome // the writer's answer to the committer
	done  chan error   // the commit's outcome, for a writer whose fn succeeded
}

// turn is a writer's moment in a batch.
type turn struct {
	tx   txn
	solo bool  // the batch has one writer: no savepoint
	err  error // the batch could not start: the writer runs nothing
}

// outcome is what running a writer's fn did to the batch.
type outcome struct {
	err error
	// broken: the transaction is no longer usable (SQLite rolled it back
	// or a savepoint could not be undone); nothing of the batch commits.
	broken bool
}

// committer runs batches of writers, one at a time.
type committer struct {
	ctx   context.Context // of every transaction (startCommitter)
	db    *sql.DB
	stmts *stmtCache
	// committed is called after each successful commit.
	committed func()
	// limit is the most writers a batch takes (maxBatch; 1 in benchmarks
	// that measure one commit per write).
	limit int

	mu     sync.Mutex
	queue  []*writer
	closed bool
	wake   chan struct{} // buffered: a writer was queued, or close
	done   chan struct{}

	// batches and writes count commits and the writers they acknowledged.
	batches, writes atomic.Int64
}

// startCommitter starts the committer of db; its transactions run under
// ctx, without its cancellation (a batch outlives any one writer, and the
// store's Open).
func startCommitter(ctx context.Context, db *sql.DB, stmts *stmtCache, committed func()) *committer {
	c := &committer{ctx: context.WithoutCancel(ctx), db: db, stmts: stmts, committed: committed, limit: maxBatch,
		wake: make(chan struct{}, 1), done: make(chan struct{})}
	go c.run()
	return c
}

// tx queues fn and waits for its outcome: fn's own error, or the error of
// the commit that holds its work, or nil once that commit is done. A
// context that ends while fn is still queued withdraws it (fn never runs);
// once fn runs it runs to the end, and its statements ignore the context:
// one writer's cancellation must not interrupt (and so roll back) the
// transaction it shares.
func (c *committer) tx(ctx context.Context, fn func(tx txn) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	w := &writer{ctx: ctx, fn: fn, turn: make(chan turn, 1), ran: make(chan outcome, 1), done: make(chan error, 1)}
	if !c.enqueue(w) {
		return errStoreClosed
	}
	var t turn
	select {
	case t = <-w.turn:
	case <-ctx.Done():
		if w.state.CompareAndSwap(writerQueued, writerAbandoned) {
			return ctx.Err()
		}
		t = <-w.turn // claimed just now: the committer is waiting for us
	}
	if t.err != nil {
		return t.err
	}
	o := w.runTurn(t)
	w.ran <- o
	if o.err != nil {
		return o.err
	}
	return <-w.done
}

// runTurn runs the writer's fn in the batch's transaction, inside a
// savepoint unless it runs alone. A panic is reported to the committer as
// a failure (its work undone) and then continues in the writer's own
// goroutine.
func (w *writer) runTurn(t turn) (o outcome) {
	if !t.solo {
		if _, err := t.tx.ExecContext(t.tx.ctx, `SAVEPOINT writer`); err != nil {
			return outcome{err: fmt.Errorf("savepoint: %w", err), broken: true}
		}
	}
	panicked := true
	defer func() {
		if !panicked {
			return
		}
		p := recover() // nil for runtime.Goexit, which then carries on
		w.ran <- undo(t, errors.New("write panicked"))
		if p != nil {
			panic(p)
		}
	}()
	err := w.fn(t.tx)
	panicked = false
	if err != nil {
		return undo(t, err)
	}
	if !t.solo {
		if _, rerr := t.tx.ExecContext(t.tx.ctx, `RELEASE writer`); rerr != nil {
			return outcome{err: fmt.Errorf("release savepoint: %w", rerr), broken: true}
		}
	}
	return outcome{}
}

// undo rolls a failed writer's work back to its savepoint. Alone in its
// batch, the committer rolls back the whole transaction instead.
func undo(t turn, err error) outcome {
	if t.solo {
		return outcome{err: err}
	}
	if _, rerr := t.tx.ExecContext(t.tx.ctx, `ROLLBACK TO writer`); rerr != nil {
		return outcome{err: err, broken: true}
	}
	if _, rerr := t.tx.ExecContext(t.tx.ctx, `RELEASE writer`); rerr != nil {
		return outcome{err: err, broken: true}
	}
	return outcome{err: err}
}

// enqueue adds w to the queue; false when the store is closed.
func (c *committer) enqueue(w *writer) bool {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return false
	}
	c.queue = append(c.queue, w)
	c.mu.Unlock()
	select {
	case c.wake <- struct{}{}:
	default:
	}
	return true
}

// next waits for queued writers and takes up to c.limit of them; nil once
// the store is closed and nothing is queued.
func (c *committer) next() []*writer {
	for {
		c.mu.Lock()
		if n := min(len(c.queue), c.limit); n > 0 {
			batch := c.queue[:n:n]
			c.queue = append([]*writer(nil), c.queue[n:]...)
			c.mu.Unlock()
			return batch
		}
		closed := c.closed
		c.mu.Unlock()
		if closed {
			return nil
		}
		<-c.wake
	}
}

func (c *committer) run() {
	defer close(c.done)
	for batch := c.next(); batch != nil; batch = c.next() {
		if rest := c.runBatch(batch); len(rest) > 0 {
			c.requeue(rest)
		}
	}
}

// requeue puts writers that never ran back at the head of the queue, to
// be claimed (or abandoned) again.
func (c *committer) requeue(ws []*writer) {
	for _, w := range ws {
		w.state.Store(writerQueued)
	}
	c.mu.Lock()
	c.queue = append(ws, c.queue...)
	c.mu.Unlock()
}

// claimAll claims the batch's writers whose callers are still waiting.
func claimAll(batch []*writer) []*writer {
	live := batch[:0:0]
	for _, w := range batch {
		if w.state.CompareAndSwap(writerQueued, writerClaimed) {
			live = append(live, w)
		}
	}
	return live
}

// runBatch runs one batch in one transaction and answers its writers. It
// returns the writers it could not run (their transaction broke first);
// they go into the next batch.
func (c *committer) runBatch(batch []*writer) (notRun []*writer) {
	batch = claimAll(batch)
	if len(batch) == 0 {
		return nil
	}
	// The transaction outlives any one writer's context (see tx).
	ctx := c.ctx
	sqlTx, err := c.db.BeginTx(ctx, nil)
	if err != nil {
		for _, w := range batch {
			w.turn <- turn{err: fmt.Errorf("begin: %w", err)}
		}
		return nil
	}
	t := turn{tx: txn{tx: sqlTx, stmts: c.stmts, ctx: ctx}, solo: len(batch) == 1}
	var ok []*writer
	for i, w := range batch {
		w.turn <- t
		o := <-w.ran
		if o.broken {
			_ = sqlTx.Rollback() // already rolled back by SQLite, or about to be
			answer(ok, errBatchAborted)
			return batch[i+1:]
		}
		if o.err == nil {
			ok = append(ok, w)
		}
	}
	if len(ok) == 0 {
		_ = sqlTx.Rollback() // nothing to keep
		return nil
	}
	if err := sqlTx.Commit(); err != nil {
		answer(ok, fmt.Errorf("commit: %w", err))
		return nil
	}
	c.batches.Add(1)
	c.writes.Add(int64(len(ok)))
	c.committed()
	answer(ok, nil)
	return nil
}

func answer(ws []*writer, err error) {
	for _, w := range ws {
		w.done <- err
	}
}

// close refuses new writers, lets the committer run every writer queued
// so far, and stops it.
func (c *committer) close() {
	c.mu.Lock()
	c.closed = true
	c.mu.Unlock()
	select {
	case c.wake <- struct{}{}:
	default:
	}
	<-c.done
}
