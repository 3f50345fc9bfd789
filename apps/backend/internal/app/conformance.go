package app

import (
	"context"
	"errors"
	"net"
	"net/http"

	"github.com/kandev/kandev/apps/backend/internal/mcp/conformance"
	"github.com/kandev/kandev/apps/backend/internal/mcp/toolserver"
)

// ConformancePath is where `kandev serve --conformance` serves the fixture
// server of the official MCP conformance suite (Streamable HTTP).
const ConformancePath = "/conformance/mcp"

// errConformanceAddr refuses --conformance on a listener other people can
// reach: the fixture endpoint has no authentication (the conformance
// runner cannot send a bearer token).
var errConformanceAddr = errors.New("--conformance needs a loopback --addr (127.0.0.1, [::1] or localhost): the conformance endpoint is unauthenticated")

// enableConformance builds the conformance fixture server when on is true.
// It refuses unless addr (the bound listener) is a loopback address.
func (b *backend) enableConformance(on bool, addr net.Addr) error {
	if !on {
		return nil
	}
	if !isLoopback(addr) {
		return errConformanceAddr
	}
	s, err := conformance.New(ConformancePath, toolserver.Version)
	if err != nil {
		return err
	}
	b.conformance = s
	b.log.Warn("conformance fixture server enabled: unauthenticated test endpoint, never use it in production", "path", ConformancePath)
	return nil
}

// mountConformance adds the fixture endpoint to mux when it is enabled.
// Requests that did not arrive on a loopback connection are refused as
// well, so the endpoint stays local whatever the listener.
func (b *backend) mountConformance(mux *http.ServeMux) {
	if b.conformance == nil {
		return
	}
	h := b.conformance.Handler()
	mux.Handle(ConformancePath, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		local, _ := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
		if !isLoopback(local) {
			http.NotFound(w, r)
			return
		}
		h.ServeHTTP(w, r)
	}))
}

// shutdownConformance closes the fixture server's open streams.
func (b *backend) shutdownConformance(ctx context.Context) {
	if b.conformance != nil {
		_ = b.conformance.Shutdown(ctx) // best effort: the HTTP server is shutting down too
	}
}

// isLoopback reports whether a is a TCP address on a loopback interface.
func isLoopback(a net.Addr) bool {
	tcp, ok := a.(*net.TCPAddr)
	return ok && tcp.IP.IsLoopback()
}
