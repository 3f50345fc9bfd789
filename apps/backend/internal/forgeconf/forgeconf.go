// Package forgeconf is the server's one configuration of forge access,
// read from a JSON file at start (DATA_DIR/forges.json, or --forges-file):
// the forge accounts Kandev pushes task branches, opens, reads and merges
// pull requests, and watches them with (one entry per repository remote),
// the secrets of the webhooks forges deliver to it, how the PR automation
// merges, how often the watcher polls, and the identity of Kandev's
// commits. Each entry names the remote (the only URL the repository's
// task branches are pushed to), its forge (GitHub or GitLab, with the API
// root), the repository on the forge, and where its token lives
// (token_env or token_file, as credential.Source). Nothing here comes
// from a request: a task's repository's remote_url selects the entry of a
// push, a linked pull request's forge and repository the entry it is read
// and merged with.
//
// It imports kanban, credential, forge and worktree.
package forgeconf

import (
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"strings"
	"sync"

	"github.com/kandev/kandev/apps/backend/internal/credential"
	"github.com/kandev/kandev/apps/backend/internal/forge"
	"github.com/kandev/kandev/apps/backend/internal/kanban"
	"github.com/kandev/kandev/apps/backend/internal/worktree"
)

// FileName is the file's name in the data dir.
const FileName = "forges.json"

// Bounds of the file.
const (
	maxFileBytes = 1 << 20
	maxEntries   = 1000
)

// File is the file's content.
type File struct {
	// CommitIdentity is the author and committer of the commits Kandev
	// makes (DefaultIdentity when absent).
	CommitIdentity *worktree.Identity `json:"commit_identity,omitempty"`
	Repositories   []Entry            `json:"repositories"`
	// Webhooks holds each forge's webhook secret; a forge with none has no
	// webhook route (its pull requests are polled only).
	Webhooks map[kanban.ForgeKind]credential.Source `json:"webhooks,omitempty"`
	// MergeMethod is how auto-merge merges: merge (default), squash or rebase.
	MergeMethod forge.MergeMethod `json:"merge_method,omitempty"`
	// PollInterval is each watched pull request's poll interval (Go
	// duration text; default one minute).
	PollInterval string `json:"poll_interval,omitempty"`
}

// DefaultIdentity commits when the file names none.
var DefaultIdentity = worktree.Identity{Name: "Kandev", Email: "kandev@localhost"}

// Entry is one repository remote and its forge account.
type Entry struct {
	// RemoteURL is the repository's remote (https://…, or http:// to a
	// loopback host): a Kandev repository whose remote_url is this URL
	// pushes here, and only here.
	RemoteURL string `json:"remote_url"`
	// Forge is github or gitlab.
	Forge kanban.ForgeKind `json:"forge"`
	// APIURL is the forge's API root (default: api.github.com, or
	// gitlab.com for GitLab).
	APIURL string `json:"api_url,omitempty"`
	// Repo is the repository on the forge ("owner/name", or GitLab's
	// "group/sub/name"); default: the remote URL's path without ".git".
	Repo string `json:"forge_repo,omitempty"`
	// Username is the Basic user of a push (default: x-access-token on
	// GitHub, oauth2 on GitLab).
	Username string `json:"username,omitempty"`
	credential.Source
}

// Options are what Load checks the file against.
type Options struct {
	// AgentEnv reports whether agents inherit an environment variable: a
	// token_env they inherit is refused (an agent's own shell would read
	// the token). Nil: not checked.
	AgentEnv func(name string) bool
}

// Set is the loaded configuration.
type Set struct {
	identity worktree.Identity
	entries  map[string]*Account // normalised remote URL → account
	byRepo   map[string]*Account // forge kind and lower-cased forge repository → account
	watch    Watch
}

// Load reads and checks path; a missing file is an empty set. Errors name
// the entry by its index and the key at fault, never a value.
func Load(path string, o Options) (*Set, error) {
	f, err := os.Open(path) // #nosec G304 -- the operator's own configuration file
	if errors.Is(err, os.ErrNotExist) {
		return build(File{}, o)
	}
	if err != nil {
		return nil, errors.New("forges file: cannot be opened")
	}
	defer func() { _ = f.Close() }()
	b, err := io.ReadAll(io.LimitReader(f, maxFileBytes+1))
	if err != nil || len(b) > maxFileBytes {
		return nil, errors.New("forges file: cannot be read, or larger than 1 MiB")
	}
	var file File
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&file); err != nil {
		return nil, errors.New("forges file: not valid JSON of the documented shape (commit_identity, repositories, webhooks, merge_method, poll_interval; unknown keys are refused)")
	}
	return build(file, o)
}

// New builds a set from file (Load's checks).
func New(file File, o Options) (*Set, error) { return build(file, o) }

func build(file File, o Options) (*Set, error) {
	s := &Set{identity: DefaultIdentity, entries: map[string]*Account{}, byRepo: map[string]*Account{}}
	w, err := watch(file, o)
	if err != nil {
		return nil, fmt.Errorf("forges file: %w", err)
	}
	s.watch = w
	if file.CommitIdentity != nil {
		if err := file.CommitIdentity.Check(); err != nil {
			return nil, fmt.Errorf("forges file: commit_identity: %w", err)
		}
		s.identity = *file.CommitIdentity
	}
	if len(file.Repositories) > maxEntries {
		return nil, fmt.Errorf("forges file: at most %d repositories", maxEntries)
	}
	for i, e := range file.Repositories {
		a, err := account(e, o)
		if err != nil {
			return nil, fmt.Errorf("forges file: repositories[%d]: %w", i, err)
		}
		key := normalise(e.RemoteURL)
		if s.entries[key] != nil {
			return nil, fmt.Errorf("forges file: repositories[%d]: remote_url repeats an earlier entry", i)
		}
		rk := repoKey(a.Forge(), a.ForgeRepo())
		if s.byRepo[rk] != nil {
			return nil, fmt.Errorf("forges file: repositories[%d]: forge_repo repeats an earlier entry of its forge", i)
		}
		s.entries[key], s.byRepo[rk] = a, a
	}
	return s, nil
}

func account(e Entry, o Options) (*Account, error) {
	if err := worktree.CheckPushURL(e.RemoteURL); err != nil {
		return nil, errors.New("remote_url: must be an https URL of a repository (http to a loopback host only), without user, query or fragment")
	}
	if !e.Forge.Valid() {
		return nil, errors.New("forge: must be github or gitlab")
	}
	if err := e.Validate(); err != nil {
		return nil, err
	}
	if err := o.refuseInherited(e.Source); err != nil {
		return nil, err
	}
	if e.Repo == "" {
		u, _ := url.Parse(e.RemoteURL)
		e.Repo = strings.TrimSuffix(strings.Trim(u.Path, "/"), ".git")
	}
	if !strings.Contains(e.Repo, "/") {
		return nil, errors.New("forge_repo: must be owner/name (give it when the remote URL's path is not)")
	}
	if e.Username == "" {
		e.Username = worktree.DefaultUsername
		if e.Forge == kanban.ForgeGitLab {
			e.Username = "oauth2"
		}
	}
	owner, name := e.Repo, ""
	if i := strings.LastIndexByte(e.Repo, '/'); i > 0 {
		owner, name = e.Repo[:i], e.Repo[i+1:]
	}
	a := &Account{entry: e, repo: forge.Repo{Owner: owner, Name: name}, cred: credential.NewCached(e.Source)}
	if _, err := a.Token(); err != nil {
		return nil, err
	}
	if _, err := a.Client(); err != nil {
		return nil, errors.New("api_url: must be the forge's https API root (http to a loopback host only)")
	}
	return a, nil
}

// normalise is the matching form of a remote URL: no trailing slash.
func normalise(u string) string { return strings.TrimRight(u, "/") }

// Identity is the commit identity.
func (s *Set) Identity() worktree.Identity { return s.identity }

// Len is the number of configured remotes.
func (s *Set) Len() int { return len(s.entries) }

// For returns the account of a repository's remote URL. NOT_FOUND (a
// refusal safe to show: it names no URL) when none is configured.
func (s *Set) For(remoteURL string) (*Account, error) {
	if s != nil && remoteURL != "" {
		if a := s.entries[normalise(remoteURL)]; a != nil {
			return a, nil
		}
	}
	return nil, kanban.Errorf(kanban.CodeNotFound, "no forge account is configured for this repository's remote_url (see forges.json in the configuration docs)")
}

// Tokens loads every configured token, for redacting text (those that
// fail to load are skipped).
func (s *Set) Tokens() []string {
	if s == nil {
		return nil
	}
	var out []string
	for _, a := range s.entries {
		if t, err := a.Token(); err == nil {
			out = append(out, t.Reveal())
		}
	}
	return out
}

// Account is one configured remote and its forge account.
type Account struct {
	entry Entry
	repo  forge.Repo
	cred  *credential.Cached // the token, its secret file re-read when it changed

	mu     sync.Mutex
	client forge.Forge
	keyed  [32]byte // the token's hash the client was made with
}

// Forge is the account's forge kind.
func (a *Account) Forge() kanban.ForgeKind { return a.entry.Forge }

// Repo is the repository on the forge.
func (a *Account) Repo() forge.Repo { return a.repo }

// ForgeRepo is the repository as a pull request's record names it.
func (a *Account) ForgeRepo() string { return a.entry.Repo }

// Token returns the token: its secret file is read again when it changed
// (credential.Cached), so a rotation needs no restart.
func (a *Account) Token() (credential.Token, error) {
	t, err := a.cred.Load()
	if err != nil {
		return credential.Token{}, err
	}
	return t, nil
}

// Remote is where a push goes: the configured URL with the token.
func (a *Account) Remote() (worktree.Remote, error) {
	t, err := a.Token()
	if err != nil {
		return worktree.Remote{}, unavailable()
	}
	return worktree.Remote{URL: a.entry.RemoteURL, Auth: worktree.Auth{Scheme: worktree.AuthBasic, Username: a.entry.Username, Token: t}}, nil
}

// Client returns the account's forge client: the same one while the
// token is unchanged (its conditional-request cache is per client), a
// new one after the token rotated.
func (a *Account) Client() (forge.Forge, error) {
	t, err := a.Token()
	if err != nil {
		return nil, unavailable()
	}
	key := sha256.Sum256([]byte(t.Reveal()))
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.client != nil && key == a.keyed {
		return a.client, nil
	}
	var c forge.Forge
	switch a.entry.Forge {
	case kanban.ForgeGitLab:
		c, err = forge.NewGitLab(forge.GitLabConfig{URL: a.entry.APIURL, Token: t})
	default:
		c, err = forge.NewGitHub(forge.GitHubConfig{APIURL: a.entry.APIURL, Token: t})
	}
	if err != nil {
		return nil, kanban.Errorf(kanban.CodeUnavailable, "the forge account of this repository is misconfigured (api_url)")
	}
	a.client, a.keyed = c, key
	return c, nil
}

func unavailable() error {
	return kanban.Errorf(kanban.CodeUnavailable, "the token of this repository's forge account cannot be loaded (token_env or token_file)")
}
