package app

import (
	"slices"
	"strings"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
	"github.com/kandev/kandev/apps/backend/internal/mcp/catalog"
)

// modeActions returns, for the action registry, the actions a session
// may call in each profile: exactly those of the profile's MCP tools. The
// catalog is static, so every profile's set (each mode with each subset of
// the known capabilities, given and derived) is computed once.
func modeActions(c *catalog.Catalog) func(kanban.Mode, []string) map[kanban.Action]bool {
	sets := map[string]map[kanban.Action]bool{}
	all := slices.Concat(kanban.Capabilities, kanban.ForgeCapabilities)
	for _, m := range kanban.SessionModes {
		for mask := range 1 << len(all) {
			var caps []string
			for i, cp := range all {
				if mask&(1<<i) != 0 {
					caps = append(caps, cp)
				}
			}
			set, err := c.Actions(catalog.Profile{Mode: m, Capabilities: caps})
			if err != nil {
				continue // every session mode is in the table (catalog tests)
			}
			sets[profileKey(m, caps)] = set
		}
	}
	return func(m kanban.Mode, caps []string) map[kanban.Action]bool {
		var known []string
		for _, cp := range all { // in the order the keys were built
			if slices.Contains(caps, cp) {
				known = append(known, cp)
			}
		}
		return sets[profileKey(m, known)] // nil (nothing allowed) for an unknown mode
	}
}

func profileKey(m kanban.Mode, caps []string) string {
	return string(m) + "|" + strings.Join(caps, ",")
}
