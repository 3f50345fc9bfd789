package app

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestOperatorTokenFileAllOrNothing: the token file appears only whole
// (written to a temporary file, synced, linked into place), an existing
// one is never replaced, and no temporary file is left. The disk-full
// scenario of internal/reliability is the end-to-end regression test (a
// first start on a full disk used to leave an empty token file that
// refused every later start).
func TestOperatorTokenFileAllOrNothing(t *testing.T) {
	dir := t.TempDir()
	tok, err := operatorToken(dir, "")
	if err != nil {
		t.Fatal(err)
	}
	again, err := operatorToken(dir, "")
	if err != nil || again != tok {
		t.Fatalf("got %q, %v on the second start, want the same token", again, err)
	}
	st, err := os.Stat(filepath.Join(dir, TokenFile))
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("got %v, %v, want a 0600 token file", st, err)
	}
	if err := writeNewFile(filepath.Join(dir, TokenFile), []byte("other\n")); err == nil {
		t.Fatal("got nil replacing an existing token file, want an error")
	}
	b, _ := os.ReadFile(filepath.Join(dir, TokenFile))
	if strings.TrimSpace(string(b)) != tok {
		t.Fatalf("got %q, want the first token kept", b)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Fatalf("got %d files in the data dir, want only the token file", len(entries))
	}
}
