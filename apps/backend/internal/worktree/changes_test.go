package worktree

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// agentEdits builds the worktree an agent leaves behind: one change of
// every kind, against a base branch with text, binary and large files.
func agentEdits(t *testing.T) *fixture {
	t.Helper()
	f := newFixture(t, map[string]string{
		"README.md": "# demo\n",
		"src/a.go":  lines("a", 10),
		"src/b.go":  lines("b", 10),
		"old.txt":   lines("old", 20),
		"del.txt":   lines("del", 5),
		"bin.dat":   "\x00\x01\x02binary",
		"big.txt":   lines("big", 10),
	}, Config{})
	// Committed on the task branch, clean in the worktree.
	f.write(t, "feature.go", "package feature\n\nfunc F() {}\n")
	f.git(t, "add", "feature.go")
	f.git(t, "commit", "--quiet", "-m", "feature")
	// Staged, then changed again (staged and unstaged).
	f.write(t, "src/a.go", lines("a", 10)+"staged\n")
	f.git(t, "add", "src/a.go")
	f.write(t, "src/a.go", lines("a", 10)+"staged\nunstaged\n")
	// Unstaged modification, deletion; a staged rename.
	f.write(t, "src/b.go", strings.Replace(lines("b", 10), "b line x\n", "b line CHANGED\n", 1))
	f.remove(t, "del.txt")
	f.git(t, "mv", "old.txt", "new.txt")
	// Binary changes, a tracked file grown past 1 MiB, untracked files
	// (one 100 MB, sparse so it costs no disk).
	f.write(t, "bin.dat", "\x00\x01\x02binary changed")
	f.write(t, "big.txt", lines("big", 100000))
	f.write(t, "bin2.dat", "\x00new binary")
	f.write(t, "notes/todo.md", "- one\n- two\n")
	huge, err := os.Create(filepath.Join(f.wt, "huge.bin"))
	if err != nil {
		t.Fatal(err)
	}
	if err := huge.Truncate(100 << 20); err != nil {
		t.Fatal(err)
	}
	must(t, huge.Close())
	return f
}

func TestChangesEveryKind(t *testing.T) {
	f := agentEdits(t)
	got, err := f.tree.Changes(t.Context(), kanban.Page{Limit: kanban.MaxLimit})
	if err != nil {
		t.Fatal(err)
	}
	want := []Change{
		{Path: "big.txt", Status: StatusModified, Unstaged: true, TooLarge: true},
		{Path: "bin.dat", Status: StatusModified, Unstaged: true, Binary: true},
		{Path: "bin2.dat", Status: StatusAdded, Untracked: true, Binary: true},
		{Path: "del.txt", Status: StatusDeleted, Unstaged: true, Deletions: 5},
		{Path: "feature.go", Status: StatusAdded, Additions: 3}, // committed: no flag
		{Path: "huge.bin", Status: StatusAdded, Untracked: true, TooLarge: true},
		{Path: "new.txt", OldPath: "old.txt", Status: StatusRenamed, Staged: true},
		{Path: "notes/todo.md", Status: StatusAdded, Untracked: true, Additions: 2},
		{Path: "src/a.go", Status: StatusModified, Staged: true, Unstaged: true, Additions: 2},
		{Path: "src/b.go", Status: StatusModified, Unstaged: true, Additions: 1, Deletions: 1},
	}
	if diff := cmp.Diff(want, got.Items); diff != "" {
		t.Fatalf("changes (-want +got):\n%s", diff)
	}
	if got.Total != len(want) || got.NextCursor != "" || got.Additions != 8 || got.Deletions != 6 {
		t.Fatalf("got total %d, cursor %q, +%d -%d; want %d, none, +8 -6", got.Total, got.NextCursor, got.Additions, got.Deletions, len(want))
	}
	if head := f.repo.Head(t, taskBranch); got.Head != head {
		t.Fatalf("got head %s, want the task branch %s", got.Head, head)
	}
	if mb := f.repo.Head(t, "main"); got.MergeBase != mb {
		t.Fatalf("got merge-base %s, want main %s", got.MergeBase, mb)
	}
}

// The merge-base, not the base branch's tip: work merged into main after
// the task branched is not shown as the task's change.
func TestChangesAgainstMergeBase(t *testing.T) {
	f := newFixture(t, map[string]string{"a.txt": "a\n"}, Config{})
	f.repo.Git(t, "checkout", "--quiet", "main")
	gitWrite(t, f.repo.Dir, "main-only.txt", "later on main\n")
	f.repo.Git(t, "add", "-A")
	f.repo.Git(t, "commit", "--quiet", "-m", "main moves on")
	f.write(t, "task.txt", "task\n")
	got, err := f.tree.Changes(t.Context(), kanban.Page{})
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Items) != 1 || got.Items[0].Path != "task.txt" {
		t.Fatalf("got %+v, want only task.txt", got.Items)
	}
}

func gitWrite(t *testing.T, dir, p, content string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, p), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestChangesPagination(t *testing.T) {
	f := newFixture(t, map[string]string{"keep.txt": "k\n"}, Config{})
	for _, p := range []string{"a", "b", "c", "d", "e", "f", "g"} {
		f.write(t, p+".txt", p+"\n")
	}
	var seen []string
	page := kanban.Page{Limit: 3}
	for i := 0; ; i++ {
		got, err := f.tree.Changes(t.Context(), page)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range got.Items {
			seen = append(seen, c.Path)
		}
		if i == 0 {
			// Between pages, a file sorting before the cursor appears and
			// one after it: the first is not on a later page, the second is.
			f.write(t, "0-early.txt", "x\n")
			f.write(t, "z-late.txt", "x\n")
		}
		if got.NextCursor == "" {
			break
		}
		page.Cursor = got.NextCursor
	}
	want := []string{"a.txt", "b.txt", "c.txt", "d.txt", "e.txt", "f.txt", "g.txt", "z-late.txt"}
	if diff := cmp.Diff(want, seen); diff != "" {
		t.Fatalf("paged paths (-want +got):\n%s", diff)
	}
	for _, bad := range []string{"x", "p!!", "i-1", "inope", "p"} {
		_, err := f.tree.Changes(t.Context(), kanban.Page{Cursor: bad})
		wantRefusal(t, err, kanban.CodeValidation, bad)
	}
	if _, err := f.tree.Changes(t.Context(), kanban.Page{Limit: kanban.MaxLimit + 1}); kanban.ErrorCode(err) != kanban.CodeValidation {
		t.Fatalf("limit over the bound: got %v, want VALIDATION_ERROR", err)
	}
}

func TestLongPathCursor(t *testing.T) {
	f := newFixture(t, map[string]string{"keep.txt": "k\n"}, Config{})
	long := strings.Repeat("d", 200) + "/" + strings.Repeat("e", 200)
	f.write(t, long+"/1.txt", "1\n")
	f.write(t, long+"/2.txt", "2\n")
	first, err := f.tree.Changes(t.Context(), kanban.Page{Limit: 1})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(first.NextCursor, "i") || len(first.NextCursor) > kanban.MaxCursorLen {
		t.Fatalf("got cursor %q, want an offset cursor within the bound", first.NextCursor)
	}
	second, err := f.tree.Changes(t.Context(), kanban.Page{Limit: 1, Cursor: first.NextCursor})
	if err != nil {
		t.Fatal(err)
	}
	if len(second.Items) != 1 || second.Items[0].Path != long+"/2.txt" {
		t.Fatalf("got %+v, want the second file", second.Items)
	}
}

func TestParseMalformed(t *testing.T) {
	// Truncated or foreign records are skipped, never a panic.
	for _, in := range []string{"", "\x00", ":100644", ":100644 100644 a b R\x00only-one\x00", "1 M", "2 R. N... 1 2 3 a b R100 p", "1\t2", "-\t-\t\x00a"} {
		_ = parseStatus([]byte(in))
		_ = parseDiff([]byte(in))
		_ = parseLog([]byte(in))
	}
	got := parseDiff([]byte(":100644 100644 a b R090\x00o\x00n\x003\t1\t\x00o\x00n\x00"))
	want := []diffEntry{{path: "n", oldPath: "o", status: StatusRenamed, additions: 3, deletions: 1}}
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(diffEntry{}), cmpopts.EquateEmpty()); diff != "" {
		t.Fatalf("rename record (-want +got):\n%s", diff)
	}
}
