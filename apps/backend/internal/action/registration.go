package action

import (
	"context"
	"path/filepath"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// errRegisterForbidden refuses a session that names a repository or folder
// its workspace does not have. Registering one is the operator's: a path a
// session registered would become readable by every agent of the
// workspace, so filesystem reach stays an operator decision, even for a
// config-mode delegate.
func errRegisterForbidden() error {
	return kanban.Errorf(kanban.CodeForbidden, "registering a new repository or folder is for the operator; "+
		"attach one the workspace already has, or ask the operator to register it")
}

// knownRepo returns the workspace's repository with local path localPath
// (as given, else lexically cleaned) or, without one, remote URL
// remoteURL. NOT_FOUND when the workspace has none. It reads no file.
func (s *Service) knownRepo(ctx context.Context, workspaceID, localPath, remoteURL string) (*kanban.Repository, error) {
	repo, err := s.store.FindRepository(ctx, workspaceID, localPath, remoteURL)
	if kanban.ErrorCode(err) == kanban.CodeNotFound && localPath != "" {
		if clean := filepath.Clean(localPath); clean != localPath {
			return s.store.FindRepository(ctx, workspaceID, clean, remoteURL)
		}
	}
	return repo, err
}

// resolveSource returns the workspace's repository that src's locator
// names, or, when there is none and p is the operator, src ready to be
// registered: its local path checked by the filesystem policy and made
// canonical (a repository the workspace has under that canonical path is
// returned instead); field names the local path in refusals. A session is
// FORBIDDEN to name what the workspace does not have.
func (s *Service) resolveSource(ctx context.Context, p Principal, workspaceID string, src kanban.Repository, field string) (*kanban.Repository, *kanban.Repository, error) {
	src.WorkspaceID = workspaceID
	repo, err := s.knownRepo(ctx, workspaceID, src.LocalPath, src.RemoteURL)
	switch {
	case err == nil:
		return repo, nil, nil
	case kanban.ErrorCode(err) != kanban.CodeNotFound:
		return nil, nil, err
	case p.Kind != Operator:
		return nil, nil, errRegisterForbidden()
	case src.LocalPath == "":
		return nil, &src, nil // a remote URL: its rules are the URL check's
	}
	canonical, err := s.fs.CheckSource(field, src.LocalPath)
	if err != nil {
		return nil, nil, err
	}
	if canonical != src.LocalPath {
		repo, err := s.store.FindRepository(ctx, workspaceID, canonical, "")
		if err == nil || kanban.ErrorCode(err) != kanban.CodeNotFound {
			return repo, nil, err
		}
		src.LocalPath = canonical
	}
	return nil, &src, nil
}

// register creates a repository resolveSource made ready, and tells the
// workspace.
func (s *Service) register(ctx context.Context, reg *kanban.Repository) (*kanban.Repository, error) {
	repo, err := s.store.CreateRepository(ctx, *reg)
	if err != nil {
		return nil, err
	}
	kanban.EventRepositoryCreated.PublishContext(ctx, s.pub, WorkspaceTopic(repo.WorkspaceID), repo)
	return repo, nil
}

// seesLocalPaths reports whether p may learn repositories' local paths:
// the operator and config-mode sessions (the operator's delegates) may; a
// task-mode agent learns no absolute server path.
func (s *Service) seesLocalPaths(ctx context.Context, p Principal) (bool, error) {
	if p.Kind == Operator {
		return true, nil
	}
	sess, err := s.store.GetSession(ctx, p.SessionID)
	if err != nil {
		return false, err
	}
	return sess.MCPMode == kanban.ModeConfig, nil
}

// withoutLocalPath is repo without its local path (a copy).
func withoutLocalPath(repo *kanban.Repository) *kanban.Repository {
	if repo == nil || repo.LocalPath == "" {
		return repo
	}
	out := *repo
	out.LocalPath = ""
	return &out
}
