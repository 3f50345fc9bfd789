package kanban

import (
	"encoding/json"
	"time"
)

// Agent is an agent type (claude-code, codex, ...).
type Agent struct {
	ID            string    `json:"id"`
	Name          string    `json:"name"`
	DisplayName   string    `json:"display_name"`
	SupportsMCP   bool      `json:"supports_mcp"`
	MCPConfigPath string    `json:"mcp_config_path,omitempty"`
	CreatedAt     time.Time `json:"created_at"`
	UpdatedAt     time.Time `json:"updated_at"`
}

// AgentProfile is a named configuration of an agent.
type AgentProfile struct {
	ID           string `json:"id"`
	AgentID      string `json:"agent_id"`
	Name         string `json:"name"`
	Model        string `json:"model"`
	AutoApprove  bool   `json:"auto_approve"`
	UserQuestion bool   `json:"user_question"`
	IsDefault    bool   `json:"is_default"`
	// WorkspaceID scopes the profile to one workspace ("": global); see
	// ProfileVisible.
	WorkspaceID string    `json:"workspace_id,omitempty"`
	CreatedAt   time.Time `json:"created_at"`
	UpdatedAt   time.Time `json:"updated_at"`
}

// ProfileFilter narrows a listing of agent or executor profiles.
type ProfileFilter struct {
	// ParentID: only this agent's (or executor's) profiles.
	ParentID string
	// Workspace: only the profiles usable there, the global ones and its
	// own ("": every profile).
	Workspace string
}

// MCPServerConfig is one MCP server an agent profile's agent connects to.
// A proxied server (Proxy) is not handed to the agent: the session's own
// MCP server connects to it and serves its tools through the validating
// wrapper, each call bounded by TimeoutSeconds (0: DefaultUpstreamTimeout),
// its tools advertised within MaxToolBytes each and MaxServerBytes in all
// (0: the defaults; see ToolBytes and ServerBytes).
type MCPServerConfig struct {
	Type           string            `json:"type"` // stdio|http
	Command        string            `json:"command,omitempty"`
	Args           []string          `json:"args,omitempty"`
	Env            map[string]string `json:"env,omitempty"`
	URL            string            `json:"url,omitempty"`
	Headers        map[string]string `json:"headers,omitempty"`
	Proxy          bool              `json:"proxy,omitempty"`
	TimeoutSeconds int               `json:"timeout_seconds,omitempty"`
	MaxToolBytes   int               `json:"max_tool_bytes,omitempty"`
	MaxServerBytes int               `json:"max_server_bytes,omitempty"`
}

// Bounds of a proxied server's call timeout.
const (
	DefaultUpstreamTimeout = 60  // seconds
	MaxUpstreamTimeout     = 600 // seconds
)

// Byte budgets of a proxied server's tools as advertised to the agent:
// each tool's tools/list entry (its JSON), and the entries of all the
// tools served from one server. A tool over either is not served.
const (
	DefaultUpstreamToolBytes   = 8_000
	DefaultUpstreamServerBytes = 64_000
	MaxUpstreamToolBytes       = 1 << 20 // the highest max_tool_bytes
	MaxUpstreamServerBytes     = 8 << 20 // the highest max_server_bytes
)

// MCP server types: launched as a command, or reached at a URL.
const (
	MCPServerStdio = "stdio"
	MCPServerHTTP  = "http"
)

// MCPServerTypes lists the MCP server types.
var MCPServerTypes = []string{MCPServerStdio, MCPServerHTTP}

// Bounds of an agent profile and of its MCP servers, shared by the tool
// schemas and the store.
const (
	MaxModelLen          = 200      // an agent profile's model
	MaxCommandLen        = 4096     // an MCP server's command, each of its arguments, its URL
	MaxMCPServers        = 32       // MCP servers of one agent profile
	MaxMCPServerNameLen  = 64       // an MCP server's name (as MCPServerNamePattern allows)
	MaxMCPServersBytes   = 64 << 10 // all of a profile's MCP servers, as stored JSON
	MaxMCPServerArgs     = 64       // command-line arguments of one server
	MaxMCPServerMapKeys  = 64       // environment variables, or headers, of one server
	MaxSecretValueLen    = 8192     // one environment variable's or header's value
	MCPServerNamePattern = `^[A-Za-z0-9_.-]{1,64}$`
	EnvNamePattern       = `^[A-Za-z_][A-Za-z0-9_]{0,127}$`
	HeaderNamePattern    = "^[A-Za-z0-9!#$%&'*+.^_`|~-]{1,128}$"
)

// CallTimeout is how long one call of the proxied server may take, in
// seconds.
func (c MCPServerConfig) CallTimeout() int {
	if c.TimeoutSeconds == 0 {
		return DefaultUpstreamTimeout
	}
	return c.TimeoutSeconds
}

// ToolBytes is the most one of the proxied server's tools may take as
// advertised (its tools/list entry), in bytes.
func (c MCPServerConfig) ToolBytes() int {
	if c.MaxToolBytes == 0 {
		return DefaultUpstreamToolBytes
	}
	return c.MaxToolBytes
}

// ServerBytes is the most the proxied server's served tools may take as
// advertised, all together, in bytes.
func (c MCPServerConfig) ServerBytes() int {
	if c.MaxServerBytes == 0 {
		return DefaultUpstreamServerBytes
	}
	return c.MaxServerBytes
}

// MCPConfig is an agent profile's MCP configuration.
type MCPConfig struct {
	AgentProfileID string                     `json:"agent_profile_id"`
	Enabled        bool                       `json:"enabled"`
	Servers        map[string]MCPServerConfig `json:"servers"`
	UpdatedAt      time.Time                  `json:"updated_at"`
}

// Executor is a way of running agents (exec-local, exec-worktree).
type Executor struct {
	ID          string    `json:"id"`
	Name        string    `json:"name"`
	Type        string    `json:"type"`
	Description string    `json:"description"`
	CreatedAt   time.Time `json:"created_at"`
}

// MCPPolicies are the allowed mcp_policy values of executor profiles.
var MCPPolicies = []string{"inherit", "enabled", "disabled", "restricted"}

// Bounds of an executor profile, shared by the tool schemas and the store.
const (
	MaxScriptLen           = 64 << 10 // a prepare or cleanup script, in characters
	MaxExecutorConfigBytes = 64 << 10 // the config, as stored JSON
)

// ExecutorProfile is a named configuration of an executor.
type ExecutorProfile struct {
	ID            string                     `json:"id"`
	ExecutorID    string                     `json:"executor_id"`
	Name          string                     `json:"name"`
	MCPPolicy     string                     `json:"mcp_policy"`
	Config        map[string]json.RawMessage `json:"config"`
	PrepareScript string                     `json:"prepare_script,omitempty"`
	CleanupScript string                     `json:"cleanup_script,omitempty"`
	IsDefault     bool                       `json:"is_default"`
	// WorkspaceID scopes the profile to one workspace ("": global).
	WorkspaceID string    `json:"workspace_id,omitempty"`
	CreatedAt   time.Time `json:"created_at"`
	UpdatedAt   time.Time `json:"updated_at"`
}
