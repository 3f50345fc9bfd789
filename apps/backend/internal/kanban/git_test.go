package kanban_test

import (
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

var (
	goodBranches = []string{"main", "master", "trunk", "dev", "feature/login-form", "release/1.2.3", "fix#42", "user@host",
		"a", "x/y/z", "v2+build", "über/straße", "feat_snake", "r,1", "kandev/0a1b2c3d", "a.b", "a-", "1", strings.Repeat("b", kanban.MaxBranchLen)}
	badBranches = []string{"-b", "--upload-pack=x", "-", "..", "a..b", "refs/heads/../../x", "a\x00b", "a\x01", "a\nb", "a\tb",
		"a\x7f", "$(id)", "`id`", "a;b", "a|b", "a&b", "a>b", "a@{1}", "@{-1}", "@", "HEAD", "a.lock", "a/b.lock", "a/", "/a",
		"a//b", ".a", "a/.b", "a.", "a/./b", "a b", "a~1", "a^", "a:b", "a?", "a*", "a[", `a\b`, "a\u202eb", "a\u200bb",
		strings.Repeat("b", kanban.MaxBranchLen+1), "\xff", "a{b}", "a'b", `a"b`, "a!b", "a%b", "a=b"}
)

func TestCheckBranch(t *testing.T) {
	t.Parallel()
	for _, name := range goodBranches {
		if err := kanban.CheckBranch("base_branch", name); err != nil {
			t.Errorf("%q: got %v, want accepted", name, err)
		}
	}
	if err := kanban.CheckBranch("base_branch", ""); err != nil {
		t.Errorf("empty: got %v, want it left to the caller", err)
	}
	for _, name := range badBranches {
		err := kanban.CheckBranch("checkout_branch", name)
		e, ok := kanban.AsError(err)
		if !ok || e.Code != kanban.CodeValidation || e.Field != "checkout_branch" {
			t.Errorf("%q: got %v, want VALIDATION_ERROR on checkout_branch", name, err)
			continue
		}
		if len(name) > 4 && strings.Contains(e.Message, name) {
			t.Errorf("%q: the message %q repeats the name", name, e.Message)
		}
	}
}

// TestCheckBranchAgreesWithGit: every name CheckBranch accepts, git's own
// `check-ref-format --branch` accepts too (CheckBranch is stricter, never
// looser), and every name git refuses CheckBranch refuses.
func TestCheckBranchAgreesWithGit(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git on PATH")
	}
	for _, name := range append(append([]string{}, goodBranches...), badBranches...) {
		if strings.ContainsRune(name, 0) || !utf8.ValidString(name) {
			continue // not representable as an argument
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		gitOK := exec.CommandContext(ctx, "git", "check-ref-format", "--branch", name).Run() == nil
		cancel()
		ours := kanban.CheckBranch("b", name) == nil
		if ours && !gitOK {
			t.Errorf("%q: CheckBranch accepts a name git refuses", name)
		}
	}
}

func TestCheckRemoteURL(t *testing.T) {
	t.Parallel()
	for _, u := range []string{"https://github.com/acme/app.git", "https://example.com:8443/a/b", "ssh://git@example.com/a/b.git",
		"ssh://example.com:2222/a.git", "ssh://git@[2001:db8::1]/a.git", "git@github.com:acme/app.git", "example.com:acme/app",
		"git@[::1]:a/b.git", "http://127.0.0.1:3000/a.git", "http://localhost/a", "http://[::1]:8080/a", "HTTPS://EXAMPLE.COM/A",
		"https://example.com/a?ref=x", "git@example.com:team/a@b.git"} {
		if err := kanban.CheckRemoteURL("remote_url", u); err != nil {
			t.Errorf("%q: got %v, want accepted", u, err)
		}
	}
	for _, u := range []string{"ext::sh -c id", "ext::sh%20-c%20id", "fd::3", "fd::17/x", "foo::bar", "-uhttps://x/y", "--upload-pack=x",
		"file:///etc", "file://localhost/etc", "/tmp/repo", "./repo", "../repo", "repo", "C", "http://example.com/x", "http://10.1.2.3/x",
		"http://127.0.0.1.example.com/x", "https://user:pass@example.com/x", "https://token@example.com/x", "https://:pass@example.com/x",
		"ssh://user:pass@example.com/x", "git:pass@example.com:x", "ssh://-oProxyCommand=id/x", "ssh://-user@example.com/x",
		"ssh://example.com:22x/a", "-oProxyCommand=id:x", "-x@example.com:a", "git@-example.com:a", "git@example.com:-a",
		"git@example.com::a", "git@example.com:", "git@:a", "@example.com:a", "https://example.com/a\nb", "https://example.com/a b",
		"https://example.com/\x00", "https://example.com/\u202e", "git://example.com/a", "ftp://example.com/a", "https://", "https:///a",
		"https://exa mple.com/a", "https://ex_ample..com/a", "\xff", "https://example.com/" + strings.Repeat("a", kanban.MaxURLLen)} {
		err := kanban.CheckRemoteURL("remote_url", u)
		e, ok := kanban.AsError(err)
		if !ok || e.Code != kanban.CodeValidation || e.Field != "remote_url" {
			t.Errorf("%q: got %v, want VALIDATION_ERROR on remote_url", u, err)
			continue
		}
		if len(u) > 4 && strings.Contains(e.Message, u) {
			t.Errorf("%q: the message %q repeats the URL", u, e.Message)
		}
	}
}

// FuzzCheckBranch: an accepted name never reads as an option, never holds
// a range, a reflog or a control character, and is bounded.
func FuzzCheckBranch(f *testing.F) {
	for _, s := range append(append([]string{}, goodBranches...), badBranches...) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		err := kanban.CheckBranch("b", name)
		if err == nil && name != "" {
			if name[0] == '-' || strings.Contains(name, "..") || strings.Contains(name, "@{") || len(name) > kanban.MaxBranchLen ||
				strings.ContainsAny(name, " ~^:?*[\\\x00\n\r\t$`;|&<>") || strings.HasSuffix(name, ".lock") || strings.HasSuffix(name, "/") {
				t.Fatalf("accepted %q", name)
			}
		}
		if err != nil && strings.Contains(err.Error(), name) && len(name) > 8 {
			t.Fatalf("the refusal %q repeats the name", err)
		}
	})
}

// FuzzCheckRemoteURL: an accepted URL is never a transport helper, an
// option, a local path or file://, and holds no whitespace or control
// character.
func FuzzCheckRemoteURL(f *testing.F) {
	for _, s := range []string{"https://github.com/a/b", "git@github.com:a/b", "ext::sh", "fd::3", "file:///etc", "-u", "http://[::1]/a"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, u string) {
		if kanban.CheckRemoteURL("u", u) != nil || u == "" {
			return
		}
		lower := strings.ToLower(u)
		if u[0] == '-' || u[0] == '/' || u[0] == '.' || strings.HasPrefix(lower, "file:") || strings.ContainsAny(u, " \t\r\n\x00") ||
			strings.HasPrefix(lower, "ext::") || strings.HasPrefix(lower, "fd::") || len(u) > kanban.MaxURLLen {
			t.Fatalf("accepted %q", u)
		}
	})
}
