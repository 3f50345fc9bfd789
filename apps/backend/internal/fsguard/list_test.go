//go:build unix

package fsguard

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// TestListDir: a workspace's directory is listed sorted, a page after a
// name at a time, each entry as lstat sees it; ways out (.., absolute,
// a link out, a link to the data dir) are refused without the path; a
// directory over kanban.MaxDirEntries is listed in part and says so.
func TestListDir(t *testing.T) {
	t.Parallel()
	l := newLayout(t)
	p := l.policy(t)
	dir, d := workspace(t, l, p)
	symlink(t, l.outside, filepath.Join(dir, "out"))
	symlink(t, "sub", filepath.Join(dir, "in"))
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo"), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	first, err := p.ListDir(ctx, d, "", "path", "", 3)
	if err != nil {
		t.Fatal(err)
	}
	rest, err := p.ListDir(ctx, d, ".", "path", first.Entries[2].Name, 10)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range append(first.Entries, rest.Entries...) {
		got = append(got, fmt.Sprintf("%s:%s:%d", e.Name, e.Kind, e.Size))
	}
	if want := "a.txt:file:5 fifo:other:0 in:symlink:0 out:symlink:0 sub:dir:0"; strings.Join(got, " ") != want || !first.More || rest.More {
		t.Fatalf("listing: got %v (more %v, %v), want %s in two pages", got, first.More, rest.More, want)
	}
	if in, err := p.ListDir(ctx, d, "in", "path", "", 10); err != nil || len(in.Entries) != 1 || in.Entries[0].Name != "b.txt" {
		t.Fatalf("a link inside the workspace: got %+v, %v, want sub's entries", in, err)
	}
	for _, rel := range []string{"..", "sub/../..", "/etc", "out", "up/x", "fifo", "a.txt", "missing"} {
		_, err := p.ListDir(ctx, d, rel, "path", "", 10)
		e, ok := kanban.AsError(err)
		if !ok || strings.Contains(e.Message, rel) {
			t.Errorf("%q: got %v, want a refusal that does not name it", rel, err)
		}
	}
	big := filepath.Join(dir, "big")
	mkdir(t, big)
	for i := range kanban.MaxDirEntries + 5 {
		f, err := os.Create(filepath.Join(big, fmt.Sprintf("f%05d", i)))
		if err != nil {
			t.Fatal(err)
		}
		_ = f.Close()
	}
	page, err := p.ListDir(ctx, d, "big", "path", "", kanban.MaxLimit)
	if err != nil || !page.Partial || len(page.Entries) != kanban.MaxLimit || !page.More {
		t.Fatalf("a directory of %d names: got partial %v, %d entries, more %v, %v; want a partial full page", kanban.MaxDirEntries+5, page.Partial, len(page.Entries), page.More, err)
	}
}
