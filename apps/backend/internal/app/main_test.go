package app

import (
	"os"
	"testing"

	"github.com/kandev/kandev/apps/backend/internal/mcp/upstream/fixture"
)

// TestMain runs the upstream MCP fixture when a test launches this binary
// as a proxied stdio server (KANDEV_FIXTURE set), and the tests otherwise.
func TestMain(m *testing.M) {
	if os.Getenv("KANDEV_FIXTURE") != "" {
		fixture.Main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}
