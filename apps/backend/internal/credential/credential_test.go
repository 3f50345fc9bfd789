package credential

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const secret = "ghp_0123456789abcdefSECRET"

func TestLoadFromEnvAndFile(t *testing.T) {
	t.Setenv("KANDEV_TEST_FORGE_TOKEN", " "+secret+"\n")
	tok, err := Source{Env: "KANDEV_TEST_FORGE_TOKEN"}.Load()
	if err != nil || tok.Reveal() != secret {
		t.Fatalf("env: got %v (err %v), want the trimmed token", tok.Reveal() == secret, err)
	}
	file := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(file, []byte(secret+"\n# rotated 2026-12-01\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tok, err = Source{File: file}.Load()
	if err != nil || tok.Reveal() != secret {
		t.Fatalf("file: got match=%v (err %v), want the first line", tok.Reveal() == secret, err)
	}
}

func TestLoadRefusals(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	t.Setenv("KANDEV_TEST_EMPTY", "")
	for _, tc := range []struct {
		name string
		src  Source
		want string
	}{
		{"nothing", Source{}, "needs token_env or token_file"},
		{"both", Source{Env: "A", File: "b"}, "not both"},
		{"bad env name", Source{Env: "A-B"}, "environment variable name"},
		{"unset env", Source{Env: "KANDEV_TEST_SURELY_UNSET_1"}, "is not set"},
		{"empty env", Source{Env: "KANDEV_TEST_EMPTY"}, "is not set"},
		{"missing file", Source{File: filepath.Join(dir, "none")}, "cannot be opened"},
		{"directory", Source{File: dir}, "not a regular file"},
		{"empty file", Source{File: write("empty", "\n")}, "is empty"},
		{"space inside", Source{File: write("space", "abc def"+secret)}, "printable ASCII"},
		{"header injection", Source{File: write("cr", secret+"\rX-Evil: 1\n")}, "printable ASCII"},
		{"huge file", Source{File: write("huge", strings.Repeat("a", maxFileLen+1))}, "larger than"},
		{"too long", Source{File: write("long", strings.Repeat("a", MaxTokenLen+1))}, "longer than"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tc.src.Load()
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want an error containing %q", err, tc.want)
			}
			if strings.Contains(err.Error(), secret) || strings.Contains(err.Error(), dir) {
				t.Fatalf("error %q echoes the secret or the file path", err)
			}
		})
	}
}

func TestTokenNeverFormats(t *testing.T) {
	tok, err := Parse(secret)
	if err != nil {
		t.Fatal(err)
	}
	type holder struct {
		Name  string
		Token Token
	}
	h := holder{"github", tok}
	js, err := json.Marshal(h)
	if err != nil {
		t.Fatal(err)
	}
	var logged strings.Builder
	slog.New(slog.NewTextHandler(&logged, nil)).Info("forge", "token", tok, "holder", h)
	for _, s := range []string{
		fmt.Sprint(tok), fmt.Sprintf("%v %+v %#v %s %q %x %X %d", tok, h, h, tok, tok, tok, tok, tok),
		fmt.Errorf("push: %v", tok).Error(), string(js), logged.String(),
	} {
		if strings.Contains(s, secret) || strings.Contains(s, "SECRET") {
			t.Fatalf("formatted text %q contains the token", s)
		}
		if !strings.Contains(s, "[redacted]") {
			t.Fatalf("formatted text %q does not say [redacted]", s)
		}
	}
	if (Token{}).String() != "" || !(Token{}).IsZero() {
		t.Fatal("the zero token must be empty and IsZero")
	}
}

// TestCachedRereadsAChangedFile: Cached reads a secret file again when it
// was replaced (renamed over), rewritten to another size or touched, keeps
// the token while it is unchanged, refuses while it is missing (nothing
// stale is served) and recovers when it is back.
func TestCachedRereadsAChangedFile(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "hook")
	write := func(path, v string) {
		t.Helper()
		if err := os.WriteFile(path, []byte(v+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	want := func(c *Cached, v string) {
		t.Helper()
		tok, err := c.Load()
		if err != nil || tok.Reveal() != v {
			t.Fatalf("got match=%v, err %v; want the current secret", tok.Reveal() == v, err)
		}
	}
	write(file, "first-secret")
	c := NewCached(Source{File: file})
	want(c, "first-secret")
	write(filepath.Join(dir, "next"), "second-secret") // the same size, another file
	if err := os.Rename(filepath.Join(dir, "next"), file); err != nil {
		t.Fatal(err)
	}
	want(c, "second-secret")
	write(file, "third-secret-longer") // in place, another size
	want(c, "third-secret-longer")
	if err := os.Remove(file); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Load(); err == nil || strings.Contains(err.Error(), "third") {
		t.Fatalf("a missing file: %v, want a refusal that does not echo the secret", err)
	}
	write(file, "fourth-secret")
	want(c, "fourth-secret")
	t.Setenv("KANDEV_TEST_HOOK_SECRET", "env-one")
	e := NewCached(Source{Env: "KANDEV_TEST_HOOK_SECRET"})
	want(e, "env-one")
	t.Setenv("KANDEV_TEST_HOOK_SECRET", "env-two")
	want(e, "env-two")
}
