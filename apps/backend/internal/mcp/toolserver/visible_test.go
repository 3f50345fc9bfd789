package toolserver

import (
	"context"
	"slices"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
	"github.com/kandev/kandev/apps/backend/internal/mcp/catalog"
)

// TestVisibleFilter: the tool filter keeps exactly the current set, in
// order, and a call-time check of one visible tool allocates nothing.
func TestVisibleFilter(t *testing.T) {
	s, err := New(Config{Compiled: mustCompile(t), Profile: catalog.DefaultProfile(kanban.ModeTask), Backend: &recorder{}})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	names := func(ts []mcp.Tool) []string {
		out := make([]string, len(ts))
		for i, tl := range ts {
			out[i] = tl.Name
		}
		return out
	}
	in := []mcp.Tool{{Name: "list_tasks_kandev"}, {Name: "not_a_tool"}, {Name: "create_task_kandev"}, {Name: "create_workflow_kandev"}}
	if got, want := names(s.visible(ctx, in)), []string{"list_tasks_kandev", "create_task_kandev"}; !slices.Equal(got, want) {
		t.Errorf("mixed: got %v, want %v", got, want)
	}
	if got := s.visible(ctx, in[1:2]); len(got) != 0 {
		t.Errorf("hidden tool: got %v, want none", names(got))
	}
	one := in[:1]
	if allocs := testing.AllocsPerRun(100, func() { _ = s.visible(ctx, one) }); allocs != 0 {
		t.Errorf("one visible tool: got %v allocations, want 0", allocs)
	}
}
