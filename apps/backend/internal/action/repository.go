package action

import (
	"context"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
	"github.com/kandev/kandev/apps/backend/internal/schema"
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

var _ = declare(Def[RepositoryListIn, *kanban.List[kanban.Repository]]{
	Name:   kanban.ActionRepositoryList,
	Effect: Reads,
	Tool:   "list_repositories_kandev",
	Allow:  AllowOperator | AllowSession,
	Schema: schema.Obj("", pageProps(schema.P{
		"workspace_id": idProp("Workspace whose repositories to list. Default: your workspace, else the first workspace."),
	})),
	Run: func(s *Service, ctx context.Context, p Principal, in RepositoryListIn) (*kanban.List[kanban.Repository], error) {
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
	},
})

// Registering a repository is the operator's (see errRegisterForbidden).
var _ = declare(Def[RepositoryCreateIn, *kanban.Repository]{
	Name:   kanban.ActionRepositoryCreate,
	Effect: Writes,
	Allow:  AllowOperator,
	Schema: schema.Obj("", schema.P{
		"workspace_id":   idProp("The repository's workspace; default the session's, else the first."),
		"name":           schema.Str("Name; default the locator's last segment.").Len(1, kanban.MaxNameLen),
		"local_path":     schema.Str("Local checkout path.").Len(1, kanban.MaxPathLen),
		"remote_url":     schema.Str("Remote URL.").Len(1, kanban.MaxURLLen),
		"default_branch": schema.Str("Branch tasks start from; default main.").Len(1, kanban.MaxBranchLen),
	}),
	Run: func(s *Service, ctx context.Context, p Principal, in RepositoryCreateIn) (*kanban.Repository, error) {
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
	},
})

var _ = declare(Def[RepositoryUpdateIn, *kanban.Repository]{
	Name:   kanban.ActionRepositoryUpdate,
	Effect: Writes,
	Allow:  cfg,
	Schema: schema.Obj("", schema.P{
		"id":             idProp("The repository."),
		"default_branch": schema.Str("Branch tasks start from.").Len(1, kanban.MaxBranchLen),
	}, "id", "default_branch"),
	Run: func(s *Service, ctx context.Context, p Principal, in RepositoryUpdateIn) (*kanban.Repository, error) {
		repo, err := s.repositoryInScope(ctx, p, in.ID)
		if err != nil {
			return nil, err
		}
		out, err := s.store.UpdateRepository(ctx, repo.ID, &in.DefaultBranch)
		if err != nil {
			return nil, err
		}
		kanban.EventRepositoryUpdated.PublishContext(ctx, s.pub, WorkspaceTopic(out.WorkspaceID), out)
		return out, nil
	},
})

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
