package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// preferredAgent is the agent whose default profile DefaultAgentProfile
// returns when it exists.
const preferredAgent = "claude-code"

const (
	agentColumns   = `id, name, display_name, supports_mcp, mcp_config_path, created_at, updated_at`
	profileColumns = `id, agent_id, name, model, auto_approve, user_question, is_default, created_at, updated_at, workspace_id`
)

// ListAgents lists agents by name.
func (s *Store) ListAgents(ctx context.Context, p kanban.Page) (*kanban.List[kanban.Agent], error) {
	p, err := p.Normalize()
	if err != nil {
		return nil, err
	}
	return agentListing.page(ctx, s.stmts, p, "")
}

var agentListing = listing[kanban.Agent]{what: "list agents", selectFrom: `SELECT ` + agentColumns + ` FROM agents`,
	scan: scanAgent, cols: []string{"name"}, key: func(a kanban.Agent) []any { return []any{a.Name} }}

// GetAgent returns an agent (NOT_FOUND when missing).
func (s *Store) GetAgent(ctx context.Context, id string) (*kanban.Agent, error) {
	return getAgent(ctx, s.stmts, id)
}

func getAgent(ctx context.Context, q queryer, id string) (*kanban.Agent, error) {
	a, err := scanAgent(q.QueryRowContext(ctx, `SELECT `+agentColumns+` FROM agents WHERE id = ?`, id))
	if err != nil {
		return nil, notFound(err, "agent")
	}
	return a, nil
}

// UpdateAgent sets the given fields of an agent (NOT_FOUND when missing).
func (s *Store) UpdateAgent(ctx context.Context, id string, supportsMCP *bool, mcpConfigPath *string) (*kanban.Agent, error) {
	var out *kanban.Agent
	err := s.tx(ctx, func(tx txn) error {
		cur, err := getAgent(ctx, tx, id)
		if err != nil {
			return err
		}
		setIf(&cur.SupportsMCP, supportsMCP)
		setIf(&cur.MCPConfigPath, mcpConfigPath)
		if _, err := tx.ExecContext(ctx, `UPDATE agents SET supports_mcp = ?, mcp_config_path = ?, updated_at = ?
			WHERE id = ?`, boolInt(cur.SupportsMCP), cur.MCPConfigPath, fmtTime(kanban.Now()), id); err != nil {
			return fmt.Errorf("update agent: %w", err)
		}
		out, err = getAgent(ctx, tx, id)
		return err
	})
	return out, err
}

// ListAgentProfiles lists agent profiles in creation order, only
// f.ParentID's (an agent; NOT_FOUND when missing) and only those usable in
// f.Workspace when they are set.
func (s *Store) ListAgentProfiles(ctx context.Context, f kanban.ProfileFilter, p kanban.Page) (*kanban.List[kanban.AgentProfile], error) {
	return listProfiles(ctx, s.stmts, agentProfiles, agentProfileListing, f, p)
}

var agentProfileListing = listing[kanban.AgentProfile]{what: "list agent profiles",
	selectFrom: `SELECT ` + profileColumns + ` FROM agent_profiles`, scan: scanAgentProfile, cols: []string{"created_at", "id"},
	key: func(x kanban.AgentProfile) []any { return []any{fmtTime(x.CreatedAt), x.ID} }}

// GetAgentProfile returns an agent profile (NOT_FOUND when missing).
func (s *Store) GetAgentProfile(ctx context.Context, id string) (*kanban.AgentProfile, error) {
	return getAgentProfile(ctx, s.stmts, id)
}

func getAgentProfile(ctx context.Context, q queryer, id string) (*kanban.AgentProfile, error) {
	p, err := scanAgentProfile(q.QueryRowContext(ctx, `SELECT `+profileColumns+` FROM agent_profiles WHERE id = ?`, id))
	if err != nil {
		return nil, notFound(err, "agent profile")
	}
	return p, nil
}

// DefaultAgentProfile returns the default profile of claude-code when that
// agent exists, else of the first agent by name (NOT_FOUND when no agent
// has a profile). Defaults are global profiles.
func (s *Store) DefaultAgentProfile(ctx context.Context) (*kanban.AgentProfile, error) {
	return defaultAgentProfile(ctx, s.stmts)
}

func defaultAgentProfile(ctx context.Context, q queryer) (*kanban.AgentProfile, error) {
	p, err := scanAgentProfile(q.QueryRowContext(ctx, `SELECT `+profileColumns+` FROM agent_profiles WHERE id = (
		SELECT p.id FROM agent_profiles p JOIN agents a ON a.id = p.agent_id
		WHERE p.is_default = 1 AND p.workspace_id IS NULL ORDER BY CASE WHEN a.name = ? THEN 0 ELSE 1 END, a.name LIMIT 1)`, preferredAgent))
	if err != nil {
		return nil, notFound(err, "agent profile")
	}
	return p, nil
}

// checkAgentProfile holds the one rule of a profile no contract can: a
// single-line name (agent.profile.create and .update bound it and the model).
func checkAgentProfile(name string) error {
	return kanban.SingleLine("name", name)
}

// CreateAgentProfile adds a profile to an agent, global or of
// p.WorkspaceID. The agent's first global profile becomes its default, as
// does a global one created with IsDefault; a workspace's never does.
// NOT_FOUND for a missing agent or workspace, CONFLICT when the agent has
// a profile of that name (in any scope).
func (s *Store) CreateAgentProfile(ctx context.Context, p kanban.AgentProfile) (*kanban.AgentProfile, error) {
	if err := checkAgentProfile(p.Name); err != nil {
		return nil, err
	}
	var out *kanban.AgentProfile
	err := s.tx(ctx, func(tx txn) error {
		if _, err := getAgent(ctx, tx, p.AgentID); err != nil {
			return err
		}
		if err := requireScope(ctx, tx, p.WorkspaceID); err != nil {
			return err
		}
		isDefault, err := claimProfileName(ctx, tx, agentProfiles, p.AgentID, p.Name, "", p.WorkspaceID != "", p.IsDefault)
		if err != nil {
			return err
		}
		id, now := kanban.NewID(), fmtTime(kanban.Now())
		if _, err := tx.ExecContext(ctx, `INSERT INTO agent_profiles (`+profileColumns+`)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, id, p.AgentID, p.Name, p.Model, boolInt(p.AutoApprove),
			boolInt(p.UserQuestion), boolInt(isDefault), now, now, nullString(p.WorkspaceID)); err != nil {
			return fmt.Errorf("create agent profile: %w", err)
		}
		out, err = getAgentProfile(ctx, tx, id)
		return err
	})
	return out, err
}

// UpdateAgentProfile sets the given fields of a profile (NOT_FOUND when
// missing, CONFLICT when the new name is taken within the agent).
func (s *Store) UpdateAgentProfile(ctx context.Context, id string, u kanban.AgentProfileUpdate) (*kanban.AgentProfile, error) {
	var out *kanban.AgentProfile
	err := s.tx(ctx, func(tx txn) error {
		cur, err := getAgentProfile(ctx, tx, id)
		if err != nil {
			return err
		}
		setIf(&cur.Name, u.Name)
		setIf(&cur.Model, u.Model)
		setIf(&cur.AutoApprove, u.AutoApprove)
		setIf(&cur.UserQuestion, u.UserQuestion)
		if err := checkAgentProfile(cur.Name); err != nil {
			return err
		}
		if _, err := claimProfileName(ctx, tx, agentProfiles, cur.AgentID, cur.Name, id, cur.WorkspaceID != "", false); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE agent_profiles SET name = ?, model = ?, auto_approve = ?,
			user_question = ?, updated_at = ? WHERE id = ?`, cur.Name, cur.Model, boolInt(cur.AutoApprove),
			boolInt(cur.UserQuestion), fmtTime(kanban.Now()), id); err != nil {
			return fmt.Errorf("update agent profile: %w", err)
		}
		out, err = getAgentProfile(ctx, tx, id)
		return err
	})
	return out, err
}

// DeleteAgentProfile deletes a profile and its MCP config. It refuses
// (CONFLICT) while a RUNNING session uses the profile and when it is the
// agent's last global profile; deleting the default promotes the oldest
// remaining global profile. NOT_FOUND when missing.
func (s *Store) DeleteAgentProfile(ctx context.Context, id string) error {
	return s.tx(ctx, func(tx txn) error {
		cur, err := getAgentProfile(ctx, tx, id)
		if err != nil {
			return err
		}
		if err := deleteProfile(ctx, tx, agentProfiles, cur.AgentID, id, cur.WorkspaceID != ""); err != nil {
			return err
		}
		return dropBudgets(ctx, tx, kanban.BudgetAgentProfile, `scope_id = ?`, id)
	})
}

func scanAgent(r rowSource) (*kanban.Agent, error) {
	var (
		a                  kanban.Agent
		supports           int
		createdAt, updated string
	)
	if err := r.Scan(&a.ID, &a.Name, &a.DisplayName, &supports, &a.MCPConfigPath, &createdAt, &updated); err != nil {
		return nil, err
	}
	a.SupportsMCP, a.CreatedAt, a.UpdatedAt = supports != 0, parseTime(createdAt), parseTime(updated)
	return &a, nil
}

func scanAgentProfile(r rowSource) (*kanban.AgentProfile, error) {
	var (
		p                  kanban.AgentProfile
		auto, uq, def      int
		createdAt, updated string
		ws                 sql.NullString
	)
	if err := r.Scan(&p.ID, &p.AgentID, &p.Name, &p.Model, &auto, &uq, &def, &createdAt, &updated, &ws); err != nil {
		return nil, err
	}
	p.AutoApprove, p.UserQuestion, p.IsDefault, p.WorkspaceID = auto != 0, uq != 0, def != 0, ws.String
	p.CreatedAt, p.UpdatedAt = parseTime(createdAt), parseTime(updated)
	return &p, nil
}

// GetMCPConfig returns an agent profile's MCP configuration; a profile that
// never had one gets the default (enabled, no servers). NOT_FOUND for a
// missing profile.
func (s *Store) GetMCPConfig(ctx context.Context, profileID string) (*kanban.MCPConfig, error) {
	return getMCPConfig(ctx, s.stmts, profileID)
}

func getMCPConfig(ctx context.Context, q queryer, profileID string) (*kanban.MCPConfig, error) {
	prof, err := getAgentProfile(ctx, q, profileID)
	if err != nil {
		return nil, err
	}
	c := &kanban.MCPConfig{AgentProfileID: profileID, Enabled: true, UpdatedAt: prof.CreatedAt}
	var (
		enabled          int
		servers, updated string
	)
	err = q.QueryRowContext(ctx, `SELECT enabled, servers, updated_at FROM agent_profile_mcp_configs
		WHERE agent_profile_id = ?`, profileID).Scan(&enabled, &servers, &updated)
	switch {
	case errors.Is(err, sql.ErrNoRows):
	case err != nil:
		return nil, fmt.Errorf("get mcp config: %w", err)
	default:
		c.Enabled, c.UpdatedAt = enabled != 0, parseTime(updated)
		if err := json.Unmarshal([]byte(servers), &c.Servers); err != nil {
			return nil, fmt.Errorf("mcp config servers: %w", err)
		}
	}
	if c.Servers == nil {
		c.Servers = map[string]kanban.MCPServerConfig{}
	}
	return c, nil
}

// UpdateMCPConfig sets the fields of u of a profile's MCP configuration,
// creating it on first write; u.Servers nil keeps the current servers.
// u.Check runs first, in the same transaction. NOT_FOUND for a missing
// profile, VALIDATION_ERROR for invalid servers.
func (s *Store) UpdateMCPConfig(ctx context.Context, profileID string, u kanban.MCPConfigUpdate) (*kanban.MCPConfig, error) {
	if u.Servers != nil && u.Check == nil {
		if err := checkMCPServers(u.Servers); err != nil {
			return nil, err
		}
	}
	var out *kanban.MCPConfig
	err := s.tx(ctx, func(tx txn) error {
		prof, err := getAgentProfile(ctx, tx, profileID)
		if err != nil {
			return err
		}
		cur, err := getMCPConfig(ctx, tx, profileID)
		if err != nil {
			return err
		}
		servers := u.Servers
		if u.Check != nil {
			if servers, err = u.Check(prof, cur, u.Servers); err != nil {
				return err
			}
			if servers != nil {
				if err := checkMCPServers(servers); err != nil {
					return err
				}
			}
		}
		setIf(&cur.Enabled, u.Enabled)
		if servers != nil {
			cur.Servers = servers
		}
		b, err := json.Marshal(cur.Servers)
		if err != nil {
			return fmt.Errorf("update mcp config: %w", err)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO agent_profile_mcp_configs (agent_profile_id, enabled,
			servers, updated_at) VALUES (?, ?, ?, ?) ON CONFLICT (agent_profile_id) DO UPDATE SET
			enabled = excluded.enabled, servers = excluded.servers, updated_at = excluded.updated_at`,
			profileID, boolInt(cur.Enabled), string(b), fmtTime(kanban.Now())); err != nil {
			return fmt.Errorf("update mcp config: %w", err)
		}
		out, err = getMCPConfig(ctx, tx, profileID)
		return err
	})
	return out, err
}

// checkMCPServers checks what mcp_config.update's contract cannot: each
// server's field combinations (kanban.MCPServerConfig.Check) and the
// servers' encoded size. Messages name fields with "*" for the server
// name, which is caller-chosen.
func checkMCPServers(servers map[string]kanban.MCPServerConfig) error {
	for _, name := range slices.Sorted(maps.Keys(servers)) {
		if err := servers[name].Check(); err != nil {
			return err
		}
	}
	b, err := json.Marshal(servers)
	if err != nil || len(b) > kanban.MaxMCPServersBytes {
		return kanban.FieldError("servers", "larger than %d bytes", kanban.MaxMCPServersBytes)
	}
	return nil
}
