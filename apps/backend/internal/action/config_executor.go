package action

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
	"github.com/kandev/kandev/apps/backend/internal/schema"
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

var _ = declare(Def[ListIn, *kanban.List[kanban.Executor]]{
	Name:   kanban.ActionExecutorList,
	Effect: Reads,
	Tool:   "list_executors_kandev",
	Allow:  all,
	Schema: schema.Obj("", pageProps(schema.P{})),
	Run: func(s *Service, ctx context.Context, _ Principal, in ListIn) (*kanban.List[kanban.Executor], error) {
		return s.store.ListExecutors(ctx, in.page())
	},
})

var _ = declare(Def[ExecutorProfileListIn, *kanban.List[kanban.ExecutorProfile]]{
	Name:   kanban.ActionExecutorProfileList,
	Effect: Reads,
	Allow:  all,
	Schema: schema.Obj("", pageProps(schema.P{
		"executor_id":  idProp("Only profiles of this executor."),
		"workspace_id": idProp(usableInWorkspace),
	})),
	Run: func(s *Service, ctx context.Context, p Principal, in ExecutorProfileListIn) (*kanban.List[kanban.ExecutorProfile], error) {
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
	},
})

var _ = declare(Def[ExecutorProfileCreateIn, *kanban.ExecutorProfile]{
	Name:   kanban.ActionExecutorProfileCreate,
	Effect: Writes,
	Tool:   "create_executor_profile_kandev",
	Allow:  cfg,
	Schema: schema.Obj("", withExecutorFields(schema.P{
		"executor_id": idProp("Executor the profile configures."),
		"name":        schema.Str("Name, unique per executor.").Len(1, kanban.MaxNameLen),
		"mcp_policy":  schema.Enum("How its sessions treat MCP servers.", kanban.MCPPolicies...).Default(kanban.MCPPolicies[0]),
	}), "executor_id", "name"),
	Run: func(s *Service, ctx context.Context, p Principal, in ExecutorProfileCreateIn) (*kanban.ExecutorProfile, error) {
		ws, err := writerScope(p)
		if err != nil {
			return nil, err
		}
		if ws != "" && (in.PrepareScript != "" || in.CleanupScript != "") {
			return nil, errDelegateScripts()
		}
		if err := s.checkDockerProfile(ctx, p, in.ExecutorID, in.Config, true); err != nil {
			return nil, err
		}
		return s.store.CreateExecutorProfile(ctx, kanban.ExecutorProfile{ExecutorID: in.ExecutorID, Name: in.Name,
			MCPPolicy: in.MCPPolicy, Config: in.Config, PrepareScript: in.PrepareScript, CleanupScript: in.CleanupScript,
			WorkspaceID: ws})
	},
})

var _ = declare(Def[ExecutorProfileUpdateIn, *kanban.ExecutorProfile]{
	Name:   kanban.ActionExecutorProfileUpdate,
	Effect: Writes,
	Tool:   "update_executor_profile_kandev",
	Allow:  cfg,
	Schema: schema.Obj("", withExecutorFields(schema.P{
		"profile_id": idProp("Executor profile to change."),
		"name":       schema.Str("New name, unique per executor.").Len(1, kanban.MaxNameLen),
		"mcp_policy": schema.Enum("How its sessions treat MCP servers.", kanban.MCPPolicies...),
	}), "profile_id"),
	Run: func(s *Service, ctx context.Context, p Principal, in ExecutorProfileUpdateIn) (*kanban.ExecutorProfile, error) {
		ws, err := s.writableExecutorProfile(ctx, p, in.ProfileID)
		if err != nil {
			return nil, err
		}
		if ws != "" && (in.PrepareScript != nil || in.CleanupScript != nil) {
			return nil, errDelegateScripts()
		}
		prof, err := s.store.GetExecutorProfile(ctx, in.ProfileID)
		if err != nil {
			return nil, err
		}
		if err := s.checkDockerProfile(ctx, p, prof.ExecutorID, in.Config, in.Config != nil); err != nil {
			return nil, err
		}
		return s.store.UpdateExecutorProfile(ctx, in.ProfileID, kanban.ExecutorProfileUpdate{Name: in.Name, MCPPolicy: in.MCPPolicy,
			Config: in.Config, PrepareScript: in.PrepareScript, CleanupScript: in.CleanupScript})
	},
})

var _ = declare(Def[ProfileRefIn, *Deleted]{
	Name:   kanban.ActionExecutorProfileDelete,
	Effect: Writes,
	Tool:   "delete_executor_profile_kandev",
	Allow:  cfg,
	Schema: schema.Obj("", schema.P{
		"profile_id": idProp("Executor profile to delete."),
	}, "profile_id"),
	Run: func(s *Service, ctx context.Context, p Principal, in ProfileRefIn) (*Deleted, error) {
		if _, err := s.writableExecutorProfile(ctx, p, in.ProfileID); err != nil {
			return nil, err
		}
		if err := s.store.DeleteExecutorProfile(ctx, in.ProfileID); err != nil {
			return nil, err
		}
		return &Deleted{ID: in.ProfileID, Deleted: true}, nil
	},
})

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

// checkDockerProfile checks a profile of a Docker or SSH executor being
// created or changed: only the operator configures them (an image and
// host mounts; a host, a key file and a known_hosts file on this
// machine), and a config given (withConfig) must be a valid Docker config
// whose mount sources the filesystem policy allows, or a valid SSH
// config. Profiles of other executors pass.
func (s *Service) checkDockerProfile(ctx context.Context, p Principal, executorID string, cfg map[string]json.RawMessage, withConfig bool) error {
	ex, err := s.store.GetExecutor(ctx, executorID)
	switch {
	case kanban.ErrorCode(err) == kanban.CodeNotFound:
		return nil // the store's own NOT_FOUND follows
	case err != nil:
		return err
	case ex.Type == kanban.ExecutorTypeSSH:
		if !p.IsOperator() {
			return kanban.Errorf(kanban.CodeForbidden, "SSH executor profiles are configured by the operator only")
		}
		if withConfig {
			_, err := kanban.ParseSSHConfig(cfg)
			return err
		}
		return nil
	case ex.Type != kanban.ExecutorTypeDocker:
		return nil
	}
	if !p.IsOperator() {
		return kanban.Errorf(kanban.CodeForbidden, "Docker executor profiles are configured by the operator only")
	}
	if !withConfig {
		return nil
	}
	dc, err := kanban.ParseDockerConfig(cfg)
	if err != nil {
		return err
	}
	for i, m := range dc.Mounts {
		field := fmt.Sprintf("config.mounts[%d].source", i)
		real, err := s.fs.CheckSource(field, m.Source)
		if err != nil {
			return err
		}
		if why := kanban.DockerSourceProblem(real); why != "" {
			return kanban.FieldError(field, "%s", why)
		}
	}
	return nil
}

// errDelegateScripts refuses a session a prepare or cleanup script: the
// runtime runs them as shell commands on the server, so only the operator
// writes them (a session may not send them at all, not even unchanged).
func errDelegateScripts() error {
	return kanban.Errorf(kanban.CodeForbidden, "prepare and cleanup scripts are written by the operator only; leave prepare_script and cleanup_script out")
}

// withExecutorFields adds the settings shared by create and update.
func withExecutorFields(p schema.P) schema.P {
	p["config"] = openConfig("Executor settings by name, any JSON values (64 KiB in all); replaces the stored ones. "+
		"A Docker executor's (operator only) are checked whole: image (required, local), network (host or none), "+
		"workdir (worktree or task), cpus, memory_mb, mounts ([{source, target, read_only}], sources in the source roots), "+
		"env (plain values, shown to sessions: no secrets) and pass_env (names of the backend's allowed variables). "+
		"An SSH executor's (operator only) are checked whole: host, port (default 22), user, key_file and known_hosts_file "+
		"(absolute paths on the backend's machine: never a key itself), trust_on_first_use (default false), work_root "+
		"(an absolute directory on the host) and workdir (worktree or task).").
		Props(0, kanban.MaxExecutorConfigKeys)
	p["prepare_script"] = schema.Str("Shell script run before the agent; empty for none. Operator only.").Len(0, kanban.MaxScriptLen)
	p["cleanup_script"] = schema.Str("Shell script run after the session; empty for none. Operator only.").Len(0, kanban.MaxScriptLen)
	return p
}

// anyJSON is the explicit type list of an open record's values: every
// JSON type, declared rather than implied.
var anyJSON = []string{"string", "number", "integer", "boolean", "object", "array", "null"}

// openConfig is an open settings record: names matching
// kanban.SettingKeyPattern, any JSON values.
func openConfig(desc string) schema.S {
	return schema.Record(desc, kanban.SettingKeyPattern, schema.S{"description": "A setting's value (any JSON).", "type": anyJSON})
}
