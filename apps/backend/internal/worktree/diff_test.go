package worktree

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

func TestDiffOfEachKind(t *testing.T) {
	f := agentEdits(t)
	for _, tc := range []struct {
		req                      DiffRequest
		status                   Status
		contains, lacks          []string
		binary, tooLarge, noDiff bool
	}{
		{req: DiffRequest{Path: "src/b.go"}, status: StatusModified,
			contains: []string{"diff --git a/src/b.go b/src/b.go", "-b line x\n", "+b line CHANGED\n", "@@ -1,"}},
		{req: DiffRequest{Path: "src/a.go"}, status: StatusModified, contains: []string{"+staged\n", "+unstaged\n"}},
		{req: DiffRequest{Path: "del.txt"}, status: StatusDeleted, contains: []string{"deleted file mode 100644", "-del line \n", "+++ /dev/null"}},
		{req: DiffRequest{Path: "new.txt", OldPath: "old.txt"}, status: StatusRenamed, contains: []string{"rename from old.txt", "rename to new.txt"}},
		{req: DiffRequest{Path: "feature.go"}, status: StatusAdded, contains: []string{"new file mode 100644", "+func F() {}\n"}},
		{req: DiffRequest{Path: "notes/todo.md"}, status: StatusAdded, contains: []string{"new file mode 100644", "--- /dev/null\n+++ b/notes/todo.md\n@@ -0,0 +1,2 @@\n+- one\n+- two\n"}},
		{req: DiffRequest{Path: "bin.dat"}, status: StatusModified, binary: true, noDiff: true},
		{req: DiffRequest{Path: "bin2.dat"}, status: StatusAdded, binary: true, noDiff: true},
		{req: DiffRequest{Path: "big.txt"}, status: StatusModified, tooLarge: true, noDiff: true},
		{req: DiffRequest{Path: "huge.bin"}, status: StatusAdded, tooLarge: true, noDiff: true},
	} {
		t.Run(tc.req.Path, func(t *testing.T) {
			d, err := f.tree.Diff(t.Context(), tc.req)
			if err != nil {
				t.Fatal(err)
			}
			if d.Status != tc.status || d.Binary != tc.binary || d.TooLarge != tc.tooLarge || d.Truncated {
				t.Fatalf("got status %s binary %v too large %v truncated %v, want %s %v %v false", d.Status, d.Binary, d.TooLarge, d.Truncated, tc.status, tc.binary, tc.tooLarge)
			}
			if tc.noDiff && d.Patch != "" {
				t.Fatalf("got a %d-byte patch, want none for a binary or too-large file", len(d.Patch))
			}
			for _, s := range tc.contains {
				if !strings.Contains(d.Patch, s) {
					t.Fatalf("patch lacks %q:\n%s", s, d.Patch)
				}
			}
		})
	}
	// A renamed file asked for without its old path is still found (as
	// the new path) and its diff shows the content.
	d, err := f.tree.Diff(t.Context(), DiffRequest{Path: "new.txt"})
	if err != nil || !strings.Contains(d.Patch, "+old line") {
		t.Fatalf("got %+v, %v; want the new path's content", d, err)
	}
	_, err = f.tree.Diff(t.Context(), DiffRequest{Path: "README.md"})
	wantRefusal(t, err, kanban.CodeNotFound, "README")
	_, err = f.tree.Diff(t.Context(), DiffRequest{Path: "src"})
	wantRefusal(t, err, kanban.CodeNotFound, "src")
}

// A file under 1 MiB rewritten whole makes a patch over MaxPatchBytes: it
// is cut at a line end and marked Truncated.
func TestDiffPatchBounded(t *testing.T) {
	old := lines("old", 78000)
	f := newFixture(t, map[string]string{"rewrite.txt": old}, Config{})
	f.write(t, "rewrite.txt", strings.ReplaceAll(old, "old", "new"))
	if len(old) > MaxFileBytes {
		t.Fatalf("fixture too large: %d bytes", len(old))
	}
	d, err := f.tree.Diff(t.Context(), DiffRequest{Path: "rewrite.txt"})
	if err != nil {
		t.Fatal(err)
	}
	if !d.Truncated || len(d.Patch) > MaxPatchBytes || len(d.Patch) < MaxPatchBytes/2 || !strings.HasSuffix(d.Patch, "\n") {
		t.Fatalf("got truncated %v, %d bytes, want a truncated patch of at most %d bytes ending a line", d.Truncated, len(d.Patch), MaxPatchBytes)
	}
}

func TestPathRefusals(t *testing.T) {
	outside := t.TempDir()
	const secret = "TOP-SECRET-CONTENT-0451"
	if err := os.WriteFile(filepath.Join(outside, "secret.txt"), []byte(secret+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	f := newFixture(t, map[string]string{"a.txt": "a\n", "inner/x.txt": "x\n"}, Config{})
	must(t, os.Symlink(outside, filepath.Join(f.wt, "escape")))                                // a directory outside
	must(t, os.Symlink("inner", filepath.Join(f.wt, "alias")))                                 // a directory inside
	must(t, os.Symlink(filepath.Join(outside, "secret.txt"), filepath.Join(f.wt, "leak.txt"))) // a file outside
	for _, p := range []string{
		"../secret.txt", "a/../../secret.txt", "/etc/passwd", outside + "/secret.txt", "", ".", "./a.txt", "a//b",
		"a/", ".git/config", "sub/.GIT/config", "a\x00b", "a\nb", "\x7f", "escape/secret.txt", "alias/x.txt",
		strings.Repeat("p", maxPathLen+1), "\xff\xfe",
	} {
		_, err := f.tree.Diff(t.Context(), DiffRequest{Path: p})
		we := wantRefusal(t, err, kanban.CodeValidation, p, outside, secret)
		if strings.Contains(we.Detail(), secret) {
			t.Fatalf("%q: detail %q leaks the secret", p, we.Detail())
		}
		_, err = f.tree.Diff(t.Context(), DiffRequest{Path: "a.txt", OldPath: p})
		if p != "" { // an empty old path means "not a rename"
			wantRefusal(t, err, kanban.CodeValidation, p, outside)
		}
		_, err = f.tree.Commit(t.Context(), CommitRequest{Message: "m", Paths: []string{p}})
		wantRefusal(t, err, kanban.CodeValidation, p, outside)
	}
	// A symlink to a file outside is a change like any other, and its
	// content is the link's target text (as git stores it), never the file.
	d, err := f.tree.Diff(t.Context(), DiffRequest{Path: "leak.txt"})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(d.Patch, secret) || !strings.Contains(d.Patch, "new file mode 120000") {
		t.Fatalf("symlink diff:\n%s\nwant the link target, never the file", d.Patch)
	}
	list, err := f.tree.Changes(t.Context(), kanban.Page{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range list.Items {
		if strings.HasPrefix(c.Path, "escape/") {
			t.Fatalf("changes followed the escaping symlink: %+v", c)
		}
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
