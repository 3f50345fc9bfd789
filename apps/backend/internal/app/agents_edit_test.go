package app

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// TestMockAgentEditsWorktree: the mock agent — the real binary, launched
// by the runtime in a task's git worktree — changes it with @write and
// @sh: the files land in the worktree (git sees them), a path out of it
// is refused in the conversation and nothing is written there, and a
// command past the bound (--sh-timeout) is killed, saying so.
func TestMockAgentEditsWorktree(t *testing.T) {
	t.Parallel()
	repo := gitRepo(t)
	bin := kandevBinary(t)
	e := newAgentEnv(t, withAgentCommands(t, map[string]any{"mock-agent": map[string]any{"command": bin,
		"args": []string{"agent", "mock", "--sh-timeout", "1s"}}}))
	worktree := e.executorProfileNamed("exec-worktree")
	prompt := strings.Join([]string{
		`Edit the repository.`,
		`@write src/hello/hello.go package hello\n\nfunc Hello() string { return "hi" }`,
		`@sh wc -l < src/hello/hello.go > lines.txt && echo counted`,
		`@write ../outside.txt escaped`,
		`@sh sleep 30`,
		`@say done`,
	}, "\n")
	task, sid := e.startMock("Edit task", prompt, map[string]any{"local_path": repo, "executor_profile_id": worktree})
	s := e.waitState(sid, kanban.SessionIdle)
	e.waitMessage(task.ID, "message", "done")
	b, err := os.ReadFile(filepath.Join(s.Workdir, "src", "hello", "hello.go"))
	if err != nil || string(b) != "package hello\n\nfunc Hello() string { return \"hi\" }" {
		t.Fatalf("hello.go: %q, %v", b, err)
	}
	if b, err := os.ReadFile(filepath.Join(s.Workdir, "lines.txt")); err != nil || strings.TrimSpace(string(b)) != "2" {
		t.Fatalf("lines.txt: %q, %v", b, err)
	}
	if st := gitOut(t, s.Workdir, "status", "--porcelain", "--untracked-files=all"); !strings.Contains(st, "src/hello/hello.go") || !strings.Contains(st, "lines.txt") {
		t.Fatalf("git status in the worktree: %q", st)
	}
	e.waitMessage(task.ID, "message", "mock agent: @write: the path must not have empty")
	if _, err := os.Stat(filepath.Join(filepath.Dir(s.Workdir), "outside.txt")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a write out of the worktree happened: %v", err)
	}
	e.waitMessage(task.ID, "message", "ran longer than 1s: its process group was killed")
	e.waitMessage(task.ID, "tool_call", "Write src/hello/hello.go")
	e.waitMessage(task.ID, "tool_call", "sh -c wc -l")
}
