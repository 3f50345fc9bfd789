//go:build unix

package fsguard

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// swapLinks keeps replacing each link (atomically, by rename) with one to
// its inside target, then its outside one, until the returned stop is
// called.
func swapLinks(t testing.TB, links map[string][2]string) (stop func()) {
	t.Helper()
	quit := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for i := 0; ; i++ {
			for link, targets := range links {
				select {
				case <-quit:
					return
				default:
				}
				tmp := link + ".tmp"
				_ = os.Remove(tmp)
				if os.Symlink(targets[i%2], tmp) == nil {
					_ = os.Rename(tmp, link)
				}
			}
		}
	})
	return func() { close(quit); wg.Wait() }
}

// FuzzPaths drives the policy with hostile path text (traversal, unicode,
// NUL, long) while links in the workspace and in a source root keep being
// swapped between an inside and an outside target: a read returns only
// the workspace's own files, never the outside secret or the token; a
// source that passes is canonical, inside the root and touches no
// protected path; every refusal is one of the policy's own texts.
func FuzzPaths(f *testing.F) {
	for _, s := range []string{"a.txt", "swap", "d/secret.txt", "./d//secret.txt", "d/../d/secret.txt", "../../token",
		"up/token", "sub/../../secret.txt", "é/ü.txt", "\u202e.txt", "\x00", "a.txt\x00", "\xff\xfe", "/etc/passwd", "..", ".",
		"d/../../../outside/secret.txt", strings.Repeat("a/", 2100), strings.Repeat("../", 40) + "etc/passwd"} {
		f.Add(s)
	}
	l := newLayout(f)
	p := l.policy(f)
	dir, ws := workspace(f, l, p)
	mkdir(f, filepath.Join(dir, "inside"))
	write(f, filepath.Join(dir, "inside", "secret.txt"), "inside")
	symlink(f, "../..", filepath.Join(dir, "up"))
	pkg := filepath.Join(l.root, "proj", "pkg")
	mkdir(f, filepath.Join(pkg, "real"))
	stop := swapLinks(f, map[string][2]string{
		filepath.Join(dir, "swap"):     {"a.txt", filepath.Join(l.outside, "secret.txt")},
		filepath.Join(dir, "d"):        {"inside", l.outside},
		filepath.Join(pkg, "swapdir"):  {filepath.Join(pkg, "real"), l.outside},
		filepath.Join(pkg, "swapdata"): {filepath.Join(pkg, "real"), l.data},
	})
	f.Cleanup(stop)
	reasons := []string{notAbsolute, invalidPath, notDir, isProtected, outsideRoots}
	readTexts := []string{"must be a path relative to the task's workspace", "must stay inside the task's workspace",
		"must name a regular file", "is a symbolic link", "has other hard links", "is a file Kandev protects",
		"no such file in the task's workspace", "cannot be read"}
	ctx := context.Background()

	f.Fuzz(func(t *testing.T, rel string) {
		got, err := p.ReadFile(ctx, ws, rel, "path", 1<<10)
		if err == nil {
			if h := string(got.Head); h != "hello" && h != "inside" && h != strings.Repeat("b", 100) {
				t.Fatalf("ReadFile(%q) returned %q, which is not a file of the workspace", rel, h)
			}
		} else if e, ok := kanban.AsError(err); !ok || !strings.HasPrefix(e.Message, "path: ") ||
			!slices.ContainsFunc(readTexts, func(r string) bool { return strings.HasPrefix(e.Message, "path: "+r) }) {
			t.Fatalf("ReadFile(%q): got %v, want one of the reader's refusals", rel, err)
		}
		for _, path := range []string{rel, filepath.Join(pkg, rel)} {
			real, err := p.CheckSource("local_path", path)
			if err != nil {
				if e, ok := kanban.AsError(err); !ok || !slices.ContainsFunc(reasons, func(r string) bool { return e.Message == "local_path: "+r }) {
					t.Fatalf("CheckSource(%q): got %v, want one of the policy's refusals", path, err)
				}
				continue
			}
			if !within(real, l.root) || slices.ContainsFunc(p.protected, func(prot string) bool { return overlaps(real, prot) }) {
				t.Fatalf("CheckSource(%q) accepted %q", path, real)
			}
		}
	})
}
