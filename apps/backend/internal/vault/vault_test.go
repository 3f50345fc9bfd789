package vault

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestSealOpen(t *testing.T) {
	k, err := ParseKey(GenerateKey())
	if err != nil {
		t.Fatal(err)
	}
	s1, s2 := k.Seal("gh", "ghp_secretvalue"), k.Seal("gh", "ghp_secretvalue")
	if s1 == s2 || strings.Contains(s1, "secretvalue") {
		t.Errorf("got sealed %q and %q, want distinct ciphertexts without the value", s1, s2)
	}
	if v, err := k.Open("gh", s1); err != nil || v != "ghp_secretvalue" {
		t.Errorf("open: got %q, %v", v, err)
	}
	if _, err := k.Open("other", s1); err != ErrOpen {
		t.Errorf("open under another name: got %v, want ErrOpen", err)
	}
	other, _ := ParseKey(GenerateKey())
	if _, err := other.Open("gh", s1); err != ErrOpen || other.ID() == k.ID() {
		t.Errorf("open with another key: got %v (ids %s, %s), want ErrOpen and distinct ids", err, other.ID(), k.ID())
	}
	for _, bad := range []string{"", "abcd", strings.Repeat("z", 64), GenerateKey()[:62]} {
		if _, err := ParseKey(bad); err != ErrBadKey {
			t.Errorf("ParseKey(%q): got %v, want ErrBadKey", bad, err)
		}
	}
}

func TestReadKeyFile(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "key")
	if err := os.WriteFile(p, []byte(GenerateKey()+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadKeyFile(p); err == nil || !strings.Contains(err.Error(), "readable by others") {
		t.Errorf("mode 0644: got %v, want refused", err)
	}
	if err := os.Chmod(p, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadKeyFile(p); err != nil {
		t.Errorf("mode 0600: %v", err)
	}
	if _, err := ReadKeyFile(filepath.Join(dir, "missing")); err == nil {
		t.Error("missing file: got a key")
	}
}
