package kanban

import (
	"regexp"
	"slices"
	"time"
	"unicode"
	"unicode/utf8"
)

// Upstream server states, as a session's MCP server reports them.
const (
	UpstreamConnecting  = "connecting"  // first connection in progress
	UpstreamReady       = "ready"       // connected; its tools are served
	UpstreamUnavailable = "unavailable" // down; reconnecting with backoff, calls fail fast
)

// Bounds of an upstream report (what a session may store).
const (
	MaxUpstreamRefused   = 200 // refused tools kept per server (ToolsRefused counts all)
	MaxUpstreamToolText  = 160 // bytes of a refused tool's (escaped) name
	MaxUpstreamReason    = 300 // bytes of a reason or detail
	maxUpstreamToolCount = 100_000
)

var (
	upstreamServerName = regexp.MustCompile(MCPServerNamePattern)
	upstreamLimit      = regexp.MustCompile(`^[a-z_-]{1,32}$`)
)

// UpstreamServer is the state of one proxied MCP server of a session, as
// the session's MCP server last reported it.
type UpstreamServer struct {
	SessionID    string        `json:"session_id"`
	Name         string        `json:"name"`
	Type         string        `json:"type"` // stdio|http
	State        string        `json:"state"`
	Detail       string        `json:"detail,omitempty"`
	ToolsServed  int           `json:"tools_served"`
	ToolsRefused int           `json:"tools_refused"`
	Refused      []RefusedTool `json:"refused,omitempty"` // in reports; listed with upstream.refused
	UpdatedAt    time.Time     `json:"updated_at"`
}

// RefusedTool is an upstream tool that is not served, and why: Limit names
// the rule (a schema limit such as "visits" or "ref_cycle", or "compile",
// "name", "name_collision", "annotations"); Reason is a schema-derived
// sentence. Tool is the upstream name, escaped and clipped.
type RefusedTool struct {
	Server string `json:"server"`
	Tool   string `json:"tool"`
	Limit  string `json:"limit"`
	Reason string `json:"reason"`
	// Position orders a server's refused tools (set when listed).
	Position int64 `json:"position"`
}

// ValidateUpstreams checks a session's report: at most 32 servers with
// distinct valid names, known types and states, bounded printable texts.
func ValidateUpstreams(servers []UpstreamServer) error {
	if len(servers) > MaxMCPServers {
		return FieldError("servers", "at most %d servers", MaxMCPServers)
	}
	seen := map[string]bool{}
	for _, s := range servers {
		if !upstreamServerName.MatchString(s.Name) || seen[s.Name] {
			return FieldError("servers.*.name", "must be distinct server names matching "+MCPServerNamePattern)
		}
		seen[s.Name] = true
		if !slices.Contains(MCPServerTypes, s.Type) {
			return FieldError("servers.*.type", "must be stdio or http")
		}
		switch s.State {
		case UpstreamConnecting, UpstreamReady, UpstreamUnavailable:
		default:
			return FieldError("servers.*.state", "must be one of: connecting, ready, unavailable")
		}
		if !printable(s.Detail, MaxUpstreamReason) {
			return FieldError("servers.*.detail", "must be printable text of at most %d bytes", MaxUpstreamReason)
		}
		if s.ToolsServed < 0 || s.ToolsServed > maxUpstreamToolCount || s.ToolsRefused < len(s.Refused) || s.ToolsRefused > maxUpstreamToolCount {
			return FieldError("servers.*.tools_refused", "counts must be between 0 and %d and cover the refused list", maxUpstreamToolCount)
		}
		if len(s.Refused) > MaxUpstreamRefused {
			return FieldError("servers.*.refused", "at most %d refused tools", MaxUpstreamRefused)
		}
		for _, r := range s.Refused {
			if r.Tool == "" || !printable(r.Tool, MaxUpstreamToolText) || !printable(r.Reason, MaxUpstreamReason) || !upstreamLimit.MatchString(r.Limit) {
				return FieldError("servers.*.refused", "each needs a printable tool (at most %d bytes), a limit matching ^[a-z_-]{1,32}$ and a printable reason (at most %d bytes)",
					MaxUpstreamToolText, MaxUpstreamReason)
			}
		}
	}
	return nil
}

// printable reports whether s is at most max bytes of valid UTF-8 with
// only printable characters.
func printable(s string, max int) bool {
	if len(s) > max || !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		if !unicode.IsPrint(r) {
			return false
		}
	}
	return true
}
