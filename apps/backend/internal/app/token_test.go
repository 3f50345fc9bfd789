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
	cred, err := operatorToken(dir, "")
	if err != nil {
		t.Fatal(err)
	}
	tok := cred.clear
	again, err := operatorToken(dir, "")
	if err != nil || again != cred {
		t.Fatalf("got %v, %v on the second start, want the same token", again.hash, err)
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
	if len(entries) != 2 {
		t.Fatalf("got %d files in the data dir, want only the token file and its hash", len(entries))
	}
}

// TestOperatorTokenHashedAtRest: the backend keeps only the token's
// SHA-256 (token.sha256, 0600, no token in it); with the token file
// removed it still accepts the token and nothing else, and a replaced
// token file rotates the token (the old one stops working).
func TestOperatorTokenHashedAtRest(t *testing.T) {
	dir := t.TempDir()
	first, err := operatorToken(dir, "")
	if err != nil {
		t.Fatal(err)
	}
	hashFile := filepath.Join(dir, TokenHashFile)
	b, err := os.ReadFile(hashFile)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), first.clear) {
		t.Fatal("got the token in the hash file, want only its hash")
	}
	if st, _ := os.Stat(hashFile); st.Mode().Perm() != 0o600 {
		t.Fatalf("got mode %v, want 0600", st.Mode().Perm())
	}
	if err := os.Remove(filepath.Join(dir, TokenFile)); err != nil {
		t.Fatal(err)
	}
	fromHash, err := operatorToken(dir, "")
	if err != nil {
		t.Fatal(err)
	}
	if fromHash.clear != "" || !fromHash.matches(first.clear) || fromHash.matches(first.clear+"x") || fromHash.matches("") {
		t.Fatalf("got clear=%q, want a hash-only credential that accepts exactly the token", fromHash.clear)
	}
	if err := os.WriteFile(filepath.Join(dir, TokenFile), []byte("rotated-token-value\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	rotated, err := operatorToken(dir, "")
	if err != nil {
		t.Fatal(err)
	}
	if !rotated.matches("rotated-token-value") || rotated.matches(first.clear) {
		t.Fatal("got the old token accepted after the token file was replaced, want the new one only")
	}
	again, err := operatorToken(dir+"", "")
	if err != nil || again.hash != rotated.hash {
		t.Fatalf("got %v, want the rotated hash recorded", err)
	}
	if err := os.WriteFile(hashFile, []byte("not hex\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(dir, TokenFile)); err != nil {
		t.Fatal(err)
	}
	if _, err := operatorToken(dir, ""); err == nil || !strings.Contains(err.Error(), "SHA-256") {
		t.Fatalf("got %v, want a clear refusal of a damaged hash file", err)
	}
}
