package app

import (
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSourceRootsAtStart: a source root that cannot be one refuses the
// start with a message naming it; without --source-roots the home
// directory is the root, and a home that cannot be one leaves none
// (the backend still starts). Not parallel: it sets HOME.
func TestSourceRootsAtStart(t *testing.T) {
	quiet := slog.New(slog.DiscardHandler)
	start := func(roots []string) (*backend, error) {
		cfg := Config{Addr: "127.0.0.1:0", DataDir: t.TempDir(), Token: "operator-test-token", Logger: quiet, SourceRoots: roots, Out: io.Discard}
		b, err := start(context.Background(), cfg)
		if err == nil {
			err = b.stop()
		}
		return b, err
	}
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ root, want string }{
		{"/etc", "is, contains or lies inside the system directory /etc"},
		{"/", "system directory /"},
		{"relative/dir", "must be an absolute path"},
		{filepath.Join(t.TempDir(), "missing"), "does not exist"},
		{file, "is not a directory"},
	} {
		_, err := start([]string{tc.root})
		if err == nil || !strings.Contains(err.Error(), "--source-roots") || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), tc.root) {
			t.Errorf("root %s: got %v, want a refusal naming it and %q", tc.root, err, tc.want)
		}
	}

	home, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("HOME", home)
	p, err := sourcePolicy(Config{DataDir: t.TempDir()}, quiet)
	if err != nil || strings.Join(p.Roots(), ",") != home {
		t.Fatalf("default roots: got %v, %v, want the home directory", p, err)
	}
	for _, h := range []string{"/", "/etc", ""} {
		t.Setenv("HOME", h)
		if _, err := start(nil); err != nil {
			t.Fatalf("HOME=%q: got %v, want a backend started without roots", h, err)
		}
		if p, err := sourcePolicy(Config{DataDir: t.TempDir()}, quiet); err != nil || len(p.Roots()) != 0 {
			t.Fatalf("HOME=%q: got roots %v, %v, want none", h, p.Roots(), err)
		}
	}
}
