package toolserver

import (
	"context"
	"fmt"
	"slices"

	"github.com/mark3labs/mcp-go/mcp"
	mcpserver "github.com/mark3labs/mcp-go/server"

	"github.com/kandev/kandev/apps/backend/internal/argcheck"
	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// UpstreamTool is a tool of a proxied MCP server, ready to serve: its wire
// declaration (name already prefixed, texts bounded, the upstream input
// schema advertised as is), the validator compiled from that very schema,
// and the call that forwards validated arguments upstream.
type UpstreamTool struct {
	Wire      mcp.Tool
	Validator *argcheck.Validator
	// Call forwards validated arguments and returns the result to serve
	// and the outcome to log. It never returns raw upstream error text in
	// a Go error (there is none to return).
	Call func(ctx context.Context, args map[string]any) (*mcp.CallToolResult, string)
}

// upstreamModes are the modes that serve upstream tools.
var upstreamModes = []kanban.Mode{kanban.ModeTask, kanban.ModeTaskTitlePending, kanban.ModeOffice}

func servesUpstream(m kanban.Mode) bool { return slices.Contains(upstreamModes, m) }

// SetUpstream replaces every upstream tool in one step: the new tools (each
// wrapped with its own validator) and the built-in ones are swapped in
// together, the visible set follows, and clients get one
// notifications/tools/list_changed. A name that is also a built-in tool is
// an error (nothing changes). Mode switches keep the upstream tools as
// they are: nothing is compiled again.
func (s *Server) SetUpstream(tools []UpstreamTool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	wrapped := make([]mcpserver.ServerTool, 0, len(tools))
	seen := map[string]bool{}
	for _, t := range tools {
		if s.compiled.entries[t.Wire.Name] != nil || seen[t.Wire.Name] {
			return fmt.Errorf("set upstream tools: duplicate tool name")
		}
		if err := mcp.ValidateParamHeaderAnnotations(&t.Wire); err != nil {
			return fmt.Errorf("set upstream tools: invalid x-mcp-header annotations") // mcp-go would panic on it
		}
		seen[t.Wire.Name] = true
		e := &entry{name: t.Wire.Name, wire: t.Wire, validator: t.Validator}
		call := t.Call
		run := func(ctx context.Context, _ mcp.CallToolRequest, args map[string]any) (*mcp.CallToolResult, string) {
			return call(ctx, args)
		}
		wrapped = append(wrapped, mcpserver.ServerTool{Tool: t.Wire, Handler: wrap(e, UpstreamLabel, run, s.hooks())})
	}
	active, err := s.activeSet(s.profile, wrapped)
	if err != nil {
		return fmt.Errorf("set upstream tools: %w", err)
	}
	// Narrow the visible set first (a removed tool is refused at once),
	// then register: SetTools sends the one list_changed, after which the
	// new tools are both registered and visible.
	s.activeM.Lock()
	s.active = active
	s.activeM.Unlock()
	s.upstream = wrapped
	s.mcp.SetTools(append(slices.Clone(s.builtin), wrapped...)...)
	return nil
}

// UpstreamNames returns the names of the upstream tools currently held
// (visible or not in the current mode), sorted.
func (s *Server) UpstreamNames() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]string, len(s.upstream))
	for i, t := range s.upstream {
		out[i] = t.Tool.Name
	}
	slices.Sort(out)
	return out
}
