package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/kandev/kandev/apps/backend/internal/action"
	"github.com/kandev/kandev/apps/backend/internal/fsguard"
	"github.com/kandev/kandev/apps/backend/internal/kanban"
	"github.com/kandev/kandev/apps/backend/internal/store"
	"github.com/kandev/kandev/apps/backend/internal/worktree"
)

// ChangesBench is section 12: a task's changes on a 1,000-file change
// (800 modified, 100 deleted, 100 new untracked files in a 1,000-file
// repository), read server side through the action registry in process
// (real SQLite store, real git): task.changes.list's first page of 200
// and task.changes.diff of one file, each against plain git measured in
// the same repetition — `git diff --numstat` of the whole change and
// `git diff` of the one file, run in the worktree. The ratios are the
// medians of the ratios paired within each repetition.
type ChangesBench struct {
	Files int `json:"files"`
	// TabLoadMs is the median time from a click on the task page's Changes
	// tab to the tab drawn (the totals and the first page of files), in
	// headless Chromium on a kandev serve of the same change; TabLoads
	// how many loads it is the median of.
	TabLoadMs   float64     `json:"tab_load_ms"`
	TabLoads    int         `json:"tab_loads"`
	List        LatencyStat `json:"list"`
	Diff        LatencyStat `json:"diff"`
	GitNumstat  LatencyStat `json:"git_numstat"`
	GitFileDiff LatencyStat `json:"git_file_diff"`
	ListOverGit float64     `json:"list_over_git"`
	DiffOverGit float64     `json:"diff_over_git"`
}

const (
	changesFiles   = 1000
	changesSamples = 40
)

// changesRig is the task, its worktree and the registry that reads it;
// root holds the repository and data the store and the worktree (what a
// kandev serve of the change is given).
type changesRig struct {
	reg        *action.Registry
	task       string
	wt         string
	mb         string
	root, data string
}

// MeasureChanges runs section 12.
func MeasureChanges(ctx context.Context, cfg Config) (*ChangesBench, error) {
	dir, err := mkdir(cfg, "changes")
	if err != nil {
		return nil, err
	}
	rig, cleanup, err := newChangesRig(ctx, dir)
	if err != nil {
		return nil, err
	}
	defer cleanup()
	list := json.RawMessage(fmt.Sprintf(`{"task_id":%q,"limit":200}`, rig.task))
	diff := json.RawMessage(fmt.Sprintf(`{"task_id":%q,"path":%q}`, rig.task, benchFile(417)))
	op := action.Principal{Kind: action.Operator}
	steps := []func() error{
		func() error { _, err := rig.reg.Dispatch(ctx, op, kanban.ActionTaskChangesList, list); return err },
		func() error { return plainGit(ctx, rig.wt, "diff", "--numstat", "-z", "-M", rig.mb) },
		func() error { _, err := rig.reg.Dispatch(ctx, op, kanban.ActionTaskChangesDiff, diff); return err },
		func() error { return plainGit(ctx, rig.wt, "diff", rig.mb, "--", benchFile(417)) },
	}
	samples := make([][]time.Duration, len(steps))
	for range changesSamples {
		for i, f := range steps {
			t0 := time.Now()
			if err := f(); err != nil {
				return nil, fmt.Errorf("changes step %d: %w", i, err)
			}
			samples[i] = append(samples[i], time.Since(t0))
		}
	}
	out := &ChangesBench{Files: changesFiles, List: Latency(samples[0]), GitNumstat: Latency(samples[1]), Diff: Latency(samples[2]),
		GitFileDiff: Latency(samples[3]), ListOverGit: PairedRatios(msAll(samples[0]), msAll(samples[1])),
		DiffOverGit: PairedRatios(msAll(samples[2]), msAll(samples[3]))}
	cfg.Logf("changes: list p50 %.1f ms (%.2f× git diff --numstat), diff p50 %.1f ms (%.2f× git diff of the file)",
		out.List.P50Ms, out.ListOverGit, out.Diff.P50Ms, out.DiffOverGit)
	if out.TabLoadMs, err = measureChangesTab(ctx, cfg, rig); err != nil {
		return nil, fmt.Errorf("changes tab: %w", err)
	}
	out.TabLoads = changesTabLoads
	cfg.Logf("changes: the Changes tab of the %d-file change drawn in %.0f ms (median of %d)", changesFiles, out.TabLoadMs, changesTabLoads)
	return out, nil
}

func msAll(ds []time.Duration) []float64 {
	out := make([]float64, len(ds))
	for i, d := range ds {
		out[i] = ms(d)
	}
	return out
}

func benchFile(i int) string { return fmt.Sprintf("pkg%02d/file%04d.go", i%50, i) }

// newChangesRig makes the repository, the task's worktree with the
// 1,000-file change, and a registry over a seeded store that knows them.
func newChangesRig(ctx context.Context, dir string) (*changesRig, func(), error) {
	repo, data := filepath.Join(dir, "repo"), filepath.Join(dir, "data")
	if err := makeChange(ctx, repo, filepath.Join(data, "worktrees", "bench")); err != nil {
		return nil, nil, err
	}
	wt := filepath.Join(data, "worktrees", "bench")
	st, err := store.Open(ctx, data)
	if err != nil {
		return nil, nil, err
	}
	g, err := worktree.NewGit(worktree.Config{})
	if err != nil {
		_ = st.Close()
		return nil, nil, err
	}
	cleanup := func() { _ = g.Close(); _ = st.Close() }
	rig, err := registerChange(ctx, st, g, dir, data, repo, wt)
	if err != nil {
		cleanup()
		return nil, nil, err
	}
	return rig, cleanup, nil
}

func registerChange(ctx context.Context, st *store.Store, g *worktree.Git, root, data, repo, wt string) (*changesRig, error) {
	if err := action.Seed(ctx, st); err != nil {
		return nil, err
	}
	board, err := findBoard(ctx, st)
	if err != nil {
		return nil, err
	}
	guard, err := fsguard.New(fsguard.Config{Roots: []string{root}, DataDir: data})
	if err != nil {
		return nil, err
	}
	rp, err := st.CreateRepository(ctx, kanban.Repository{WorkspaceID: board.workspace, Name: "bench", LocalPath: repo, DefaultBranch: "main"})
	if err != nil {
		return nil, err
	}
	t, _, err := st.CreateTask(ctx, kanban.TaskCreate{WorkspaceID: board.workspace, WorkflowID: board.workflow, Title: "Changes bench"})
	if err != nil {
		return nil, err
	}
	if _, err := st.SetTaskRepository(ctx, kanban.TaskRepository{TaskID: t.ID, RepositoryID: rp.ID}); err != nil {
		return nil, err
	}
	if err := st.SaveWorktree(ctx, kanban.Worktree{TaskID: t.ID, RepositoryID: rp.ID, Path: wt, Branch: "kandev/bench"}); err != nil {
		return nil, err
	}
	reg, _, err := action.New(action.Deps{Store: st, FS: guard, Git: g})
	if err != nil {
		return nil, err
	}
	mb, err := gitOut(ctx, wt, "merge-base", "HEAD", "main")
	if err != nil {
		return nil, err
	}
	return &changesRig{reg: reg, task: t.ID, wt: wt, mb: strings.TrimSpace(mb), root: root, data: data}, nil
}

// makeChange creates the repository with 1,000 files of 40 lines on main
// and a worktree on kandev/bench that changes every one of them.
func makeChange(ctx context.Context, repo, wt string) error {
	if err := os.MkdirAll(filepath.Dir(wt), 0o700); err != nil {
		return err
	}
	if _, err := gitOut(ctx, filepath.Dir(repo), "init", "--quiet", "--initial-branch=main", repo); err != nil {
		return err
	}
	for i := range changesFiles {
		if err := writeBenchFile(filepath.Join(repo, benchFile(i)), benchLines(i, "")); err != nil {
			return err
		}
	}
	for _, args := range [][]string{{"add", "-A"}, {"commit", "--quiet", "-m", "initial"}, {"worktree", "add", "--quiet", "-b", "kandev/bench", wt, "main"}} {
		if _, err := gitOut(ctx, repo, args...); err != nil {
			return err
		}
	}
	for i := range changesFiles {
		var err error
		switch {
		case i < 800:
			err = writeBenchFile(filepath.Join(wt, benchFile(i)), benchLines(i, "appended\n"))
		case i < 900:
			err = os.Remove(filepath.Join(wt, benchFile(i)))
		default:
			err = writeBenchFile(filepath.Join(wt, "new", benchFile(i)), benchLines(i, ""))
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func benchLines(i int, tail string) string {
	var b strings.Builder
	for n := range 40 {
		fmt.Fprintf(&b, "file %d line %d %s\n", i, n, strings.Repeat("x", n%7))
	}
	return b.String() + tail
}

func writeBenchFile(p, content string) error {
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		return err
	}
	return os.WriteFile(p, []byte(content), 0o600)
}

// gitEnv is a git with no user or system configuration and a fixed
// identity, for the fixture.
func gitEnv() []string {
	return append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL="+os.DevNull, "GIT_AUTHOR_NAME=bench",
		"GIT_AUTHOR_EMAIL=bench@example.com", "GIT_COMMITTER_NAME=bench", "GIT_COMMITTER_EMAIL=bench@example.com")
}

func gitOut(ctx context.Context, dir string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "git", args...) //nolint:gosec // git with the fixture's own arguments

	cmd.Dir, cmd.Env = dir, gitEnv()
	out, err := cmd.CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("git %s: %w: %s", args[0], err, strings.TrimSpace(string(out)))
	}
	return string(out), nil
}

// plainGit is the baseline: git as a user runs it in the worktree.
func plainGit(ctx context.Context, dir string, args ...string) error {
	cmd := exec.CommandContext(ctx, "git", args...) //nolint:gosec // git with the fixture's own arguments

	cmd.Dir, cmd.Env = dir, gitEnv()
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("git %s: %w", args[0], err)
	}
	return nil
}
