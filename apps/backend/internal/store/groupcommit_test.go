package store

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// insertWorkspace writes a workspace row named name in tx.
func insertWorkspace(tx txn, name string) error {
	now := fmtTime(kanban.Now())
	_, err := tx.ExecContext(context.Background(), `INSERT INTO workspaces (`+workspaceCols+`) VALUES (?, ?, '', ?, ?)`,
		kanban.NewID(), name, now, now)
	return err
}

// workspaceNames returns the names of every workspace, committed.
func workspaceNames(t *testing.T, s *Store) map[string]bool {
	t.Helper()
	rows, err := s.db.Query(`SELECT name FROM workspaces`)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = rows.Close() }()
	names := map[string]bool{}
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			t.Fatal(err)
		}
		names[n] = true
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return names
}

// queued returns how many writers wait for the next batch.
func (c *committer) queued() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.queue)
}

// waitQueued waits (at most 10 s) until n writers are queued.
func waitQueued(t *testing.T, c *committer, n int) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); c.queued() != n; {
		if time.Now().After(deadline) {
			t.Fatalf("got %d queued writers, want %d", c.queued(), n)
		}
		time.Sleep(time.Millisecond)
	}
}

// holdCommitter starts a write that keeps the committer busy until the
// returned function is called, so that writers queued meanwhile form the
// next batch together.
func holdCommitter(t *testing.T, s *Store) (release func()) {
	t.Helper()
	started, unblock, done := make(chan struct{}), make(chan struct{}), make(chan error, 1)
	go func() {
		done <- s.tx(context.Background(), func(tx txn) error {
			close(started)
			<-unblock
			return insertWorkspace(tx, "holder")
		})
	}()
	<-started
	return func() {
		close(unblock)
		if err := <-done; err != nil {
			t.Errorf("holder: %v", err)
		}
	}
}

// TestGroupCommitIsolation queues six writers behind a held batch, so they
// share the next transaction: the ones that fail (an error after a write, a
// constraint violation, a panic) get their own error and leave nothing;
// their neighbours commit, in one commit; a writer whose context ends while
// queued never runs.
func TestGroupCommitIsolation(t *testing.T) {
	s := newTestStore(t)
	errOwn := kanban.Errorf(kanban.CodeConflict, "this writer's own failure")
	release := holdCommitter(t, s)
	batches, writes := s.writes.batches.Load(), s.writes.writes.Load()

	q := &queuedWriters{s: s, results: map[string]error{}}
	write := q.write
	write("ok-1", func(tx txn) error { return insertWorkspace(tx, "ok-1") })
	write("fails-after-write", func(tx txn) error {
		if err := insertWorkspace(tx, "undone-1"); err != nil {
			return err
		}
		return errOwn
	})
	write("constraint", func(tx txn) error {
		if err := insertWorkspace(tx, "undone-2"); err != nil {
			return err
		}
		_, err := tx.ExecContext(context.Background(), `INSERT INTO workflows (id, workspace_id, name, created_at, updated_at)
			VALUES (?, 'no such workspace', 'x', '', '')`, kanban.NewID())
		return err
	})
	write("panics", func(tx txn) error {
		if err := insertWorkspace(tx, "undone-3"); err != nil {
			return err
		}
		panic("boom")
	})
	write("ok-2", func(tx txn) error { return insertWorkspace(tx, "ok-2") })
	waitQueued(t, s.writes, 5)

	ctx, cancel := context.WithCancel(context.Background())
	ran := false
	withdrawn := make(chan error, 1)
	go func() { withdrawn <- s.tx(ctx, func(tx txn) error { ran = true; return insertWorkspace(tx, "never") }) }()
	waitQueued(t, s.writes, 6)
	cancel()
	if err := <-withdrawn; !errors.Is(err, context.Canceled) {
		t.Errorf("withdrawn writer: got %v, want context.Canceled", err)
	}
	release()
	q.wg.Wait()

	checkWriterResults(t, q.results, errOwn)
	if ran {
		t.Error("the withdrawn writer ran")
	}
	checkWorkspaces(t, s, []string{"holder", "ok-1", "ok-2"}, []string{"undone-1", "undone-2", "undone-3", "never"})
	if got := s.writes.batches.Load() - batches; got != 2 {
		t.Errorf("got %d commits for the held batch and the five queued writers, want 2", got)
	}
	if got := s.writes.writes.Load() - writes; got != 3 {
		t.Errorf("got %d acknowledged writes, want 3 (holder, ok-1, ok-2)", got)
	}
}

// queuedWriters runs writers on s at once, keeping each one's error by
// name (a panic's value becomes an error).
type queuedWriters struct {
	s       *Store
	wg      sync.WaitGroup
	mu      sync.Mutex
	results map[string]error
}

func (q *queuedWriters) write(name string, fn func(tx txn) error) {
	q.wg.Go(func() {
		var err error
		func() {
			defer func() {
				if p := recover(); p != nil {
					err = errors.New("panic: " + p.(string))
				}
			}()
			err = q.s.tx(context.Background(), fn)
		}()
		q.mu.Lock()
		q.results[name] = err
		q.mu.Unlock()
	})
}

// checkWriterResults checks that each writer of TestGroupCommitIsolation
// got its own outcome.
func checkWriterResults(t *testing.T, results map[string]error, errOwn error) {
	t.Helper()
	for name, want := range map[string]string{"ok-1": "", "ok-2": "", "fails-after-write": errOwn.Error(),
		"constraint": "FOREIGN KEY", "panics": "panic: boom"} {
		got := results[name]
		switch {
		case want == "" && got != nil:
			t.Errorf("%s: got %v, want success", name, got)
		case want != "" && (got == nil || !strings.Contains(got.Error(), want)):
			t.Errorf("%s: got %v, want an error containing %q", name, got, want)
		}
	}
	if !errors.Is(results["fails-after-write"], errOwn) {
		t.Errorf("fails-after-write: got %v, want its own error value", results["fails-after-write"])
	}
}

// checkWorkspaces checks that the workspaces named present were committed
// and those named absent were not.
func checkWorkspaces(t *testing.T, s *Store, present, absent []string) {
	t.Helper()
	names := workspaceNames(t, s)
	for _, n := range present {
		if !names[n] {
			t.Errorf("workspace %s missing after its write was acknowledged", n)
		}
	}
	for _, n := range absent {
		if names[n] {
			t.Errorf("workspace %s committed by a write that failed", n)
		}
	}
}

// TestGroupCommitSerial checks that writers of one batch see the work of
// those before them: concurrent creates on one step get distinct, dense
// positions, and only the first of several creates with one external id
// makes a task.
func TestGroupCommitSerial(t *testing.T) {
	s := newTestStore(t)
	b := newBoard(t, s, "serial")
	release := holdCommitter(t, s)
	const n = 12
	ids := make([]string, n)
	dedups := make([]bool, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			in := kanban.TaskCreate{WorkspaceID: b.ws.ID, Title: "serial"}
			if i%3 == 0 {
				in.ExternalID = "same-key"
			}
			task, dedup, err := s.CreateTask(context.Background(), in)
			if err != nil {
				t.Errorf("create %d: %v", i, err)
				return
			}
			ids[i], dedups[i] = task.ID, dedup
		})
	}
	waitQueued(t, s.writes, n)
	release()
	wg.Wait()
	l, err := s.ListTasks(context.Background(), kanban.TaskFilter{WorkspaceID: b.ws.ID, WorkflowStepID: b.steps[0].ID}, kanban.Page{Limit: 50})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := len(l.Items), n-n/3+1; got != want {
		t.Fatalf("got %d tasks, want %d (one per create, one for the shared external id)", got, want)
	}
	for i, task := range l.Items {
		if task.Position != i {
			t.Errorf("task %d has position %d, want %d", i, task.Position, i)
		}
	}
	deduped := 0
	for _, d := range dedups {
		if d {
			deduped++
		}
	}
	if deduped != n/3-1 {
		t.Errorf("got %d deduplicated creates, want %d", deduped, n/3-1)
	}
}

// TestGroupCommitClose checks that Close runs the writes queued before it
// and that later writes fail.
func TestGroupCommitClose(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	release := holdCommitter(t, s)
	queued := make(chan error, 1)
	go func() {
		queued <- s.tx(context.Background(), func(tx txn) error { return insertWorkspace(tx, "queued") })
	}()
	waitQueued(t, s.writes, 1)
	closed := make(chan error, 1)
	go func() { closed <- s.Close() }()
	for !s.writes.isClosed() {
		time.Sleep(time.Millisecond)
	}
	release()
	if err := <-queued; err != nil {
		t.Errorf("write queued before Close: got %v, want success", err)
	}
	if err := <-closed; err != nil {
		t.Errorf("close: %v", err)
	}
	if err := s.tx(context.Background(), func(tx txn) error { return insertWorkspace(tx, "late") }); !errors.Is(err, errStoreClosed) {
		t.Errorf("write after Close: got %v, want %v", err, errStoreClosed)
	}
	s2, err := Open(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = s2.Close() }()
	if names := workspaceNames(t, s2); !names["queued"] || !names["holder"] || names["late"] {
		t.Errorf("after reopening: got workspaces %v, want holder and queued only", names)
	}
}

func (c *committer) isClosed() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.closed
}
