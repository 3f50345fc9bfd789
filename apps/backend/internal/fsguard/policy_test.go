package fsguard

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// layout is a machine in a temp dir: a home with credential stores, a
// source root in it, a data dir with a token and a database, and a
// directory outside the root.
type layout struct {
	home, root, data, outside string
	token, db                 string
}

func newLayout(t testing.TB) layout {
	t.Helper()
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	l := layout{home: filepath.Join(base, "home"), outside: filepath.Join(base, "outside")}
	l.root = filepath.Join(l.home, "src")
	l.data = filepath.Join(l.root, "proj", ".kandev") // the default ./.kandev of a checkout
	l.token, l.db = filepath.Join(l.data, "token"), filepath.Join(l.data, "kandev.db")
	for _, d := range []string{l.root, l.data, l.outside, filepath.Join(l.home, ".ssh"), filepath.Join(l.home, ".config", "gh"),
		filepath.Join(l.data, "tasks", "t1"), filepath.Join(l.root, "proj", "pkg")} {
		mkdir(t, d)
	}
	write(t, l.token, "TOKEN-SECRET")
	write(t, l.db, "DATABASE")
	return l
}

func (l layout) policy(t testing.TB) *Policy {
	t.Helper()
	p, err := New(Config{Roots: []string{l.root}, DataDir: l.data, Files: []string{l.token, l.db}, Home: l.home})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func mkdir(t testing.TB, d string) {
	t.Helper()
	if err := os.MkdirAll(d, 0o700); err != nil {
		t.Fatal(err)
	}
}

func write(t testing.TB, path, body string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
}

func symlink(t testing.TB, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}

// TestNewRefusesRoots: a root that is not an existing absolute directory,
// or is, contains or lies inside a system directory, or lies inside the
// data dir or a credential store, refuses the start with a message naming
// it.
func TestNewRefusesRoots(t *testing.T) {
	t.Parallel()
	l := newLayout(t)
	file := filepath.Join(l.outside, "file")
	write(t, file, "x")
	for _, tc := range []struct{ root, want string }{
		{"src", "must be an absolute path"},
		{filepath.Join(l.outside, "missing"), "does not exist"},
		{file, "is not a directory"},
		{"/", "system directory /"},
		{"/etc", "system directory /etc"},
		{"/usr/local", "system directory /usr"},
		{"/var", "system directory /var/lib"},
		{"/proc/self/root", "system directory /"},
		{filepath.Join(l.data, "tasks"), "which Kandev protects"},
		{filepath.Join(l.home, ".config", "gh"), "which Kandev protects"},
	} {
		_, err := New(Config{Roots: []string{tc.root}, DataDir: l.data, Home: l.home})
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), tc.root) {
			t.Errorf("root %s: got %v, want an error naming it and %q", tc.root, err, tc.want)
		}
	}
	// The home directory (the default) holds the data dir and credential
	// stores: they are carved out of it, not a reason to refuse it.
	p, err := New(Config{Roots: []string{l.home, l.home + "/"}, DataDir: l.data, Home: l.home})
	if err != nil || len(p.Roots()) != 1 || p.Roots()[0] != l.home {
		t.Fatalf("home as a root: got %v, %v, want it once", p.Roots(), err)
	}
}

func TestDefaultRoots(t *testing.T) {
	home, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		home string
		want []string
	}{{home, []string{home}}, {"/", nil}, {"/etc", nil}, {"", nil}, {"relative", nil}, {filepath.Join(home, "missing"), nil}} {
		t.Setenv("HOME", tc.home)
		if got := DefaultRoots(); strings.Join(got, ",") != strings.Join(tc.want, ",") {
			t.Errorf("HOME=%q: got %v, want %v", tc.home, got, tc.want)
		}
	}
}

func TestParseRoots(t *testing.T) {
	t.Parallel()
	sep := string(os.PathListSeparator)
	if got := ParseRoots("/a" + sep + sep + "/b c" + sep); strings.Join(got, "|") != "/a|/b c" {
		t.Fatalf("got %q", got)
	}
	if got := ParseRoots(""); got != nil {
		t.Fatalf("empty: got %q, want none", got)
	}
}

// TestCheckSource: what may be registered, by canonical path; every
// refusal names the rule and never the path.
func TestCheckSource(t *testing.T) {
	t.Parallel()
	l := newLayout(t)
	p := l.policy(t)
	proj, pkg := filepath.Join(l.root, "proj"), filepath.Join(l.root, "proj", "pkg")
	symlink(t, pkg, filepath.Join(l.root, "alias"))
	symlink(t, l.outside, filepath.Join(l.root, "out"))
	symlink(t, l.data, filepath.Join(l.root, "data"))
	symlink(t, filepath.Join(l.home, ".ssh"), filepath.Join(l.root, "keys"))
	write(t, filepath.Join(l.root, "file"), "x")
	for _, tc := range []struct{ path, want string }{
		{pkg, pkg},
		{pkg + "/", pkg},
		{filepath.Join(l.root, "alias"), pkg},
		{filepath.Join(pkg, "..", "pkg"), pkg},
	} {
		got, err := p.CheckSource("local_path", tc.path)
		if err != nil || got != tc.want {
			t.Errorf("%s: got %q, %v, want %q", tc.path, got, err, tc.want)
		}
	}
	for _, tc := range []struct{ path, want string }{
		{"", notAbsolute},
		{"proj", notAbsolute},
		{"../../etc", notAbsolute},
		{l.root + "/\x00x", invalidPath},
		{"/" + strings.Repeat("a", kanban.MaxPathLen), invalidPath},
		{l.root + "/\xff", invalidPath},
		{filepath.Join(l.root, "missing"), notDir},
		{filepath.Join(l.root, "file"), notDir},
		{proj, isProtected}, // contains the data dir
		{l.root, isProtected},
		{l.data, isProtected},
		{filepath.Join(l.data, "tasks", "t1"), isProtected},
		{filepath.Join(l.root, "data"), isProtected},
		{filepath.Join(l.root, "keys"), isProtected},
		{filepath.Join(l.home, ".ssh"), isProtected},
		{l.home, isProtected}, // contains the credential stores
		{"/", isProtected},
		{"/etc", isProtected},
		{"/proc/self/root", isProtected},
		{"/usr/share", isProtected},
		{l.outside, outsideRoots},
		{filepath.Join(l.root, "out"), outsideRoots},
	} {
		_, err := p.CheckSource("sources[0].local_path", tc.path)
		if e, ok := kanban.AsError(err); !ok || e.Code != kanban.CodeValidation || e.Message != "sources[0].local_path: "+tc.want {
			t.Errorf("%q: got %v, want %q", tc.path, err, tc.want)
		}
	}
	if _, err := (&Policy{}).CheckSource("local_path", pkg); err == nil || !strings.Contains(err.Error(), noRoots) {
		t.Errorf("no roots: got %v, want %q", err, noRoots)
	}
}

// TestSourceDir: at use, a registered path that breaks the rules is
// FORBIDDEN (NOT_FOUND when it is simply not on this machine).
func TestSourceDir(t *testing.T) {
	t.Parallel()
	l := newLayout(t)
	p := l.policy(t)
	pkg := filepath.Join(l.root, "proj", "pkg")
	if d, err := p.SourceDir("the repository", pkg); err != nil || d.Path != pkg {
		t.Fatalf("allowed: got %+v, %v", d, err)
	}
	for _, tc := range []struct {
		path string
		code kanban.Code
	}{{"/", kanban.CodeForbidden}, {l.data, kanban.CodeForbidden}, {".", kanban.CodeForbidden}, {l.outside, kanban.CodeForbidden},
		{filepath.Join(l.root, "gone"), kanban.CodeNotFound}} {
		_, err := p.SourceDir("the repository", tc.path)
		if e, ok := kanban.AsError(err); !ok || e.Code != tc.code || !strings.HasPrefix(e.Message, "the repository ") || strings.Contains(e.Message, tc.path+" ") {
			t.Errorf("%q: got %v, want %s", tc.path, err, tc.code)
		}
	}
}

// TestKandevDir: a task folder or worktree must be, once resolved, the
// directory Kandev made directly under the data dir.
func TestKandevDir(t *testing.T) {
	t.Parallel()
	l := newLayout(t)
	p := l.policy(t)
	tasks := filepath.Join(l.data, "tasks")
	if d, err := p.KandevDir(filepath.Join(tasks, "t1")); err != nil || d.Path != filepath.Join(tasks, "t1") {
		t.Fatalf("the task folder: got %+v, %v", d, err)
	}
	symlink(t, l.data, filepath.Join(tasks, "up"))
	symlink(t, filepath.Join(tasks, "t1"), filepath.Join(tasks, "t2"))
	write(t, filepath.Join(tasks, "file"), "x")
	for _, tc := range []struct {
		path string
		code kanban.Code
	}{
		{filepath.Join(tasks, "up"), kanban.CodeForbidden},
		{filepath.Join(tasks, "t2"), kanban.CodeForbidden}, // another task's folder
		{filepath.Join(tasks, "file"), kanban.CodeForbidden},
		{l.data, kanban.CodeForbidden},
		{l.outside, kanban.CodeForbidden},
		{"tasks/t1", kanban.CodeForbidden},
		{filepath.Join(tasks, "t9"), kanban.CodeNotFound},
	} {
		if _, err := p.KandevDir(tc.path); kanban.ErrorCode(err) != tc.code {
			t.Errorf("%s: got %v, want %s", tc.path, err, tc.code)
		}
	}
	if _, err := (&Policy{}).KandevDir(filepath.Join(tasks, "t1")); kanban.ErrorCode(err) != kanban.CodeForbidden {
		t.Errorf("no data dir: got %v, want FORBIDDEN", err)
	}
}

// TestOpenRootSeesReplacement: a directory replaced after its check (by
// another directory or a link) is refused when opened.
func TestOpenRootSeesReplacement(t *testing.T) {
	t.Parallel()
	l := newLayout(t)
	p := l.policy(t)
	dir := filepath.Join(l.data, "tasks", "t1")
	d, err := p.KandevDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if r, err := d.OpenRoot(); err != nil {
		t.Fatal(err)
	} else {
		_ = r.Close()
	}
	if err := os.Rename(dir, dir+".old"); err != nil {
		t.Fatal(err)
	}
	symlink(t, l.data, dir)
	if _, err := d.OpenRoot(); kanban.ErrorCode(err) != kanban.CodeConflict {
		t.Fatalf("replaced by a link to the data dir: got %v, want CONFLICT", err)
	}
	if _, err := (Dir{Path: dir}).OpenRoot(); kanban.ErrorCode(err) != kanban.CodeConflict {
		t.Fatalf("an unchecked Dir: got %v, want CONFLICT", err)
	}
}
