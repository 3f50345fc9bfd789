package forgeconf

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/kandev/kandev/apps/backend/internal/credential"
	"github.com/kandev/kandev/apps/backend/internal/forge"
	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// DefaultPollInterval is a watched pull request's poll interval when the
// file names none.
const DefaultPollInterval = time.Minute

// Watch is what the PR watcher takes from the file besides the accounts.
type Watch struct {
	// Webhooks are the forges' webhook secrets (a forge without one has
	// no webhook route).
	Webhooks map[kanban.ForgeKind]credential.Source
	// MergeMethod is how auto-merge merges (merge when empty).
	MergeMethod forge.MergeMethod
	// PollInterval is each watched pull request's poll interval.
	PollInterval time.Duration
}

// watch checks the file's webhooks, merge_method and poll_interval.
func watch(file File, o Options) (Watch, error) {
	w := Watch{Webhooks: map[kanban.ForgeKind]credential.Source{}, MergeMethod: file.MergeMethod, PollInterval: DefaultPollInterval}
	for k, src := range file.Webhooks {
		if !k.Valid() {
			return Watch{}, errors.New("webhooks are keyed github or gitlab")
		}
		if err := src.Validate(); err != nil {
			return Watch{}, fmt.Errorf("webhooks.%s: %w", k, err)
		}
		if err := o.refuseInherited(src); err != nil {
			return Watch{}, fmt.Errorf("webhooks.%s: %w", k, err)
		}
		w.Webhooks[k] = src
	}
	switch file.MergeMethod {
	case "", forge.MergeCommit, forge.MergeSquash, forge.MergeRebase:
	default:
		return Watch{}, errors.New("merge_method must be merge, squash or rebase")
	}
	if file.PollInterval != "" {
		d, err := time.ParseDuration(file.PollInterval)
		if err != nil || d < 10*time.Millisecond || d > 24*time.Hour {
			return Watch{}, errors.New("poll_interval must be a duration from 10ms to 24h")
		}
		w.PollInterval = d
	}
	return w, nil
}

// refuseInherited refuses a token_env agents inherit: an agent's own
// shell would read the secret.
func (o Options) refuseInherited(src credential.Source) error {
	if src.Env != "" && o.AgentEnv != nil && o.AgentEnv(src.Env) {
		return errors.New("token_env: agents inherit this variable (--agent-env or the default allow-list); use a name they do not, such as KANDEV_GITHUB_TOKEN")
	}
	return nil
}

func repoKey(kind kanban.ForgeKind, repo string) string {
	return string(kind) + " " + strings.ToLower(repo)
}

// Watch is the watcher's part of the file.
func (s *Set) Watch() Watch { return s.watch }

// ForRepo returns the account of a pull request's repository on a forge
// (the entry whose forge and forge_repo are these; case does not
// matter). UNAVAILABLE (a refusal safe to show) when none is configured.
func (s *Set) ForRepo(kind kanban.ForgeKind, repo string) (*Account, error) {
	if s != nil {
		if a := s.byRepo[repoKey(kind, repo)]; a != nil {
			return a, nil
		}
	}
	return nil, kanban.Errorf(kanban.CodeUnavailable, "no forge account serves this pull request's repository (see forges.json in the configuration docs)")
}

// Client returns the client of a pull request's repository's account.
func (s *Set) Client(kind kanban.ForgeKind, repo string) (forge.Forge, error) {
	a, err := s.ForRepo(kind, repo)
	if err != nil {
		return nil, err
	}
	return a.Client()
}
