package upstream_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
	"github.com/kandev/kandev/apps/backend/internal/mcp/toolserver"
	"github.com/kandev/kandev/apps/backend/internal/mcp/upstream"
)

// TestToolsCallbackRunsOutsideTheLock: the manager hands a tool set to
// Tools without holding its lock (Tools does I/O: the session's MCP
// server notifies its clients), so a Tools that reads the manager's state
// (Servers) runs to its end instead of deadlocking the manager.
func TestToolsCallbackRunsOutsideTheLock(t *testing.T) {
	t.Parallel()
	cfg, _ := stdioServer(t, "normal")
	var mgr atomic.Pointer[upstream.Manager]
	started := make(chan struct{})
	got := make(chan []kanban.UpstreamServer, 1)
	m := upstream.Start(context.Background(), upstream.Config{
		Servers: map[string]kanban.MCPServerConfig{"fx": cfg},
		Tools: func([]toolserver.UpstreamTool) {
			<-started
			select {
			case got <- mgr.Load().Servers():
			default:
			}
		},
	})
	t.Cleanup(m.Close)
	mgr.Store(m)
	close(started)
	select {
	case servers := <-got:
		if len(servers) != 1 || servers[0].Name != "fx" {
			t.Fatalf("Servers from within Tools: got %+v, want the one server fx", servers)
		}
	case <-time.After(time.Minute):
		t.Fatal("Tools never returned: it was called with the manager's lock held")
	}
}
