package store

import (
	"database/sql"
	"fmt"
	"sync"
	"time"
)

// checkpointDelay is how long after a commit its WAL pages are checkpointed
// into the database file; commits in between share the checkpoint.
const checkpointDelay = 50 * time.Millisecond

// checkpointer copies the WAL into the database file in the background.
//
// SQLite's automatic checkpoint (turned off in the DSN) runs inside the
// commit that takes the WAL past 1000 pages: that commit pays for copying
// every page and for two fsyncs while it holds writeMu, so the writers
// queued behind it wait too (a 7 ms p99 for a 0.5 ms create_task). A
// PASSIVE checkpoint on its own connection waits for no reader or writer;
// pages still in use by a reader are left for the next one. Closing the
// last connection checkpoints whatever is left.
type checkpointer struct {
	db   *sql.DB
	kick chan struct{} // a commit happened; buffered, one pending kick
	stop chan struct{}
	done chan struct{}
	once sync.Once // closes stop

	mu  sync.Mutex
	err error // the last checkpoint's error; nil once one succeeds
}

func startCheckpointer(db *sql.DB) *checkpointer {
	c := &checkpointer{db: db, kick: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	go c.run()
	return c
}

// committed notes a commit; it never blocks.
func (c *checkpointer) committed() {
	select {
	case c.kick <- struct{}{}:
	default:
	}
}

func (c *checkpointer) run() {
	defer close(c.done)
	for {
		select {
		case <-c.stop:
			return
		case <-c.kick:
		}
		select {
		case <-c.stop:
			return
		case <-time.After(checkpointDelay):
		}
		_, err := c.db.Exec(`PRAGMA wal_checkpoint(PASSIVE)`)
		if err != nil {
			err = fmt.Errorf("checkpoint: %w", err)
		}
		c.mu.Lock()
		c.err = err
		c.mu.Unlock()
	}
}

// close stops the checkpointer and returns the last checkpoint's error. A
// failed checkpoint loses nothing (its pages stay in the WAL for the next
// one), so only a failure that no later checkpoint made good is reported.
func (c *checkpointer) close() error {
	c.once.Do(func() { close(c.stop) })
	<-c.done
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}
