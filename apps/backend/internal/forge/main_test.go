package forge

import (
	"context"
	"fmt"
	"os"
	"sync"
	"testing"

	"github.com/kandev/kandev/apps/backend/internal/credential"
	"github.com/kandev/kandev/apps/backend/internal/forgetest"
)

// One Prism serves every test of the package (it takes seconds to load
// GitHub's description); each test gets its own stateful layer in front.
var shared struct {
	once  sync.Once
	prism *forgetest.Prism
	err   error
}

func TestMain(m *testing.M) {
	code := m.Run()
	if shared.prism != nil {
		if err := shared.prism.Close(); err != nil {
			fmt.Fprintln(os.Stderr, err)
		}
	}
	os.Exit(code)
}

// mockGitHub returns a stateful GitHub (over the shared Prism) and a
// client of it. Without the mocks installed the test is skipped, unless
// KANDEV_FORGE_TESTS=1 (make test), when it fails.
func mockGitHub(t *testing.T) (*forgetest.GitHub, *GitHub) {
	t.Helper()
	shared.once.Do(func() { shared.prism, shared.err = forgetest.StartPrism(context.Background()) })
	if shared.err != nil {
		if os.Getenv(forgetest.EnvRequired) == "1" {
			t.Fatalf("the GitHub API mock: %v", shared.err)
		}
		t.Skipf("the GitHub API mock is not available (%v); make -C tests/forge install", shared.err)
	}
	gh := forgetest.NewGitHub(t, shared.prism, apiToken)
	c, err := NewGitHub(GitHubConfig{APIURL: gh.URL, Token: mustToken(t, apiToken)})
	if err != nil {
		t.Fatal(err)
	}
	return gh, c
}

const apiToken = "ghp_ApiT0kenOfTheServer0123456789abcdef"

func mustToken(t *testing.T, s string) credential.Token {
	t.Helper()
	tok, err := credential.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}
