package action

import (
	"context"
	"encoding/json"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// ExecutorProfileListIn is the payload of executor.profile.list; an empty
// ExecutorID lists every executor's profiles. WorkspaceID (the operator's
// filter) lists only the profiles usable there: the global ones and that
// workspace's. A session always gets its own workspace's view.
type ExecutorProfileListIn struct {
	ExecutorID  string `json:"executor_id,omitzero"`
	WorkspaceID string `json:"workspace_id,omitzero"`
	Limit       int    `json:"limit,omitzero"`
	Cursor      string `json:"cursor,omitzero"`
}

// ExecutorProfileCreateIn is the payload of executor.profile.create.
// MCPPolicy (one of kanban.MCPPolicies) defaults to "inherit"; Config is an
// open object.
type ExecutorProfileCreateIn struct {
	ExecutorID    string                     `json:"executor_id,omitzero"`
	Name          string                     `json:"name,omitzero"`
	MCPPolicy     string                     `json:"mcp_policy,omitzero"`
	Config        map[string]json.RawMessage `json:"config,omitzero"`
	PrepareScript string                     `json:"prepare_script,omitzero"`
	CleanupScript string                     `json:"cleanup_script,omitzero"`
}

// ExecutorProfileUpdateIn is the payload of executor.profile.update: set
// fields change; Config, when given, replaces the stored config.
type ExecutorProfileUpdateIn struct {
	ProfileID     string                     `json:"profile_id,omitzero"`
	Name          *string                    `json:"name,omitzero"`
	MCPPolicy     *string                    `json:"mcp_policy,omitzero"`
	Config        map[string]json.RawMessage `json:"config,omitzero"`
	PrepareScript *string                    `json:"prepare_script,omitzero"`
	CleanupScript *string                    `json:"cleanup_script,omitzero"`
}

func (s *Service) registerExecutorConfig(r *Registry) {
	cfg := AllowOperator | AllowConfigSession
	read := AllowOperator | AllowSession
	Register(r, kanban.ActionExecutorList, read, func(ctx context.Context, _ Principal, in ListIn) (*kanban.List[kanban.Executor], error) {
		return s.store.ListExecutors(ctx, in.page())
	})
	Register(r, kanban.ActionExecutorProfileList, read, func(ctx context.Context, p Principal, in ExecutorProfileListIn) (*kanban.List[kanban.ExecutorProfile], error) {
		ws, err := listScope(p, in.WorkspaceID)
		if err != nil {
			return nil, err
		}
		out, err := s.store.ListExecutorProfiles(ctx, kanban.ProfileFilter{ParentID: in.ExecutorID, Workspace: ws}, kanban.Page{Limit: in.Limit, Cursor: in.Cursor})
		if err != nil || p.IsOperator() {
			return out, err
		}
		for i := range out.Items { // the operator's scripts may hold what an agent must not read
			out.Items[i].PrepareScript, out.Items[i].CleanupScript = "", ""
		}
		return out, nil
	})
	Register(r, kanban.ActionExecutorProfileCreate, cfg, func(ctx context.Context, p Principal, in ExecutorProfileCreateIn) (*kanban.ExecutorProfile, error) {
		ws, err := writerScope(p)
		if err != nil {
			return nil, err
		}
		if ws != "" && (in.PrepareScript != "" || in.CleanupScript != "") {
			return nil, errDelegateScripts()
		}
		return s.store.CreateExecutorProfile(ctx, kanban.ExecutorProfile{ExecutorID: in.ExecutorID, Name: in.Name,
			MCPPolicy: in.MCPPolicy, Config: in.Config, PrepareScript: in.PrepareScript, CleanupScript: in.CleanupScript,
			WorkspaceID: ws})
	})
	Register(r, kanban.ActionExecutorProfileUpdate, cfg, func(ctx context.Context, p Principal, in ExecutorProfileUpdateIn) (*kanban.ExecutorProfile, error) {
		ws, err := s.writableExecutorProfile(ctx, p, in.ProfileID)
		if err != nil {
			return nil, err
		}
		if ws != "" && (in.PrepareScript != nil || in.CleanupScript != nil) {
			return nil, errDelegateScripts()
		}
		return s.store.UpdateExecutorProfile(ctx, in.ProfileID, kanban.ExecutorProfileUpdate{Name: in.Name, MCPPolicy: in.MCPPolicy,
			Config: in.Config, PrepareScript: in.PrepareScript, CleanupScript: in.CleanupScript})
	})
	Register(r, kanban.ActionExecutorProfileDelete, cfg, func(ctx context.Context, p Principal, in ProfileRefIn) (*Deleted, error) {
		if _, err := s.writableExecutorProfile(ctx, p, in.ProfileID); err != nil {
			return nil, err
		}
		if err := s.store.DeleteExecutorProfile(ctx, in.ProfileID); err != nil {
			return nil, err
		}
		return &Deleted{ID: in.ProfileID, Deleted: true}, nil
	})
}

// writableExecutorProfile refuses (FORBIDDEN) p a change of the profile
// unless p is the operator or a session of the profile's workspace; it
// returns p's scope (see writerScope).
func (s *Service) writableExecutorProfile(ctx context.Context, p Principal, id string) (string, error) {
	ws, err := writerScope(p)
	if err != nil {
		return "", err
	}
	prof, err := s.store.GetExecutorProfile(ctx, id)
	if err != nil {
		return "", err
	}
	return ws, kanban.CheckProfileWrite(kanban.ExecutorProfileKind, prof.WorkspaceID, ws)
}

// errDelegateScripts refuses a session a prepare or cleanup script: the
// runtime runs them as shell commands on the server, so only the operator
// writes them (a session may not send them at all, not even unchanged).
func errDelegateScripts() error {
	return kanban.Errorf(kanban.CodeForbidden, "prepare and cleanup scripts are written by the operator only; leave prepare_script and cleanup_script out")
}
