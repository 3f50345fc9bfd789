package worktree

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kandev/kandev/apps/backend/internal/gittest"
	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

func TestCommitAll(t *testing.T) {
	f := agentEdits(t)
	f.remove(t, "huge.bin") // a 100 MB blob is not worth writing to the test's disk
	c, err := f.tree.Commit(t.Context(), CommitRequest{Message: "  agent: every change\n\nbody line\n"})
	if err != nil {
		t.Fatal(err)
	}
	if c.Subject != "agent: every change" || c.AuthorName != testIdentity.Name || c.CommitterEmail != testIdentity.Email || len(c.Parents) != 1 {
		t.Fatalf("got %+v, want the subject, the configured identity and one parent", c)
	}
	if head := f.repo.Head(t, taskBranch); c.SHA != head {
		t.Fatalf("got sha %s, want the task branch's head %s", c.SHA, head)
	}
	if msg := f.git(t, "log", "-1", "--format=%B"); msg != "agent: every change\n\nbody line\n\n" {
		t.Fatalf("got message %q", msg)
	}
	status := f.git(t, "status", "--porcelain")
	if status != "" {
		t.Fatalf("worktree not clean after committing everything:\n%s", status)
	}
	names := f.git(t, "show", "--name-status", "--format=", "-M", "HEAD")
	for _, want := range []string{"D\tdel.txt", "R100\told.txt\tnew.txt", "A\tnotes/todo.md", "M\tsrc/a.go", "A\tbin2.dat"} {
		if !strings.Contains(names, want) {
			t.Fatalf("commit lacks %q:\n%s", want, names)
		}
	}
}

func TestCommitChosenPaths(t *testing.T) {
	f := agentEdits(t)
	c, err := f.tree.Commit(t.Context(), CommitRequest{Message: "chosen", Paths: []string{"del.txt", "notes/todo.md", "new.txt", "old.txt", "src/b.go", "src/b.go"}})
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Fields(f.git(t, "show", "--name-status", "--format=", "-M", c.SHA))
	want := []string{"D", "del.txt", "R100", "old.txt", "new.txt", "A", "notes/todo.md", "M", "src/b.go"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("committed files (-want +got):\n%s", diff)
	}
	// What was not chosen is where it was: a.go staged and unstaged, the
	// others unstaged or untracked.
	list, err := f.tree.Changes(t.Context(), kanban.Page{})
	if err != nil {
		t.Fatal(err)
	}
	for _, ch := range list.Items {
		if ch.Path == "src/a.go" && (!ch.Staged || !ch.Unstaged) {
			t.Fatalf("src/a.go: got %+v, want still staged and unstaged", ch)
		}
		if ch.Path == "bin2.dat" && !ch.Untracked {
			t.Fatalf("bin2.dat: got %+v, want still untracked", ch)
		}
	}
}

// The message, the paths and a token a user pasted into the message never
// reach an error's text or its detail.
func TestCommitRefusals(t *testing.T) {
	const token = "ghp_S3cr3tT0k3nInAMessage000000000000"
	f := newFixture(t, map[string]string{"a.txt": "a\n"}, Config{})
	msg := "fix: use " + token
	for _, tc := range []struct {
		name string
		req  CommitRequest
		code kanban.Code
	}{
		{"nothing to commit", CommitRequest{Message: msg}, kanban.CodeConflict},
		{"chosen file unchanged", CommitRequest{Message: msg, Paths: []string{"a.txt"}}, kanban.CodeConflict},
		{"chosen file absent", CommitRequest{Message: msg, Paths: []string{"no-such-file"}}, kanban.CodeValidation},
		{"empty message", CommitRequest{Message: " \n\t"}, kanban.CodeValidation},
		{"huge message", CommitRequest{Message: strings.Repeat(token, MaxMessageBytes/len(token)+1)}, kanban.CodeValidation},
		{"NUL in message", CommitRequest{Message: token + "\x00"}, kanban.CodeValidation},
		{"too many paths", CommitRequest{Message: msg, Paths: make([]string, MaxCommitPaths+1)}, kanban.CodeValidation},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := f.tree.Commit(t.Context(), tc.req)
			we := wantRefusal(t, err, tc.code, token, "no-such")
			if strings.Contains(we.Detail(), token) {
				t.Fatalf("detail %q echoes the token", we.Detail())
			}
		})
	}
	// Not on the task branch: refused before anything is staged.
	f.write(t, "b.txt", "b\n")
	f.git(t, "checkout", "--quiet", "--detach")
	_, err := f.tree.Commit(t.Context(), CommitRequest{Message: msg})
	wantRefusal(t, err, kanban.CodeConflict, token)
	if st := f.git(t, "status", "--porcelain"); st != "?? b.txt\n" {
		t.Fatalf("got status %q, want b.txt still untracked", st)
	}
	// No identity configured.
	g, err := NewGit(Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = g.Close() }()
	f.git(t, "checkout", "--quiet", taskBranch)
	tree, err := g.Open(t.Context(), Spec{Dir: f.wt, Repo: f.repo.Dir, Base: "main", Branch: taskBranch})
	if err != nil {
		t.Fatal(err)
	}
	_, err = tree.Commit(t.Context(), CommitRequest{Message: "m"})
	wantRefusal(t, err, kanban.CodeUnavailable)
}

func TestIdentityCheck(t *testing.T) {
	for _, id := range []Identity{{Name: "a"}, {Email: "a@b.c"}, {Name: "a<b>", Email: "a@b.c"}, {Name: "a", Email: "not an email"}, {Name: "a\nb", Email: "a@b.c"}} {
		if _, err := NewGit(Config{Identity: id}); err == nil {
			t.Fatalf("identity %+v accepted", id)
		}
	}
}

// The repository's own configuration cannot make Kandev's git run a
// program: hooks, fsmonitor and signing are off for every command.
func TestRepositoryConfigRunsNothing(t *testing.T) {
	f := newFixture(t, map[string]string{"a.txt": "a\n"}, Config{})
	marker := filepath.Join(t.TempDir(), "ran")
	script := filepath.Join(t.TempDir(), "evil.sh")
	must(t, os.WriteFile(script, []byte("#!/bin/sh\necho \"$0 $*\" >> "+marker+"\nexit 0\n"), 0o755))
	for _, kv := range [][2]string{{"core.fsmonitor", script}, {"core.hooksPath", filepath.Dir(script)}, {"commit.gpgSign", "true"}, {"gpg.program", script}, {"credential.helper", "!" + script}} {
		f.repo.Git(t, "config", kv[0], kv[1])
	}
	for _, hook := range []string{"pre-commit", "commit-msg", "post-commit", "pre-push", "post-index-change"} {
		must(t, os.Symlink(script, filepath.Join(filepath.Dir(script), hook)))
	}
	f.write(t, "b.txt", "b\n")
	if _, err := f.tree.Changes(t.Context(), kanban.Page{}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.tree.Diff(t.Context(), DiffRequest{Path: "b.txt"}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.tree.Commit(t.Context(), CommitRequest{Message: "m"}); err != nil {
		t.Fatal(err)
	}
	remote := gittest.NewRemote(t, gittest.RemoteOptions{})
	if _, err := f.tree.Push(t.Context(), Remote{URL: remote.URL}); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(marker); err == nil {
		t.Fatalf("the repository's config ran a program:\n%s", b)
	}
}

// A worktree whose ".git" file an agent rewrote to point at a git
// directory of its own is refused before git reads that directory.
func TestForeignGitDirRefused(t *testing.T) {
	f := newFixture(t, map[string]string{"a.txt": "a\n"}, Config{})
	evil := gittest.NewRepo(t, nil)
	g := f.g
	spec := Spec{Dir: f.wt, Repo: f.repo.Dir, Base: "main", Branch: taskBranch}
	for _, content := range []string{
		"gitdir: " + filepath.Join(evil.Dir, ".git") + "\n",
		"gitdir: " + filepath.Join(f.repo.Dir, ".git") + "\n",
		"gitdir: " + filepath.Join(f.repo.Dir, ".git", "worktrees") + "\n",
		"gitdir: ../../elsewhere\n",
		"not a gitdir line\n",
		"",
	} {
		must(t, os.WriteFile(filepath.Join(f.wt, ".git"), []byte(content), 0o644))
		_, err := g.Open(t.Context(), spec)
		wantRefusal(t, err, kanban.CodeForbidden, evil.Dir, f.repo.Dir)
	}
	must(t, os.Remove(filepath.Join(f.wt, ".git")))
	must(t, os.Symlink(filepath.Join(evil.Dir, ".git"), filepath.Join(f.wt, ".git")))
	_, err := g.Open(t.Context(), spec)
	wantRefusal(t, err, kanban.CodeForbidden)
	// A plain checkout (Dir is Repo) opens on its own .git directory.
	if _, err := g.Open(t.Context(), Spec{Dir: f.repo.Dir, Repo: f.repo.Dir, Base: "main", Branch: "main"}); err != nil {
		t.Fatal(err)
	}
}

func TestHostileBranchNames(t *testing.T) {
	f := newFixture(t, map[string]string{"a.txt": "a\n"}, Config{})
	for _, name := range []string{
		"", "-b", "--upload-pack=touch /tmp/x", "-", "..", "a..b", "refs/heads/../../x", "a\x00b", "a\x01", "a\nb", "a\tb", "a b",
		"HEAD", "@", "a@{1}", "a~1", "a^", "a:b", "a?", "a*", "a[", `a\b`, "/a", "a/", "a//b", "a.", ".a", "a/.b", "a.lock", "a/b.lock",
		strings.Repeat("b", kanban.MaxBranchLen+1), "\xff", "a\u200bb", "a\u202eb",
	} {
		for _, spec := range []Spec{
			{Dir: f.wt, Repo: f.repo.Dir, Base: name, Branch: taskBranch},
			{Dir: f.wt, Repo: f.repo.Dir, Base: "main", Branch: name},
		} {
			if spec.Branch == "" {
				continue // no branch: the one checked out (TestOpenCheckedOutBranch)
			}
			_, err := f.g.Open(t.Context(), spec)
			if name == "HEAD" {
				name = "" // the rule names it
			}
			wantRefusal(t, err, kanban.CodeValidation, name)
		}
	}
	for _, name := range []string{"main", "feature/login-form", "release/1.2.3", "fix#42", "über/straße", "kandev/0a1b2c3d", "a-", "v2+build"} {
		if err := checkBranch("branch", name); err != nil {
			t.Fatalf("%q refused: %v", name, err)
		}
	}
	_, err := f.g.Open(t.Context(), Spec{Dir: f.wt, Repo: f.repo.Dir, Base: "no-such-branch", Branch: taskBranch})
	wantRefusal(t, err, kanban.CodeNotFound, "no-such-branch")
}
