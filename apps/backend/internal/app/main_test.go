package app

import (
	"os"
	"testing"

	"github.com/kandev/kandev/apps/backend/internal/mcp/upstream/fixture"
)

// TestMain serves the upstream MCP fixture when a test launches this
// binary as a proxied stdio server, and runs the tests otherwise.
func TestMain(m *testing.M) {
	fixture.MainIfAsked()
	os.Exit(m.Run())
}
