package action

import (
	"context"
	"encoding/json"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// ExecutorProfileListIn is the payload of executor.profile.list; an empty
// ExecutorID lists every executor's profiles.
type ExecutorProfileListIn struct {
	ExecutorID string `json:"executor_id,omitzero"`
	Limit      int    `json:"limit,omitzero"`
	Cursor     string `json:"cursor,omitzero"`
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
	Register(r, kanban.ActionExecutorProfileList, read, func(ctx context.Context, _ Principal, in ExecutorProfileListIn) (*kanban.List[kanban.ExecutorProfile], error) {
		return s.store.ListExecutorProfiles(ctx, in.ExecutorID, kanban.Page{Limit: in.Limit, Cursor: in.Cursor})
	})
	Register(r, kanban.ActionExecutorProfileCreate, cfg, func(ctx context.Context, _ Principal, in ExecutorProfileCreateIn) (*kanban.ExecutorProfile, error) {
		return s.store.CreateExecutorProfile(ctx, kanban.ExecutorProfile{ExecutorID: in.ExecutorID, Name: in.Name,
			MCPPolicy: in.MCPPolicy, Config: in.Config, PrepareScript: in.PrepareScript, CleanupScript: in.CleanupScript})
	})
	Register(r, kanban.ActionExecutorProfileUpdate, cfg, func(ctx context.Context, _ Principal, in ExecutorProfileUpdateIn) (*kanban.ExecutorProfile, error) {
		return s.store.UpdateExecutorProfile(ctx, in.ProfileID, kanban.ExecutorProfileUpdate{Name: in.Name, MCPPolicy: in.MCPPolicy,
			Config: in.Config, PrepareScript: in.PrepareScript, CleanupScript: in.CleanupScript})
	})
	Register(r, kanban.ActionExecutorProfileDelete, cfg, func(ctx context.Context, _ Principal, in ProfileRefIn) (*Deleted, error) {
		if err := s.store.DeleteExecutorProfile(ctx, in.ProfileID); err != nil {
			return nil, err
		}
		return &Deleted{ID: in.ProfileID, Deleted: true}, nil
	})
}
