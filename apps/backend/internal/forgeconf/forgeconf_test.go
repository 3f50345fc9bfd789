package forgeconf

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

const secret = "glpat-S3cretTokenValue0123456789"

func writeFile(t *testing.T, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), FileName)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// A file's entries are found by remote URL; the push remote carries the
// token of the entry's source; the forge repository defaults to the URL's
// path; a missing file configures nothing.
func TestLoad(t *testing.T) {
	t.Setenv("KANDEV_TEST_FORGE_TOKEN", secret)
	p := writeFile(t, `{"commit_identity":{"name":"Bot","email":"bot@example.com"},"repositories":[
		{"remote_url":"https://gitlab.example.com/group/sub/app.git","forge":"gitlab","api_url":"https://gitlab.example.com/","token_env":"KANDEV_TEST_FORGE_TOKEN"}]}`)
	s, err := Load(p, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if s.Identity().Name != "Bot" || s.Len() != 1 {
		t.Fatalf("identity %+v, %d entries", s.Identity(), s.Len())
	}
	a, err := s.For("https://gitlab.example.com/group/sub/app.git/")
	if err != nil {
		t.Fatal(err)
	}
	r, err := a.Remote()
	if err != nil || r.Auth.Token.Reveal() != secret || r.Auth.Username != "oauth2" || a.ForgeRepo() != "group/sub/app" || a.Repo().Owner != "group/sub" {
		t.Fatalf("remote %+v (%v), repo %q", r, err, a.ForgeRepo())
	}
	c1, _ := a.Client()
	c2, _ := a.Client()
	if c1 == nil || c1 != c2 {
		t.Fatal("the client is not kept while the token is unchanged")
	}
	if _, err := s.For("https://gitlab.example.com/other.git"); kanban.ErrorCode(err) != kanban.CodeNotFound {
		t.Fatalf("an unconfigured remote: %v", err)
	}
	empty, err := Load(filepath.Join(t.TempDir(), "none.json"), Options{})
	if err != nil || empty.Len() != 0 || empty.Identity() != DefaultIdentity {
		t.Fatalf("a missing file: %v", err)
	}
}

// Bad entries stop the start with an error naming the entry and key,
// never a value: a token_env agents inherit, both sources, a URL a push
// refuses, an unknown key, a duplicate, a token that cannot load.
func TestLoadRefusals(t *testing.T) {
	t.Setenv("GITHUB_TOKEN", secret)
	t.Setenv("KANDEV_TEST_FORGE_TOKEN", secret)
	agentEnv := func(name string) bool { return strings.HasPrefix(name, "GITHUB_") }
	entry := func(fields string) string {
		return `{"repositories":[{"remote_url":"https://github.com/o/r.git","forge":"github",` + fields + `}]}`
	}
	for name, content := range map[string]string{
		"agent env":   entry(`"token_env":"GITHUB_TOKEN"`),
		"both":        entry(`"token_env":"KANDEV_TEST_FORGE_TOKEN","token_file":"/x"`),
		"none":        entry(`"username":"u"`),
		"unset env":   entry(`"token_env":"KANDEV_TEST_UNSET_VARIABLE"`),
		"bad file":    entry(`"token_file":"/nonexistent/` + secret + `"`),
		"unknown key": entry(`"token_env":"KANDEV_TEST_FORGE_TOKEN","token":"` + secret + `"`),
		"forge":       `{"repositories":[{"remote_url":"https://github.com/o/r.git","forge":"bitbucket","token_env":"KANDEV_TEST_FORGE_TOKEN"}]}`,
		"ssh url":     `{"repositories":[{"remote_url":"ssh://git@github.com/o/r.git","forge":"github","token_env":"KANDEV_TEST_FORGE_TOKEN"}]}`,
		"user in url": `{"repositories":[{"remote_url":"https://u:` + secret + `@github.com/o/r.git","forge":"github","token_env":"KANDEV_TEST_FORGE_TOKEN"}]}`,
		"http":        `{"repositories":[{"remote_url":"http://github.com/o/r.git","forge":"github","token_env":"KANDEV_TEST_FORGE_TOKEN"}]}`,
		"no repo":     `{"repositories":[{"remote_url":"https://github.com/r.git","forge":"github","token_env":"KANDEV_TEST_FORGE_TOKEN"}]}`,
		"duplicate": `{"repositories":[{"remote_url":"https://github.com/o/r.git","forge":"github","token_env":"KANDEV_TEST_FORGE_TOKEN"},
			{"remote_url":"https://github.com/o/r.git/","forge":"github","token_env":"KANDEV_TEST_FORGE_TOKEN"}]}`,
		"api url": entry(`"token_env":"KANDEV_TEST_FORGE_TOKEN","api_url":"http://example.com/"`),
		"same forge repo": `{"repositories":[{"remote_url":"https://github.com/o/r.git","forge":"github","token_env":"KANDEV_TEST_FORGE_TOKEN"},
			{"remote_url":"https://mirror.example.com/x.git","forge":"github","forge_repo":"O/R","token_env":"KANDEV_TEST_FORGE_TOKEN"}]}`,
		"merge method":      `{"repositories":[],"merge_method":"fast-forward"}`,
		"poll interval":     `{"repositories":[],"poll_interval":"1ms"}`,
		"webhook forge":     `{"webhooks":{"bitbucket":{"token_env":"KANDEV_TEST_FORGE_TOKEN"}}}`,
		"webhook both":      `{"webhooks":{"github":{"token_env":"KANDEV_TEST_FORGE_TOKEN","token_file":"/x"}}}`,
		"webhook agent env": `{"webhooks":{"github":{"token_env":"GITHUB_TOKEN"}}}`,
	} {
		_, err := Load(writeFile(t, content), Options{AgentEnv: agentEnv})
		if err == nil {
			t.Errorf("%s: loaded, want refused", name)
			continue
		}
		if strings.Contains(err.Error(), secret) || strings.Contains(err.Error(), "github.com") {
			t.Errorf("%s: the error echoes a value: %v", name, err)
		}
	}
}

// The watcher's part of the file: webhooks, merge_method and
// poll_interval, with defaults; a pull request's account is found by its
// forge and repository (any case), the same entry its push uses.
func TestLoadWatch(t *testing.T) {
	t.Setenv("KANDEV_TEST_FORGE_TOKEN", secret)
	p := writeFile(t, `{"repositories":[{"remote_url":"https://github.com/Octo/App.git","forge":"github","token_env":"KANDEV_TEST_FORGE_TOKEN"}],
		"webhooks":{"github":{"token_env":"KANDEV_TEST_FORGE_TOKEN"}},"merge_method":"squash","poll_interval":"30s"}`)
	s, err := Load(p, Options{})
	if err != nil {
		t.Fatal(err)
	}
	w := s.Watch()
	if w.MergeMethod != "squash" || w.PollInterval != 30*time.Second || len(w.Webhooks) != 1 || w.Webhooks[kanban.ForgeGitHub].Env != "KANDEV_TEST_FORGE_TOKEN" {
		t.Fatalf("watch %+v", w)
	}
	byRepo, err := s.ForRepo(kanban.ForgeGitHub, "octo/app")
	if err != nil {
		t.Fatal(err)
	}
	byRemote, _ := s.For("https://github.com/Octo/App.git")
	if byRepo != byRemote {
		t.Fatal("the pull request's account is not its push's")
	}
	if c, err := s.Client(kanban.ForgeGitHub, "Octo/App"); err != nil || c == nil {
		t.Fatalf("client: %v", err)
	}
	for _, miss := range [][2]string{{"gitlab", "Octo/App"}, {"github", "octo/other"}} {
		if _, err := s.Client(kanban.ForgeKind(miss[0]), miss[1]); kanban.ErrorCode(err) != kanban.CodeUnavailable {
			t.Fatalf("%v: %v, want UNAVAILABLE", miss, err)
		}
	}
	empty, err := Load(filepath.Join(t.TempDir(), "none.json"), Options{})
	if err != nil || empty.Watch().PollInterval != DefaultPollInterval || empty.Watch().MergeMethod != "" || len(empty.Watch().Webhooks) != 0 {
		t.Fatalf("defaults: %+v, %v", empty.Watch(), err)
	}
}
