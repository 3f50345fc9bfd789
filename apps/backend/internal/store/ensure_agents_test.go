package store

import (
	"context"
	"testing"

	"github.com/kandev/kandev/apps/backend/internal/action"
	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

func TestEnsureAgents(t *testing.T) {
	bothEngines(t, testEnsureAgents)
}

// EnsureAgents adds the missing agent types with a default profile, once:
// a second call, or a name that exists, changes nothing.
func testEnsureAgents(t *testing.T) {
	s := newTestStore(t)
	ctx := context.Background()
	if err := action.Seed(ctx, s); err != nil {
		t.Fatalf("seed: %v", err)
	}
	before, err := s.ListAgents(ctx, kanban.Page{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	types := []kanban.AgentTypeName{{Name: "claude-code", DisplayName: "Renamed"}, {Name: "copilot", DisplayName: "GitHub Copilot"}, {Name: "my-agent", DisplayName: "My Agent"}}
	for range 2 {
		if err := s.EnsureAgents(ctx, types); err != nil {
			t.Fatalf("ensure: %v", err)
		}
	}
	after, err := s.ListAgents(ctx, kanban.Page{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	if len(after.Items) != len(before.Items)+2 {
		t.Fatalf("%d agents after, %d before: want 2 more", len(after.Items), len(before.Items))
	}
	for _, a := range after.Items {
		if a.Name == "claude-code" && a.DisplayName != "Claude Code" {
			t.Fatalf("an existing row changed: %+v", a)
		}
		if a.Name != "my-agent" && a.Name != "copilot" {
			continue
		}
		profs, err := s.ListAgentProfiles(ctx, kanban.ProfileFilter{ParentID: a.ID}, kanban.Page{})
		if err != nil || len(profs.Items) != 1 || !profs.Items[0].IsDefault || profs.Items[0].Name != "default" {
			t.Fatalf("%s profiles: %+v %v", a.Name, profs, err)
		}
	}
	if err := s.EnsureAgents(ctx, []kanban.AgentTypeName{{Name: "x", DisplayName: "two\nlines"}}); kanban.ErrorCode(err) != kanban.CodeValidation {
		t.Fatalf("a two-line display name: %v", err)
	}
}
