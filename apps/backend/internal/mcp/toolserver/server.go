package toolserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	mcpserver "github.com/mark3labs/mcp-go/server"
	"go.opentelemetry.io/otel/trace"

	"github.com/kandev/kandev/apps/backend/internal/mcp/catalog"
)

// Config configures a Server.
type Config struct {
	Compiled *Compiled
	Backend  catalog.Backend
	Profile  catalog.Profile
	Logger   *slog.Logger
	// Instructions are sent in the initialize result.
	Instructions string
	// Sessions bound the Streamable HTTP sessions of HTTP endpoints
	// (defaults: DefaultMaxSessions, DefaultSessionIdle).
	Sessions SessionLimits
	// KeepAlive is how often a tool call that waits sends a progress
	// notification (0: catalog.DefaultQuestionKeepAlive).
	KeepAlive time.Duration
	// Observe, when set, is told of every tool call the wrapper answers:
	// the tool's name (UpstreamLabel for every proxied tool), the outcome
	// the wrapper logs and how long the call took (the metrics).
	Observe Observer
	// Tracer makes the spans of every /mcp request and tool call (the
	// request, the argument check): nil makes none.
	Tracer trace.TracerProvider
}

// Observer is Config.Observe.
type Observer func(tool, outcome string, d time.Duration)

// UpstreamLabel is the name Observe gets for a proxied upstream tool:
// upstream servers choose their tools' names, so they are no label.
const UpstreamLabel = "upstream"

// Server is one MCP server whose tool set follows a profile.
type Server struct {
	mcp      *mcpserver.MCPServer
	compiled *Compiled
	log      *slog.Logger
	observe  Observer
	tracer   trace.Tracer
	sessions SessionLimits

	mu      sync.Mutex
	profile catalog.Profile
	// builtin are the catalog's tools, wrapped once; upstream the proxied
	// servers' tools (see SetUpstream). mcp-go holds both.
	builtin  []mcpserver.ServerTool
	upstream []mcpserver.ServerTool
	// active is the current tool set: the names tools/list shows and
	// tools/call accepts (mcp-go's tool filter and preflight read it).
	active  map[string]bool
	activeM sync.RWMutex
}

// New builds a server and installs the profile's tool set.
func New(cfg Config) (*Server, error) {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	s := &Server{compiled: cfg.Compiled, log: cfg.Logger, observe: cfg.Observe, tracer: tracerOf(cfg.Tracer), sessions: cfg.Sessions.withDefaults()}
	// Transports run preflight before mcp-go parses anything (JSON-RPC
	// -32602); this hook covers in-process callers too (mcp-go answers a
	// hook error with -32600), so no path echoes an unknown tool's name.
	hooks := &mcpserver.Hooks{}
	hooks.AddOnRequestInitialization(func(ctx context.Context, _ any, msg any) error {
		raw, ok := msg.(json.RawMessage)
		if !ok || preflighted(ctx) {
			return nil
		}
		if e := s.preflight(raw); e != nil {
			return errors.New(e.Message)
		}
		return nil
	})
	s.mcp = mcpserver.NewMCPServer("kandev", Version,
		mcpserver.WithToolCapabilities(true),
		mcpserver.WithLogging(),
		mcpserver.WithInstructions(cfg.Instructions),
		mcpserver.WithHooks(hooks),
		mcpserver.WithToolFilter(s.visible),
	)
	// Every entry is registered once, wrapped; a profile only selects which
	// are visible. (mcp-go re-checks every declaration on each SetTools,
	// which made a mode switch cost ~10 µs per tool.)
	s.builtin = make([]mcpserver.ServerTool, 0, len(cfg.Compiled.entries))
	for _, e := range cfg.Compiled.entries {
		s.builtin = append(s.builtin, mcpserver.ServerTool{Tool: e.wire, Handler: wrap(e, e.name, forwarder(e, cfg.Backend, cfg.KeepAlive, cfg.Logger), s.hooks())})
	}
	s.mcp.SetTools(s.builtin...)
	if err := s.SetProfile(cfg.Profile); err != nil {
		return nil, err
	}
	return s, nil
}

// MCP returns the underlying mcp-go server (for transports and tests).
func (s *Server) MCP() *mcpserver.MCPServer { return s.mcp }

// Profile returns the current profile.
func (s *Server) Profile() catalog.Profile {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.profile
}

// SetProfile swaps in the profile's tool set in one step: it replaces the
// set of visible names over prebuilt (tool, validator, handler) entries,
// with no compilation, and sends one notifications/tools/list_changed to
// initialized clients. Setting the current profile again changes nothing
// and sends nothing.
func (s *Server) SetProfile(p catalog.Profile) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.active != nil && p.Mode == s.profile.Mode && slices.Equal(p.Capabilities, s.profile.Capabilities) {
		return nil
	}
	active, err := s.activeSet(p, s.upstream)
	if err != nil {
		return fmt.Errorf("set profile: %w", err)
	}
	s.activeM.Lock()
	s.active = active
	s.activeM.Unlock()
	s.profile = p
	s.mcp.SendNotificationToAllClients(mcp.MethodNotificationToolsListChanged, nil)
	return nil
}

// activeSet is the names a profile sees: its catalog tools, plus the
// upstream tools in the modes that serve them.
func (s *Server) activeSet(p catalog.Profile, upstream []mcpserver.ServerTool) (map[string]bool, error) {
	defs, err := s.compiled.cat.Tools(p)
	if err != nil {
		return nil, err
	}
	active := make(map[string]bool, len(defs)+len(upstream))
	for _, d := range defs {
		active[d.Name] = true
	}
	if servesUpstream(p.Mode) {
		for _, t := range upstream {
			active[t.Tool.Name] = true
		}
	}
	return active, nil
}

// visible is the mcp-go tool filter: the current set only, at list time
// and at call time. At call time mcp-go passes the one tool called: when
// every tool given is visible, tools itself is the answer and nothing is
// allocated (mcp-go only reads it).
func (s *Server) visible(_ context.Context, tools []mcp.Tool) []mcp.Tool {
	s.activeM.RLock()
	defer s.activeM.RUnlock()
	i := 0
	for i < len(tools) && s.active[tools[i].Name] {
		i++
	}
	if i == len(tools) {
		return tools
	}
	out := make([]mcp.Tool, i, len(tools))
	copy(out, tools[:i])
	for _, t := range tools[i+1:] {
		if s.active[t.Name] {
			out = append(out, t)
		}
	}
	return out
}

// hasTool reports whether name is in the current tool set.
func (s *Server) hasTool(name string) bool {
	s.activeM.RLock()
	defer s.activeM.RUnlock()
	return s.active[name]
}
