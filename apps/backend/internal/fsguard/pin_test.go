//go:build unix

package fsguard

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestPinnedFileNotRead: a secret written after start (a session's token
// file) and pinned is refused moved into a workspace; once unpinned, the
// same file reads like any other. Nothing can be pinned in the zero
// policy or that is not a regular file.
func TestPinnedFileNotRead(t *testing.T) {
	t.Parallel()
	l := newLayout(t)
	p := l.policy(t)
	dir, d := workspace(t, l, p)
	secret := filepath.Join(l.data, "session-tokens", "s1")
	mkdir(t, filepath.Dir(secret))
	write(t, secret, "SESSION-SECRET")
	if !p.Pin(secret) {
		t.Fatal("the token file was not pinned")
	}
	moved := filepath.Join(dir, "moved")
	if err := os.Rename(secret, moved); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	f, err := p.ReadFile(ctx, d, "moved", "path", 1<<10)
	if err == nil || !strings.Contains(err.Error(), "is a file Kandev protects") || strings.Contains(err.Error(), "SESSION-SECRET") {
		t.Fatalf("the pinned file moved in: got %+v, %v, want refused", f, err)
	}
	p.Unpin(secret)
	if f, err := p.ReadFile(ctx, d, "moved", "path", 1<<10); err != nil || string(f.Head) != "SESSION-SECRET" {
		t.Fatalf("unpinned: got %+v, %v, want the file read", f, err)
	}
	if p.Pin(filepath.Join(l.data, "missing")) || p.Pin(l.data) || (&Policy{}).Pin(moved) {
		t.Fatal("pinned a missing file, a directory, or in the zero policy")
	}
	(&Policy{}).Unpin(moved) // no panic
}
