package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"

	mcpserver "github.com/mark3labs/mcp-go/server"

	"github.com/kandev/kandev/apps/backend/internal/mcp/catalog"
)

// Version is reported in initialize.
var Version = "dev"

// Config configures a Server.
type Config struct {
	Compiled *Compiled
	Backend  catalog.Backend
	Profile  catalog.Profile
	Logger   *slog.Logger
	// Instructions are sent in the initialize result.
	Instructions string
}

// Server is one MCP server whose tool set follows a profile.
type Server struct {
	mcp      *mcpserver.MCPServer
	compiled *Compiled
	log      *slog.Logger
	// tools are the wrapped handlers, built once per entry.
	tools map[string]mcpserver.ServerTool

	mu      sync.Mutex
	profile catalog.Profile
	active  map[string]bool // names in the current tool set, for preflight
	activeM sync.RWMutex
}

// New builds a server and installs the profile's tool set.
func New(cfg Config) (*Server, error) {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	s := &Server{compiled: cfg.Compiled, log: cfg.Logger, tools: map[string]mcpserver.ServerTool{}}
	// Transports run preflight before mcp-go parses anything (JSON-RPC
	// -32602); this hook covers in-process callers too (mcp-go answers a
	// hook error with -32600), so no path echoes an unknown tool's name.
	hooks := &mcpserver.Hooks{}
	hooks.AddOnRequestInitialization(func(_ context.Context, _ any, msg any) error {
		raw, ok := msg.(json.RawMessage)
		if !ok {
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
	)
	for name, e := range cfg.Compiled.entries {
		s.tools[name] = mcpserver.ServerTool{Tool: e.wire, Handler: wrap(e, cfg.Backend, cfg.Logger)}
	}
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

// SetProfile swaps in the profile's tool set in one step: prebuilt
// (tool, validator, handler) entries only, no compilation. mcp-go sends
// one notifications/tools/list_changed to initialized clients. Setting the
// current profile again changes nothing and sends nothing.
func (s *Server) SetProfile(p catalog.Profile) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.active != nil && p.Mode == s.profile.Mode && slices.Equal(p.Capabilities, s.profile.Capabilities) {
		return nil
	}
	defs, err := s.compiled.cat.Tools(p)
	if err != nil {
		return fmt.Errorf("set profile: %w", err)
	}
	set := make([]mcpserver.ServerTool, len(defs))
	active := make(map[string]bool, len(defs))
	for i, d := range defs {
		set[i] = s.tools[d.Name]
		active[d.Name] = true
	}
	s.activeM.Lock()
	s.active = active
	s.activeM.Unlock()
	s.mcp.SetTools(set...)
	s.profile = p
	return nil
}

// hasTool reports whether name is in the current tool set.
func (s *Server) hasTool(name string) bool {
	s.activeM.RLock()
	defer s.activeM.RUnlock()
	return s.active[name]
}
