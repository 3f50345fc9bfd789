package worktree

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kandev/kandev/apps/backend/internal/gittest"
	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// TestDiffLines: a range of either side is read from a real patch when
// it lies in one hunk (context lines included), and refused when it
// leaves the diff or spans two hunks.
func TestDiffLines(t *testing.T) {
	base := lines("f", 40)
	f := newFixture(t, map[string]string{"a.txt": base}, Config{})
	edited := strings.Replace(base, "f line x\n", "f line ONE\n", 1)              // line 2
	edited = strings.Replace(edited, "f line xxxxx\n", "f line FIVE\nadded\n", 2) // lines 6 and 13 (+1 each)
	f.write(t, "a.txt", edited)
	d, err := f.tree.Diff(t.Context(), DiffRequest{Path: "a.txt"})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		side       kanban.DiffSide
		start, end int
		want       string
		ok         bool
	}{
		{kanban.SideNew, 2, 2, "f line ONE", true},
		{kanban.SideOld, 2, 2, "f line x", true},
		{kanban.SideNew, 1, 3, "f line \nf line ONE\nf line xx", true}, // context around the change
		{kanban.SideNew, 6, 7, "f line FIVE\nadded", true},
		{kanban.SideOld, 6, 6, "f line xxxxx", true},
		{kanban.SideNew, 30, 30, "", false}, // not in the diff
		{kanban.SideNew, 2, 7, "", false},   // one hunk? lines 2..7 are: checked below
		{kanban.SideNew, 0, 1, "", false},
		{kanban.SideNew, 3, 2, "", false},
	} {
		got, ok := DiffLines(d.Patch, tc.side, tc.start, tc.end)
		if tc.start == 2 && tc.end == 7 {
			// Lines 2 and 6 are 4 apart: git joins them into one hunk, so
			// the range is in the diff.
			if !ok || !strings.HasPrefix(got, "f line ONE\n") || !strings.HasSuffix(got, "\nadded") {
				t.Fatalf("lines 2..7: got %q %v, want the hunk's lines", got, ok)
			}
			continue
		}
		if got != tc.want || ok != tc.ok {
			t.Errorf("%s %d..%d: got %q %v, want %q %v", tc.side, tc.start, tc.end, got, ok, tc.want, tc.ok)
		}
	}
	// Two hunks far apart: a range across them is not one piece of the diff.
	far := strings.Replace(base, "f line \n", "f line TOP\n", 1)
	far = far[:len(far)-len("f line xxxx\n")] + "f line BOTTOM\n"
	f.write(t, "a.txt", far)
	d, err = f.tree.Diff(t.Context(), DiffRequest{Path: "a.txt"})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := DiffLines(d.Patch, kanban.SideNew, 1, 40); ok {
		t.Fatal("a range across two hunks was accepted")
	}
	if got, ok := DiffLines(d.Patch, kanban.SideNew, 40, 40); !ok || got != "f line BOTTOM" {
		t.Fatalf("last line: got %q %v", got, ok)
	}
}

// TestAnchors: the current text of ranges is read from the worktree (new
// side) and the merge-base (old side, at the old path of a rename), and
// is absent for what is no longer there: a file whose change was undone,
// a deleted file's new side, a binary or too-large file, a short file.
func TestAnchors(t *testing.T) {
	f := newFixture(t, map[string]string{"a.txt": "one\ntwo\nthree\n", "old.txt": "o1\no2\n", "gone.txt": "g\n", "b.bin": "x"}, Config{})
	f.write(t, "a.txt", "one\nTWO\nthree\n")
	f.git(t, "mv", "old.txt", "new.txt")
	f.remove(t, "gone.txt")
	f.write(t, "b.bin", "\x00\x01")
	f.write(t, "fresh.txt", "n1\nn2")
	big := filepath.Join(f.wt, "big.txt")
	if err := os.WriteFile(big, []byte(strings.Repeat("y\n", MaxFileBytes)), 0o600); err != nil {
		t.Fatal(err)
	}
	ranges := []LineRange{
		{Path: "a.txt", Side: kanban.SideNew, Start: 2, End: 2},
		{Path: "a.txt", Side: kanban.SideOld, Start: 1, End: 2},
		{Path: "new.txt", Side: kanban.SideOld, Start: 2, End: 2},
		{Path: "new.txt", Side: kanban.SideNew, Start: 1, End: 2},
		{Path: "gone.txt", Side: kanban.SideNew, Start: 1, End: 1},
		{Path: "gone.txt", Side: kanban.SideOld, Start: 1, End: 1},
		{Path: "b.bin", Side: kanban.SideNew, Start: 1, End: 1},
		{Path: "big.txt", Side: kanban.SideNew, Start: 1, End: 1},
		{Path: "fresh.txt", Side: kanban.SideNew, Start: 2, End: 2},
		{Path: "fresh.txt", Side: kanban.SideNew, Start: 2, End: 3},
		{Path: "fresh.txt", Side: kanban.SideOld, Start: 1, End: 1},
		{Path: "README-nochange", Side: kanban.SideNew, Start: 1, End: 1},
	}
	a, err := f.tree.Anchors(t.Context(), ranges)
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		text    string
		present bool
	}{{"TWO", true}, {"one\ntwo", true}, {"o2", true}, {"o1\no2", true}, {"", false}, {"g", true},
		{"", false}, {"", false}, {"n2", true}, {"", false}, {"", false}, {"", false}}
	for i, w := range want {
		if a.Texts[i] != w.text || a.Present[i] != w.present {
			t.Errorf("range %d (%+v): got %q %v, want %q %v", i, ranges[i], a.Texts[i], a.Present[i], w.text, w.present)
		}
	}
	if a.Head != f.repo.Head(t, "refs/heads/"+taskBranch) || a.MergeBase == "" {
		t.Fatalf("head %s merge-base %s", a.Head, a.MergeBase)
	}
	// The change undone: the range is no longer in any diff.
	f.write(t, "a.txt", "one\ntwo\nthree\n")
	a, err = f.tree.Anchors(t.Context(), ranges[:1])
	if err != nil || a.Present[0] {
		t.Fatalf("undone change: got %+v, %v; want absent", a, err)
	}
	// Hostile paths are refused before git runs.
	for _, p := range []string{"../outside", "/etc/passwd", "a/../../b", ".git/config"} {
		_, err := f.tree.Anchors(t.Context(), []LineRange{{Path: p, Side: kanban.SideNew, Start: 1, End: 1}})
		wantRefusal(t, err, kanban.CodeValidation, p)
	}
}

// TestAnchorsNoSymlinkEscape: a changed path that is a symlink to a file
// out of the worktree is read as the link (its target text), never the
// file it points at; a path under a symlinked directory is refused.
func TestAnchorsNoSymlinkEscape(t *testing.T) {
	f := newFixture(t, map[string]string{"keep.txt": "k\n"}, Config{})
	outside := t.TempDir()
	gittest.WriteFile(t, outside, "secret.txt", "TOKEN-ghp_0123456789abcdef0123456789abcdef0123\n")
	if err := os.Symlink(filepath.Join(outside, "secret.txt"), filepath.Join(f.wt, "link.txt")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(f.wt, "dir")); err != nil {
		t.Fatal(err)
	}
	a, err := f.tree.Anchors(t.Context(), []LineRange{{Path: "link.txt", Side: kanban.SideNew, Start: 1, End: 1}})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(a.Texts[0], "TOKEN") {
		t.Fatal("the symlink was followed out of the worktree")
	}
	a, err = f.tree.Anchors(t.Context(), []LineRange{{Path: "dir/secret.txt", Side: kanban.SideNew, Start: 1, End: 1}})
	if err != nil || a.Present[0] || strings.Contains(a.Texts[0], "TOKEN") {
		t.Fatalf("a path under a symlinked directory: got %+v, %v", a, err)
	}
}

// TestOpenCheckedOutBranch: a Spec without a branch takes the one checked
// out; a detached HEAD is refused.
func TestOpenCheckedOutBranch(t *testing.T) {
	repo := gittest.NewRepo(t, map[string]string{"a": "1\n"})
	g, err := NewGit(Config{Identity: testIdentity})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = g.Close() })
	repo.Git(t, "checkout", "--quiet", "-b", "work")
	gittest.WriteFile(t, repo.Dir, "a", "2\n")
	repo.Git(t, "commit", "--quiet", "-am", "two")
	tree, err := g.Open(t.Context(), Spec{Dir: repo.Dir, Repo: repo.Dir, Base: "main"})
	if err != nil {
		t.Fatal(err)
	}
	if tree.Branch() != "work" {
		t.Fatalf("branch %q, want work", tree.Branch())
	}
	commits, err := tree.Commits(t.Context(), kanban.Page{})
	if err != nil || len(commits.Items) != 1 || commits.Items[0].Subject != "two" {
		t.Fatalf("commits %+v, %v", commits, err)
	}
	repo.Git(t, "checkout", "--quiet", "--detach")
	_, err = g.Open(t.Context(), Spec{Dir: repo.Dir, Repo: repo.Dir, Base: "main"})
	wantRefusal(t, err, kanban.CodeConflict)
}
