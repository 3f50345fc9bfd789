package forge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/kandev/kandev/apps/backend/internal/credential"
	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// Config is the server side of Kandev's forge access (kandev serve
// --forges FILE, JSON): the accounts its pull requests are read, merged and
// watched with, the secrets of the webhooks forges deliver to it, and
// how the PR automation merges. Tokens and secrets are named (an
// environment variable or a secret file), never written in the file, and
// never reach a payload, a log line or an answer.
type Config struct {
	Accounts []Account `json:"accounts"`
	// Webhooks holds each forge's webhook secret; a forge with none has no
	// webhook route (its pull requests are polled only).
	Webhooks map[kanban.ForgeKind]credential.Source `json:"webhooks,omitempty"`
	// MergeMethod is how auto-merge merges: merge (default), squash or rebase.
	MergeMethod MergeMethod `json:"merge_method,omitempty"`
	// PollInterval is each watched pull request's poll interval (Go
	// duration text; default one minute).
	PollInterval string `json:"poll_interval,omitempty"`
}

// Account is one forge token and the repositories it serves.
type Account struct {
	Forge kanban.ForgeKind `json:"forge"`
	// URL is GitHub's API root (GitHub Enterprise: https://HOST/api/v3/)
	// or a GitLab instance; empty: github.com's or gitlab.com's.
	URL string `json:"url,omitempty"`
	// Repos are the forge repositories it serves: "owner/name", or
	// "owner/*" for all of an owner's; empty: every repository of its
	// forge that no other account names.
	Repos []string `json:"repos,omitempty"`
	credential.Source
}

// maxConfigFile bounds the forges file.
const maxConfigFile = 1 << 20

// ReadConfig reads a forges configuration file (JSON, at most
// maxConfigFile bytes, unknown keys refused) and checks it. Errors name
// the file's keys, never its values.
func ReadConfig(path string) (Config, error) {
	f, err := os.Open(path) // #nosec G304 -- the operator's own configuration file
	if err != nil {
		return Config{}, errors.New("the forges file cannot be opened")
	}
	defer func() { _ = f.Close() }()
	b, err := io.ReadAll(io.LimitReader(f, maxConfigFile+1))
	if err != nil || len(b) > maxConfigFile {
		return Config{}, fmt.Errorf("the forges file cannot be read or is larger than %d bytes", maxConfigFile)
	}
	var c Config
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		return Config{}, errors.New("the forges file is not a forges configuration (accounts, webhooks, merge_method, poll_interval)")
	}
	return c, c.Check()
}

// Check validates the configuration; errors name keys, never values.
func (c Config) Check() error {
	for i, a := range c.Accounts {
		if !a.Forge.Valid() {
			return fmt.Errorf("accounts[%d].forge must be github or gitlab", i)
		}
		if err := a.Validate(); err != nil {
			return fmt.Errorf("accounts[%d]: %w", i, err)
		}
		for _, r := range a.Repos {
			if owner, name, ok := strings.Cut(r, "/"); !ok || owner == "" || name == "" {
				return fmt.Errorf("accounts[%d].repos: each is owner/name or owner/*", i)
			}
		}
	}
	for k, s := range c.Webhooks {
		if !k.Valid() {
			return errors.New("webhooks are keyed github or gitlab")
		}
		if err := s.Validate(); err != nil {
			return fmt.Errorf("webhooks.%s: %w", k, err)
		}
	}
	switch c.MergeMethod {
	case "", MergeCommit, MergeSquash, MergeRebase:
	default:
		return errors.New("merge_method must be merge, squash or rebase")
	}
	if c.PollInterval != "" {
		if d, err := time.ParseDuration(c.PollInterval); err != nil || d < 10*time.Millisecond || d > 24*time.Hour {
			return errors.New("poll_interval must be a duration from 10ms to 24h")
		}
	}
	return nil
}

// Accounts gives the client of a forge repository's account: one client
// per account (its conditional-request cache and rate limits are per
// client), built on first use with the token loaded then.
type Accounts struct {
	accounts []Account
	mu       sync.Mutex
	clients  map[int]Forge
}

// NewAccounts returns the accounts of c (checked).
func NewAccounts(c Config) *Accounts {
	return &Accounts{accounts: c.Accounts, clients: map[int]Forge{}}
}

// Forge returns the client of the account of repo ("owner/name") on the
// forge kind: the account naming the repository, else its owner, else
// the one of its forge naming none.
// UNAVAILABLE when no account serves it or its token cannot be loaded.
func (f *Accounts) Forge(_ context.Context, kind kanban.ForgeKind, repo string) (Forge, error) {
	i := f.account(kind, repo)
	if i < 0 {
		return nil, kanban.Errorf(kanban.CodeUnavailable, "no forge account serves this repository (see --forges)")
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if c, ok := f.clients[i]; ok {
		return c, nil
	}
	a := f.accounts[i]
	tok, err := a.Load()
	if err != nil {
		return nil, kanban.Errorf(kanban.CodeUnavailable, "the forge account's token cannot be loaded: %s", err.Error())
	}
	var c Forge
	if a.Forge == kanban.ForgeGitLab {
		c, err = NewGitLab(GitLabConfig{URL: a.URL, Token: tok})
	} else {
		c, err = NewGitHub(GitHubConfig{APIURL: a.URL, Token: tok})
	}
	if err != nil {
		return nil, kanban.Errorf(kanban.CodeUnavailable, "the forge account cannot be used: %s", err.Error())
	}
	f.clients[i] = c
	return c, nil
}

// account finds the account of a forge repository (-1: none).
func (f *Accounts) account(kind kanban.ForgeKind, repo string) int {
	owner, _, _ := strings.Cut(repo, "/")
	best, rank := -1, 0
	for i, a := range f.accounts {
		if a.Forge != kind {
			continue
		}
		r := 0
		if len(a.Repos) == 0 {
			r = 1
		}
		for _, p := range a.Repos {
			switch {
			case strings.EqualFold(p, repo):
				r = 3
			case r < 2 && strings.EqualFold(p, owner+"/*"):
				r = 2
			}
		}
		if r > rank {
			best, rank = i, r
		}
	}
	return best
}
