package agent

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kandev/kandev/apps/backend/internal/fsguard"
)

func tokenFilesFixture(t *testing.T) (tokenFiles, string) {
	t.Helper()
	data := t.TempDir()
	guard, err := fsguard.New(fsguard.Config{DataDir: data})
	if err != nil {
		t.Fatal(err)
	}
	return newTokenFiles(guard), guard.DataDir()
}

// TestTokenFileMode: a session's token file is 0600 in a 0700 directory
// (one found more open is tightened), holds the token, replaces a previous
// launch's, and is removed; an id that would name another file is refused
// without writing anything.
func TestTokenFileMode(t *testing.T) {
	t.Parallel()
	tf, data := tokenFilesFixture(t)
	dir := filepath.Join(data, TokenDir)
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := tf.write("sess-1", "first"); err != nil {
		t.Fatal(err)
	}
	path, err := tf.write("sess-1", "tok-secret")
	if err != nil || path != filepath.Join(dir, "sess-1") {
		t.Fatalf("write: %q %v", path, err)
	}
	if perm, err := permOf(path); err != nil || perm != 0o600 {
		t.Fatalf("token file mode %v (%v), want 0600", perm, err)
	}
	if perm, err := permOf(dir); err != nil || perm != 0o700 {
		t.Fatalf("token dir mode %v (%v), want 0700", perm, err)
	}
	if b, err := os.ReadFile(path); err != nil || strings.TrimSpace(string(b)) != "tok-secret" { //nolint:gosec // the test's own file
		t.Fatalf("token file holds %q (%v)", b, err)
	}
	if list, _ := os.ReadDir(dir); len(list) != 1 {
		t.Fatalf("%d files in the token dir, want 1 (no temporary left)", len(list))
	}
	for _, bad := range []string{"", ".", "..", "../x", "a/b", ".tmp-1"} {
		if _, err := tf.write(bad, "tok-secret"); err == nil || strings.Contains(err.Error(), "tok-secret") {
			t.Fatalf("id %q: got %v, want refused without the token", bad, err)
		}
	}
	if err := tf.remove("sess-1"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Fatalf("token file still there after remove: %v", err)
	}
	if err := tf.remove("sess-1"); err != nil {
		t.Fatalf("removing twice: %v", err)
	}
	if _, err := (tokenFiles{}).write("sess-1", "tok"); err == nil {
		t.Fatal("a runtime without a data dir wrote a token file")
	}
}

// TestTokenFilesClear: the files a previous process left are removed at
// start; a link put in the directory's place is removed, never followed.
func TestTokenFilesClear(t *testing.T) {
	t.Parallel()
	tf, data := tokenFilesFixture(t)
	if _, err := tf.write("old", "stale"); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(data, TokenDir, ".tmp-9"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := tf.clear(); err != nil {
		t.Fatal(err)
	}
	if list, err := os.ReadDir(filepath.Join(data, TokenDir)); err != nil || len(list) != 0 {
		t.Fatalf("left %d files (%v)", len(list), err)
	}
	elsewhere := t.TempDir()
	keep := filepath.Join(elsewhere, "keep")
	if err := os.WriteFile(keep, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(data, TokenDir)); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(elsewhere, filepath.Join(data, TokenDir)); err != nil {
		t.Fatal(err)
	}
	if _, err := tf.write("s", "tok-secret"); err == nil || strings.Contains(err.Error(), data) || strings.Contains(err.Error(), "tok-secret") {
		t.Fatalf("through a link: got %v, want refused without the path or the token", err)
	}
	tf2, data2 := tokenFilesFixture(t)
	if err := os.MkdirAll(filepath.Join(data2, TokenDir, "s", "x"), 0o700); err != nil { // a directory where the file goes
		t.Fatal(err)
	}
	if _, err := tf2.write("s", "tok-secret"); err == nil || strings.Contains(err.Error(), data2) {
		t.Fatalf("a directory in the file's place: got %v, want an error without the path", err)
	}
	if err := tf.clear(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(keep); err != nil {
		t.Fatalf("clear followed the link: %v", err)
	}
	if _, err := os.Lstat(filepath.Join(data, TokenDir)); !os.IsNotExist(err) {
		t.Fatalf("the link is still there: %v", err)
	}
}

// permOf is path's permission bits (0 and the error when it is missing).
func permOf(path string) (os.FileMode, error) {
	st, err := os.Stat(path)
	if err != nil {
		return 0, err
	}
	return st.Mode().Perm(), nil
}
