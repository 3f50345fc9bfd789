package action

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/kandev/kandev/apps/backend/internal/gittest"
	"github.com/kandev/kandev/apps/backend/internal/kanban"
	"github.com/kandev/kandev/apps/backend/internal/worktree"
)

// fakeToken looks like a GitHub token: it must never reach a log.
const fakeToken = "ghp_R3viewT0kenShouldNeverBeLogged0123456789"

// lockedBuffer is a log sink for canary checks.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// changesFixture is a harness whose registry reads worktrees with real
// git, and a task with a repository and its git worktree under the data
// dir, made as the runtime makes them.
type changesFixture struct {
	*harness
	repo *gittest.Repo
	wt   string
	task *kanban.Task
	rp   *kanban.Repository
	logs *lockedBuffer
}

func newChangesFixture(t *testing.T, files map[string]string) *changesFixture {
	t.Helper()
	h := newHarness(t)
	ctx := context.Background()
	g, err := worktree.NewGit(worktree.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = g.Close() })
	policy := testPolicy(t)
	logs := &lockedBuffer{}
	h.reg, _ = mustNew(t, Deps{Store: h.st, Publisher: h.pub, FS: policy, Git: g,
		Logger: slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	repo := gittest.NewRepo(t, files)
	wt := filepath.Join(policy.DataDir(), "worktrees", "0a1b2c3d")
	if err := os.MkdirAll(filepath.Dir(wt), 0o700); err != nil {
		t.Fatal(err)
	}
	repo.Git(t, "worktree", "add", "--quiet", "-b", "kandev/0a1b2c3d", wt, "main")
	rp, err := h.st.CreateRepository(ctx, kanban.Repository{WorkspaceID: h.ws, Name: "app", LocalPath: repo.Dir, DefaultBranch: "main"})
	if err != nil {
		t.Fatal(err)
	}
	task := h.task("Change things")
	if _, err := h.st.SetTaskRepository(ctx, kanban.TaskRepository{TaskID: task.ID, RepositoryID: rp.ID}); err != nil {
		t.Fatal(err)
	}
	if err := h.st.SaveWorktree(ctx, kanban.Worktree{TaskID: task.ID, RepositoryID: rp.ID, Path: wt, Branch: "kandev/0a1b2c3d"}); err != nil {
		t.Fatal(err)
	}
	return &changesFixture{harness: h, repo: repo, wt: wt, task: task, rp: rp, logs: logs}
}

func (f *changesFixture) write(p, content string) { gittest.WriteFile(f.t, f.wt, p, content) }

// sparse makes a file of size bytes that takes no disk.
func (f *changesFixture) sparse(p string, size int64) {
	f.t.Helper()
	fh, err := os.Create(filepath.Join(f.wt, p))
	if err != nil {
		f.t.Fatal(err)
	}
	if err := fh.Truncate(size); err != nil {
		f.t.Fatal(err)
	}
	if err := fh.Close(); err != nil {
		f.t.Fatal(err)
	}
}

// agentEdits changes the worktree as an agent would, with one commit on
// the task branch.
func agentEdits(t *testing.T) *changesFixture {
	f := newChangesFixture(t, map[string]string{"main.go": "package main\n\nfunc main() {\n\tprintln(\"hi\")\n}\n",
		"old.txt": "old\n", "gone.txt": "bye\n", "logo.png": "\x89PNG\x00\x01"})
	f.write("main.go", "package main\n\nfunc main() {\n\tprintln(\"hello\")\n}\n")
	gittest.Run(t, f.wt, "mv", "old.txt", "new.txt")
	gittest.Run(t, f.wt, "rm", "--quiet", "gone.txt")
	gittest.Run(t, f.wt, "-c", "user.name=a", "-c", "user.email=a@example.com", "commit", "--quiet", "-m", "agent: rename and remove")
	f.write("logo.png", "\x89PNG\x00\x02\x03")
	f.write("config.env", "API_TOKEN="+fakeToken+"\n")
	f.sparse("dump.bin", 100<<20)
	return f
}

func TestChangesThroughRegistry(t *testing.T) {
	t.Parallel()
	f := agentEdits(t)
	sum := call[kanban.List[RepoChanges]](f.harness, operator, kanban.ActionTaskChangesSummary, map[string]any{"task_id": f.task.ID})
	if len(sum.Items) != 1 || sum.Items[0].Total != 6 || sum.Items[0].Name != "app" || sum.Items[0].Branch != "kandev/0a1b2c3d" || sum.Items[0].Error != "" {
		t.Fatalf("summary %+v", sum)
	}
	// Two pages of 4: every file once, in path order.
	var got []worktree.Change
	cursor := ""
	for range 3 {
		in := map[string]any{"task_id": f.task.ID, "limit": 4}
		if cursor != "" {
			in["cursor"] = cursor
		}
		page := call[ChangesOut](f.harness, operator, kanban.ActionTaskChangesList, in)
		got = append(got, page.Items...)
		if cursor = page.NextCursor; cursor == "" {
			break
		}
	}
	want := map[string]worktree.Status{"config.env": worktree.StatusAdded, "dump.bin": worktree.StatusAdded, "gone.txt": worktree.StatusDeleted,
		"logo.png": worktree.StatusModified, "main.go": worktree.StatusModified, "new.txt": worktree.StatusRenamed}
	if len(got) != len(want) {
		t.Fatalf("got %d changes, want %d: %+v", len(got), len(want), got)
	}
	for _, c := range got {
		if want[c.Path] != c.Status {
			t.Errorf("%s: status %s, want %s", c.Path, c.Status, want[c.Path])
		}
	}

	d := call[DiffOut](f.harness, operator, kanban.ActionTaskChangesDiff, map[string]any{"task_id": f.task.ID, "path": "main.go"})
	if !strings.Contains(d.Patch, "+\tprintln(\"hello\")\n") || d.Head == "" || d.RepositoryID != f.rp.ID {
		t.Fatalf("diff %+v", d)
	}
	for p, what := range map[string]string{"logo.png": "binary", "dump.bin": "too large"} {
		d := call[DiffOut](f.harness, operator, kanban.ActionTaskChangesDiff, map[string]any{"task_id": f.task.ID, "path": p})
		if d.Patch != "" || (what == "binary") != d.Binary || (what == "too large") != d.TooLarge {
			t.Errorf("%s: %+v, want reported as %s with no patch", p, d.Change, what)
		}
	}
	commits := call[CommitsOut](f.harness, operator, kanban.ActionTaskChangesCommits, map[string]any{"task_id": f.task.ID})
	if len(commits.Items) != 1 || commits.Items[0].Subject != "agent: rename and remove" {
		t.Fatalf("commits %+v", commits)
	}
	// The token in a file's content is the operator's to read in the
	// diff, and nobody's to find in the log.
	if d := call[DiffOut](f.harness, operator, kanban.ActionTaskChangesDiff, map[string]any{"task_id": f.task.ID, "path": "config.env"}); !strings.Contains(d.Patch, fakeToken) {
		t.Fatalf("config.env diff %+v", d)
	}
	if strings.Contains(f.logs.String(), fakeToken) {
		t.Fatal("the token reached the log")
	}
}

// TestChangesHostilePaths: traversal, absolute paths, .git, a symlinked
// directory out of the worktree: refused with a message that never
// echoes the path; nothing out of the worktree is read.
func TestChangesHostilePaths(t *testing.T) {
	t.Parallel()
	f := agentEdits(t)
	outside := t.TempDir()
	gittest.WriteFile(t, outside, "secret.txt", fakeToken+"\n")
	if err := os.Symlink(outside, filepath.Join(f.wt, "escape")); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"../" + fakeToken, "/etc/passwd", "a/../../" + fakeToken, ".git/config", "escape/secret.txt",
		"main.go/../../" + fakeToken, "a//b", "x\x00" + fakeToken} {
		msg := f.refuse(operator, kanban.ActionTaskChangesDiff, map[string]any{"task_id": f.task.ID, "path": p}, kanban.CodeValidation)
		if strings.Contains(msg, fakeToken) || strings.Contains(msg, p) {
			t.Errorf("%q: message %q echoes the path", p, msg)
		}
		f.refuse(operator, kanban.ActionReviewCommentCreate, map[string]any{"task_id": f.task.ID, "path": p, "start_line": 1, "body": "x"}, kanban.CodeValidation)
	}
	if strings.Contains(f.logs.String(), fakeToken) {
		t.Fatal("a hostile path reached the log")
	}
	if n := f.count("task_review_comments"); n != 0 {
		t.Fatalf("refused comments were stored: %d", n)
	}
}

// TestChangesWhoMayRead: the operator and the task's own session read its
// changes; another task's session is refused, and only the operator
// comments and sends reviews.
func TestChangesWhoMayRead(t *testing.T) {
	t.Parallel()
	f := agentEdits(t)
	own := f.session(f.task, kanban.ModeTask)
	if got := call[ChangesOut](f.harness, own, kanban.ActionTaskChangesList, map[string]any{"task_id": "self"}); got.Total != 6 {
		t.Fatalf("own session: %+v", got)
	}
	other := f.session(f.task2(), kanban.ModeTask)
	for _, name := range []kanban.Action{kanban.ActionTaskChangesList, kanban.ActionTaskChangesCommits, kanban.ActionTaskChangesSummary, kanban.ActionReviewCommentList} {
		f.refuse(other, name, map[string]any{"task_id": f.task.ID}, kanban.CodeForbidden)
	}
	f.refuse(other, kanban.ActionTaskChangesDiff, map[string]any{"task_id": f.task.ID, "path": "main.go"}, kanban.CodeForbidden)
	f.refuse(own, kanban.ActionReviewCommentCreate, map[string]any{"task_id": f.task.ID, "path": "main.go", "start_line": 4, "body": "x"}, kanban.CodeForbidden)
	f.refuse(own, kanban.ActionReviewSend, map[string]any{"task_id": f.task.ID}, kanban.CodeForbidden)
	// A task without a worktree or a session that ran in its checkout
	// has no changes to show (not the checkout's).
	bare := f.task2()
	if _, err := f.st.SetTaskRepository(context.Background(), kanban.TaskRepository{TaskID: bare.ID, RepositoryID: f.rp.ID}); err != nil {
		t.Fatal(err)
	}
	f.refuse(operator, kanban.ActionTaskChangesList, map[string]any{"task_id": bare.ID}, kanban.CodeNotFound)
	sum := call[kanban.List[RepoChanges]](f.harness, operator, kanban.ActionTaskChangesSummary, map[string]any{"task_id": bare.ID})
	if len(sum.Items) != 1 || sum.Items[0].Error == "" {
		t.Fatalf("summary of a task that never ran: %+v", sum)
	}
}

func (f *changesFixture) task2() *kanban.Task { return f.harness.task("Another task") }
