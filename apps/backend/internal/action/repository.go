package action

import (
	"context"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// RepositoryListIn is the payload of repository.list; an empty WorkspaceID
// means the session's workspace, or the first workspace for the operator.
type RepositoryListIn struct {
	WorkspaceID string `json:"workspace_id,omitzero"`
	Limit       int    `json:"limit,omitzero"`
	Cursor      string `json:"cursor,omitzero"`
}

// RepositoryCreateIn is the payload of repository.create.
type RepositoryCreateIn struct {
	WorkspaceID   string `json:"workspace_id,omitzero"`
	Name          string `json:"name,omitzero"`
	LocalPath     string `json:"local_path,omitzero"`
	RemoteURL     string `json:"remote_url,omitzero"`
	DefaultBranch string `json:"default_branch,omitzero"`
}

// RepositoryUpdateIn is the payload of repository.update.
type RepositoryUpdateIn struct {
	ID            string `json:"id,omitzero"`
	DefaultBranch string `json:"default_branch,omitzero"`
}

func (s *Service) registerRepositories(r *Registry) {
	cfg := AllowOperator | AllowConfigSession
	Register(r, kanban.ActionRepositoryList, AllowOperator|AllowSession, func(ctx context.Context, p Principal, in RepositoryListIn) (*kanban.List[kanban.Repository], error) {
		ws, err := s.workspaceFor(ctx, p, in.WorkspaceID)
		if err != nil {
			return nil, err
		}
		l, err := s.store.ListRepositories(ctx, ws, kanban.Page{Limit: in.Limit, Cursor: in.Cursor})
		if err != nil {
			return nil, err
		}
		see, err := s.seesLocalPaths(ctx, p)
		if err != nil {
			return nil, err
		}
		if !see { // a task-mode agent learns no absolute server path
			for i := range l.Items {
				l.Items[i].LocalPath = ""
			}
		}
		return l, nil
	})
	// Registering a repository is the operator's (see errRegisterForbidden).
	Register(r, kanban.ActionRepositoryCreate, AllowOperator, func(ctx context.Context, p Principal, in RepositoryCreateIn) (*kanban.Repository, error) {
		ws, err := s.workspaceFor(ctx, p, in.WorkspaceID)
		if err != nil {
			return nil, err
		}
		local := in.LocalPath
		if local != "" {
			if local, err = s.fs.CheckSource("local_path", local); err != nil {
				return nil, err
			}
		}
		return s.register(ctx, &kanban.Repository{WorkspaceID: ws, Name: in.Name, LocalPath: local,
			RemoteURL: in.RemoteURL, DefaultBranch: in.DefaultBranch})
	})
	Register(r, kanban.ActionRepositoryUpdate, cfg, func(ctx context.Context, p Principal, in RepositoryUpdateIn) (*kanban.Repository, error) {
		repo, err := s.repositoryInScope(ctx, p, in.ID)
		if err != nil {
			return nil, err
		}
		out, err := s.store.UpdateRepository(ctx, repo.ID, &in.DefaultBranch)
		if err != nil {
			return nil, err
		}
		kanban.EventRepositoryUpdated.Publish(s.pub, WorkspaceTopic(out.WorkspaceID), out)
		return out, nil
	})
}

// repositoryInScope loads a repository a principal may reach: sessions
// reach only their own workspace's repositories.
func (s *Service) repositoryInScope(ctx context.Context, p Principal, id string) (*kanban.Repository, error) {
	if id == "" {
		return nil, kanban.FieldError("id", "is required")
	}
	repo, err := s.store.GetRepository(ctx, id)
	if err != nil {
		return nil, err
	}
	if err := confine(p, repo.WorkspaceID, "repository"); err != nil {
		return nil, err
	}
	return repo, nil
}
