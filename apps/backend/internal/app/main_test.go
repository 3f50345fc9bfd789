package app

import (
	"flag"
	"os"
	"testing"

	"github.com/kandev/kandev/apps/backend/internal/mcp/upstream/fixture"
)

// TestMain serves the upstream MCP fixture when a test launches this
// binary as a proxied stdio server, and runs the tests otherwise (then
// closes the browser the board tests share).
func TestMain(m *testing.M) {
	fixture.MainIfAsked()
	flag.Parse()
	code := m.Run()
	closeBrowser()
	os.Exit(code)
}
