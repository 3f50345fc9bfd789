package store

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// killChildDir is the environment variable that makes
// TestGroupCommitKillChild the writer process of TestGroupCommitSurvivesKill9.
const killChildDir = "KANDEV_STORE_KILL_CHILD_DIR"

// Acknowledgements the parent waits for before it kills the child.
const killAfterAcks = 400

// TestGroupCommitSurvivesKill9 runs concurrent task creates in a child
// process, which prints each task id once its create returned, kills it
// with SIGKILL mid-stream, reopens the database and finds every
// acknowledged task. The child also reports that its writes were
// coalesced (fewer commits than writes), so the durability is that of
// group commit.
func TestGroupCommitSurvivesKill9(t *testing.T) {
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestGroupCommitKillChild$", "-test.count=1") //nolint:gosec // this test binary
	cmd.Env = append(os.Environ(), killChildDir+"="+dir)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var acked []string
	var batches, writes int
	sc := bufio.NewScanner(out)
	killed := false
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		switch {
		case len(f) == 2 && f[0] == "ack":
			acked = append(acked, f[1])
		case len(f) == 3 && f[0] == "stats":
			_, _ = fmt.Sscan(f[1], &batches)
			_, _ = fmt.Sscan(f[2], &writes)
		}
		if !killed && len(acked) >= killAfterAcks {
			if err := cmd.Process.Kill(); err != nil { // SIGKILL: no deferred code, no Close
				t.Fatal(err)
			}
			killed = true
		}
	}
	err = cmd.Wait()
	if !killed {
		t.Fatalf("the child ended after %d acknowledged creates without being killed: %v", len(acked), err)
	}
	if writes <= batches {
		t.Errorf("child reported %d writes in %d commits: want fewer commits than writes (coalesced)", writes, batches)
	}
	s, err := Open(context.Background(), dir)
	if err != nil {
		t.Fatalf("reopen after kill -9: %v", err)
	}
	defer func() { _ = s.Close() }()
	missing := 0
	for _, id := range acked {
		if _, err := s.GetTask(context.Background(), id); err != nil {
			missing++
		}
	}
	if missing > 0 {
		t.Fatalf("%d of %d acknowledged tasks missing after kill -9", missing, len(acked))
	}
	t.Logf("%d acknowledged creates survived kill -9 (child: %d writes in %d commits before its last report)", len(acked), writes, batches)
}

// TestGroupCommitKillChild is the child of TestGroupCommitSurvivesKill9:
// 8 writers create tasks until the parent kills the process (at most one
// minute), printing "ack ID" after each create returns and "stats BATCHES
// WRITES" every 50 acknowledgements.
func TestGroupCommitKillChild(t *testing.T) {
	dir := os.Getenv(killChildDir)
	if dir == "" {
		t.Skip("the child of TestGroupCommitSurvivesKill9")
	}
	ctx := context.Background()
	s, err := Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	ws, err := s.CreateWorkspace(ctx, "kill -9", "")
	if err != nil {
		t.Fatal(err)
	}
	wf, err := s.CreateWorkflow(ctx, kanban.Workflow{WorkspaceID: ws.ID, Name: "Kanban"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.CreateStep(ctx, kanban.WorkflowStep{WorkflowID: wf.ID, Name: "Backlog", AllowManualMove: true}); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	acks := 0
	deadline := time.Now().Add(time.Minute)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := 0; time.Now().Before(deadline); i++ {
				task, _, err := s.CreateTask(ctx, kanban.TaskCreate{WorkspaceID: ws.ID, Title: fmt.Sprintf("w%d-%d", g, i)})
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				fmt.Printf("ack %s\n", task.ID) // os.Stdout is unbuffered: one write per line
				if acks++; acks%50 == 0 {
					fmt.Printf("stats %d %d\n", s.writes.batches.Load(), s.writes.writes.Load())
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
}
