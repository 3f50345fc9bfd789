package action

import (
	"context"
	"slices"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// A session's profile is its stored mode and capabilities plus the forge
// capabilities its task's repositories give it (kanban.ForgeCapabilities):
// the PR automation tools are served, and their actions allowed, only to
// a session whose task has a repository of a configured GitHub account,
// the MR ones only for GitLab. Discovery (the profile the session's MCP
// server builds its tools from) and enforcement (the registry's mode
// check) both read it from here.

// maxProfileSessions bounds the sessions of one task told of a profile
// change (a task has a handful; the rest keep theirs until they attach).
const maxProfileSessions = 200

// forgeCaps returns the forge capabilities of a task's repositories (a
// subtask sharing its parent's directory has the parent's, as the changes
// and ship actions do), in kanban.ForgeCapabilities order (none without a
// forges file).
func (s *Service) forgeCaps(ctx context.Context, taskID string) ([]string, error) {
	if s.ship == nil || s.ship.Forges == nil || s.ship.Forges.Len() == 0 || taskID == "" {
		return nil, nil
	}
	t, err := s.store.GetTask(ctx, taskID)
	if err != nil {
		return nil, err
	}
	_, links, err := s.taskLinks(ctx, t)
	if err != nil {
		return nil, err
	}
	has := map[string]bool{}
	for _, l := range links {
		repo, err := s.store.GetRepository(ctx, l.RepositoryID)
		if err != nil {
			return nil, err
		}
		if acct, err := s.ship.Forges.For(repo.RemoteURL); err == nil {
			has[kanban.ForgeCapability(acct.Forge())] = true
		}
	}
	var out []string
	for _, c := range kanban.ForgeCapabilities {
		if has[c] {
			out = append(out, c)
		}
	}
	return out, nil
}

// profile is a session's profile with its derived capabilities.
func (s *Service) profile(ctx context.Context, sess *kanban.Session) (*kanban.SessionProfile, error) {
	prof := kanban.ProfileOf(sess)
	caps, err := s.forgeCaps(ctx, sess.TaskID)
	if err != nil {
		return nil, err
	}
	prof.Capabilities = withDerived(prof.Capabilities, caps)
	return prof, nil
}

// withDerived returns given (without any derived capability a stored
// session could carry) followed by derived, as a new slice.
func withDerived(given, derived []string) []string {
	out := make([]string, 0, len(given)+len(derived))
	for _, c := range given {
		if !slices.Contains(kanban.ForgeCapabilities, c) {
			out = append(out, c)
		}
	}
	return append(out, derived...)
}

// sessionCaps is the registry's second look at a session refused on its
// stored capabilities: those plus its derived ones.
func (s *Service) sessionCaps(ctx context.Context, sess *kanban.Session) []string {
	caps, err := s.forgeCaps(ctx, sess.TaskID)
	if err != nil {
		s.log.WarnContext(ctx, "derive session capabilities", "err", err)
		return sess.Capabilities
	}
	return withDerived(sess.Capabilities, caps)
}

// publishProfile tells a session's MCP server (and the board) its
// profile; the server rebuilds its tools and notifies its client when
// they changed.
func (s *Service) publishProfile(prof *kanban.SessionProfile) {
	kanban.EventSessionModeChanged.Publish(s.pub, SessionTopic(prof.SessionID), prof)
	kanban.EventSessionModeChanged.Publish(s.pub, WorkspaceTopic(prof.WorkspaceID), prof)
}

// ProfilesChanged re-publishes the profile of each live session of a task
// after its repositories changed (their forge capabilities may have).
func (s *Service) ProfilesChanged(ctx context.Context, taskID string) {
	page, err := s.store.ListSessions(ctx, taskID, kanban.Page{Limit: maxProfileSessions})
	if err != nil {
		s.log.WarnContext(ctx, "list sessions for a profile change", "err", err)
		return
	}
	for i := range page.Items {
		sess := &page.Items[i]
		if sess.State.Ended() {
			continue
		}
		prof, err := s.profile(ctx, sess)
		if err != nil {
			s.log.WarnContext(ctx, "session profile", "err", err)
			return
		}
		s.publishProfile(prof)
	}
}
