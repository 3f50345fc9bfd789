package app

import (
	"slices"
	"strings"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
	"github.com/kandev/kandev/apps/backend/internal/mcp/catalog"
)

// modeActions returns, for the action registry, the actions a session
// may call in each profile: exactly those of the profile's MCP tools. The
// catalog is static, so every profile's set is computed once.
func modeActions(c *catalog.Catalog) func(kanban.Mode, []string) map[string]bool {
	sets := map[string]map[string]bool{}
	for _, m := range kanban.SessionModes {
		for _, caps := range [][]string{nil, {kanban.CapUserQuestion}} {
			set, err := c.Actions(catalog.Profile{Mode: m, Capabilities: caps})
			if err != nil {
				continue // every session mode is in the table (catalog tests)
			}
			sets[profileKey(m, caps)] = set
		}
	}
	return func(m kanban.Mode, caps []string) map[string]bool {
		known := slices.DeleteFunc(slices.Clone(caps), func(c string) bool { return c != kanban.CapUserQuestion })
		return sets[profileKey(m, known)] // nil (nothing allowed) for an unknown mode
	}
}

func profileKey(m kanban.Mode, caps []string) string {
	return string(m) + "|" + strings.Join(caps, ",")
}
