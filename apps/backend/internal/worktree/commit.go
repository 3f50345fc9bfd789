package worktree

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// Commit bounds.
const (
	MaxMessageBytes = kanban.MaxCommitMessageBytes
	MaxCommitPaths  = kanban.MaxCommitPaths
)

// CommitRequest is a commit of the worktree's changes: every change when
// Paths is empty, else exactly the chosen paths (a rename is two paths:
// Change.Path and Change.OldPath). The message is the caller's.
type CommitRequest struct {
	Message string   `json:"message"`
	Paths   []string `json:"paths,omitempty"`
}

// Commit commits on the task branch as the configured identity (author
// and committer) with hooks and signing off, and returns the new commit.
// Refusals: VALIDATION_ERROR (message or paths), CONFLICT (the worktree is
// not on the task branch, nothing to commit, the index is locked),
// UNAVAILABLE (no identity configured). No error text contains the
// message or a path.
func (t *Tree) Commit(ctx context.Context, req CommitRequest) (*Commit, error) {
	if t.g.identity == (Identity{}) {
		return nil, refuse(kanban.CodeUnavailable, "no commit identity is configured on the server")
	}
	msg, err := checkMessage(req.Message)
	if err != nil {
		return nil, err
	}
	paths, err := t.checkCommitPaths(req.Paths)
	if err != nil {
		return nil, err
	}
	if err := t.onBranch(ctx); err != nil {
		return nil, err
	}
	msgFile, cleanup, err := t.g.messageFile(msg)
	if err != nil {
		return nil, err
	}
	defer cleanup()

	// Chosen paths: those on disk are added first (new files must be, for
	// git to know them); `commit --only` then takes exactly the chosen
	// paths, deletions included (it sees HEAD's paths too).
	if err := t.stage(ctx, paths); err != nil {
		return nil, err
	}
	commit := []string{"commit", "--no-verify", "--cleanup=whitespace", "--file=" + msgFile}
	var commitStdin []byte
	if len(paths) > 0 {
		commit = append(commit, "--only", "--pathspec-from-file=-", "--pathspec-file-nul")
		commitStdin = []byte(strings.Join(paths, "\x00"))
	}
	id := t.g.identity
	env := []string{"GIT_AUTHOR_NAME=" + id.Name, "GIT_AUTHOR_EMAIL=" + id.Email, "GIT_COMMITTER_NAME=" + id.Name, "GIT_COMMITTER_EMAIL=" + id.Email}
	res, err := t.git(ctx, call{op: "commit", args: commit, stdin: commitStdin, env: env})
	if err != nil {
		return nil, err
	}
	if res.exit != 0 {
		return nil, commitFailure(res)
	}
	out, err := t.output(ctx, "log", "log", "-z", "-1", logFormat, "--end-of-options", "HEAD", "--")
	if err != nil {
		return nil, err
	}
	commits := parseLog(out)
	if len(commits) != 1 {
		return nil, refuse(kanban.CodeInternal, "git log did not show the new commit")
	}
	return &commits[0], nil
}

// stage adds every change, or the chosen paths that are on disk (none
// when no chosen path is).
func (t *Tree) stage(ctx context.Context, paths []string) error {
	add := []string{"add", "-A"}
	var stdin []byte
	if len(paths) > 0 {
		onDisk, err := t.existing(paths)
		if err != nil {
			return err
		}
		if len(onDisk) == 0 {
			return nil
		}
		add = append(add, "--pathspec-from-file=-", "--pathspec-file-nul")
		stdin = []byte(strings.Join(onDisk, "\x00"))
	}
	res, err := t.git(ctx, call{op: "add", args: add, stdin: stdin})
	if err != nil {
		return err
	}
	if res.exit != 0 {
		if strings.Contains(res.stderr, "ignored by one of your .gitignore") {
			return failed(kanban.CodeValidation, "paths: a chosen path is ignored by .gitignore", res.stderr)
		}
		return gitFailure("add", res)
	}
	return nil
}

// commitFailure is the refusal for a git commit that exited non-zero.
func commitFailure(res result) error {
	if strings.Contains(res.stderr, "did not match any file") {
		return failed(kanban.CodeValidation, "paths: a chosen path is neither a file of the worktree nor a change", res.stderr)
	}
	if bytes.Contains(res.out, []byte("nothing to commit")) || bytes.Contains(res.out, []byte("no changes added to commit")) ||
		strings.Contains(res.stderr, "nothing to commit") {
		return failed(kanban.CodeConflict, "nothing to commit: the chosen files have no changes", res.stderr)
	}
	return gitFailure("commit", res)
}

func checkMessage(m string) (string, error) {
	m = strings.TrimSpace(m)
	switch {
	case m == "":
		return "", invalid("message", "is required")
	case len(m) > MaxMessageBytes:
		return "", invalid("message", "is longer than 64 KiB")
	case !utf8.ValidString(m) || strings.ContainsRune(m, 0):
		return "", invalid("message", "must be valid UTF-8 without NUL bytes")
	}
	return m + "\n", nil
}

func (t *Tree) checkCommitPaths(paths []string) ([]string, error) {
	if len(paths) > MaxCommitPaths {
		return nil, invalid("paths", "at most 1000 paths")
	}
	seen := make(map[string]bool, len(paths))
	out := make([]string, 0, len(paths))
	for _, p := range paths {
		if seen[p] {
			continue
		}
		if _, err := t.checkPaths(p, ""); err != nil {
			return nil, err
		}
		seen[p] = true
		out = append(out, p)
	}
	return out, nil
}

// existing returns the paths that exist in the worktree (as files,
// symlinks or directories).
func (t *Tree) existing(paths []string) ([]string, error) {
	root, err := t.root()
	if err != nil {
		return nil, err
	}
	defer func() { _ = root.Close() }()
	var out []string
	for _, p := range paths {
		fi, err := stat(root, p)
		if err != nil {
			return nil, err
		}
		if fi.exists {
			out = append(out, p)
		}
	}
	return out, nil
}

// onBranch refuses a worktree whose HEAD is not the task branch (a commit
// would land elsewhere).
func (t *Tree) onBranch(ctx context.Context) error {
	res, err := t.git(ctx, call{op: "symbolic-ref", args: []string{"symbolic-ref", "--quiet", "HEAD"}})
	if err != nil {
		return err
	}
	if res.exit != 0 || strings.TrimSpace(string(res.out)) != t.headRef {
		return refuse(kanban.CodeConflict, "the worktree is not on the task branch")
	}
	return nil
}

// messageFile writes a commit message to a private temporary file (the
// message never reaches argv); cleanup removes it.
func (g *Git) messageFile(msg string) (string, func(), error) {
	dir, err := os.MkdirTemp(g.home, "msg-")
	if err != nil {
		return "", nil, refuse(kanban.CodeInternal, "cannot write the commit message file")
	}
	cleanup := func() { _ = os.RemoveAll(dir) }
	f := filepath.Join(dir, "MSG")
	if err := os.WriteFile(f, []byte(msg), 0o600); err != nil {
		cleanup()
		return "", nil, refuse(kanban.CodeInternal, "cannot write the commit message file")
	}
	return f, cleanup, nil
}
