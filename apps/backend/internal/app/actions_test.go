package app

import (
	"testing"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
	"github.com/kandev/kandev/apps/backend/internal/mcp/catalog"
)

// TestEveryToolsActionIsRegistered: each catalog tool's Action, and the
// session plumbing every mode's server uses, is an action the backend's
// registry serves, so no tool can be declared against a missing action.
func TestEveryToolsActionIsRegistered(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	c, err := catalog.New()
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range c.All() {
		if _, ok := e.b.reg.Lookup(tool.Action); !ok {
			t.Errorf("tool %s: action %q got unregistered, want registered", tool.Name, tool.Action)
		}
	}
	for _, m := range kanban.AllModes {
		set, err := c.Actions(catalog.DefaultProfile(m))
		if err != nil {
			t.Fatal(err)
		}
		for a := range set {
			if _, ok := e.b.reg.Lookup(a); !ok {
				t.Errorf("mode %s: action %q got unregistered, want registered", m, a)
			}
		}
	}
}
