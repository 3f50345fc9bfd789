package app

import (
	"context"
	"flag"
	"testing"

	"github.com/kandev/kandev/apps/backend/internal/dockertest"
	"github.com/kandev/kandev/apps/backend/internal/mcp/upstream/fixture"
	"github.com/kandev/kandev/apps/backend/internal/pgtest"
)

// TestMain serves the upstream MCP fixture when a test launches this
// binary as a proxied stdio server, and runs the tests otherwise (then
// closes the browser the board tests share, the GitHub API mock of the
// PR automation tests and the throwaway PostgreSQL
// cluster of the multi-backend tests and the private Docker daemon of the
// Docker executor's tests).
func TestMain(m *testing.M) {
	fixture.MainIfAsked(context.Background())
	flag.Parse()
	pgtest.Main(m, closeBrowser, closePrism, dockertest.Close)
}
