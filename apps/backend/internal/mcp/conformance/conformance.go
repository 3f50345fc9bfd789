// Package conformance owns the fixture MCP server that the official
// conformance suite (@modelcontextprotocol/conformance) tests: the test_*
// tools and json_schema_2020_12_tool that its scenarios call, served over
// the same transport stack as the product's /mcp (the strict JSON gate in
// front of mcp-go's Streamable HTTP with an event store, logging and tool
// capabilities).
//
// The fixture tools are not Kandev tools: they are never part of a product
// mode or the catalog, and the server is mounted only by
// `kandev serve --conformance` on a loopback listener (see internal/app).
//
// It imports mcp-go, internal/mcp/gate and internal/argcheck only; it
// must not import the catalog, the MCP server package or any domain
// package.
package conformance

import (
	"context"
	"net/http"

	"github.com/mark3labs/mcp-go/mcp"
	mcpserver "github.com/mark3labs/mcp-go/server"

	"github.com/kandev/kandev/apps/backend/internal/mcp/gate"
)

// Name is the server name reported in initialize.
const Name = "kandev-conformance"

// Server is the fixture server with its Streamable HTTP transport.
type Server struct {
	mcp    *mcpserver.MCPServer
	stream *mcpserver.StreamableHTTPServer
	http   http.Handler
}

// New builds the fixture server and its Streamable HTTP transport at path
// (for example /conformance/mcp). version is reported in initialize. It
// fails only if a fixture's input schema does not compile.
func New(path, version string) (*Server, error) {
	s := &Server{mcp: mcpserver.NewMCPServer(Name, version,
		mcpserver.WithToolCapabilities(true),
		mcpserver.WithLogging(),
		mcpserver.WithRecovery(),
		mcpserver.WithInstructions("Fixture tools for the MCP conformance suite; not part of Kandev's tool catalog."),
	)}
	tools, err := fixtures(s.mcp)
	if err != nil {
		return nil, err
	}
	s.mcp.SetTools(tools...)
	s.stream = mcpserver.NewStreamableHTTPServer(s.mcp,
		mcpserver.WithEndpointPath(path),
		mcpserver.WithEventStore(mcpserver.NewInMemoryEventStore()),
		// No standalone GET stream (the spec lets a server answer 405): this
		// server never sends unsolicited messages, and mcp-go (v1.2.x) lets a
		// session's GET stream take notifications that belong to an
		// in-flight request, so a tool's last progress or log notification
		// could reach the client after the result, where clients drop it.
		// Without the GET stream they travel on the request's own stream.
		mcpserver.WithDisableStreaming(true),
	)
	s.http = gate.HTTP(s.stream)
	return s, nil
}

// Handler serves Streamable HTTP (POST, GET and DELETE on the path given
// to New) behind the gate. It does no authentication: mount it only where
// that is acceptable (an explicit flag on a loopback listener).
func (s *Server) Handler() http.Handler { return s.http }

// MCP returns the underlying mcp-go server (for tests).
func (s *Server) MCP() *mcpserver.MCPServer { return s.mcp }

// Shutdown closes open streams.
func (s *Server) Shutdown(ctx context.Context) error { return s.stream.Shutdown(ctx) }

// hints returns annotations with every hint chosen explicitly (mcp-go's
// defaults would call every tool destructive and open-world).
func hints(title string, readOnly bool) mcp.ToolAnnotation {
	return mcp.ToolAnnotation{
		Title:           title,
		ReadOnlyHint:    mcp.ToBoolPtr(readOnly),
		DestructiveHint: mcp.ToBoolPtr(false),
		IdempotentHint:  mcp.ToBoolPtr(true),
		OpenWorldHint:   mcp.ToBoolPtr(false),
	}
}
