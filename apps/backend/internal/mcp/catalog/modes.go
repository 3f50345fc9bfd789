package catalog

import (
	"fmt"
	"slices"
	"sort"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// Profile selects a tool surface: a mode plus capabilities.
type Profile struct {
	Mode         kanban.Mode
	Capabilities []string
}

// declared holds every group, in declaration order (file init order).
var declared []*Group

// declare registers a group; each group file declares its group with
// `var xGroup = declare(&Group{...})`. Adding a group: declare it in its
// own file and name it in the tables below.
func declare(g *Group) *Group {
	declared = append(declared, g)
	return g
}

// modeGroups is the one table that decides which groups each mode sees.
var modeGroups = map[kanban.Mode][]string{
	kanban.ModeTask:             {"board", "create-task"},
	kanban.ModeTaskTitlePending: {"board", "create-task"},
	kanban.ModeConfig:           {"board"},
	kanban.ModeExternal:         {"board", "create-task"},
	kanban.ModeOffice:           {},
}

// capabilityGroups adds groups for capabilities, in the modes that allow
// capabilities at all (every mode but external).
var capabilityGroups = map[string][]string{}

// capabilityModes are the modes in which capabilities take effect.
var capabilityModes = []kanban.Mode{kanban.ModeTask, kanban.ModeTaskTitlePending, kanban.ModeConfig, kanban.ModeOffice}

// GroupNames returns the groups a profile sees, in table order.
func GroupNames(p Profile) ([]string, error) {
	names, ok := modeGroups[p.Mode]
	if !ok {
		return nil, fmt.Errorf("unknown mode %q", p.Mode)
	}
	out := slices.Clone(names)
	if slices.Contains(capabilityModes, p.Mode) {
		caps := slices.Clone(p.Capabilities)
		sort.Strings(caps)
		for _, c := range caps {
			out = append(out, capabilityGroups[c]...)
		}
	}
	return out, nil
}

// Catalog is every declared tool, by name, with its group.
type Catalog struct {
	tools  map[string]*Tool
	groups map[string]*Group
	order  []string // tool names in declaration order
}

// New indexes the declared groups. It fails on a duplicate tool name, a
// name without the suffix, or a table entry naming an undeclared group.
func New() (*Catalog, error) {
	c := &Catalog{tools: map[string]*Tool{}, groups: map[string]*Group{}}
	for _, g := range declared {
		if _, dup := c.groups[g.Name]; dup {
			return nil, fmt.Errorf("group %s declared twice", g.Name)
		}
		c.groups[g.Name] = g
		for _, t := range g.Tools {
			if _, dup := c.tools[t.Name]; dup {
				return nil, fmt.Errorf("tool %s declared twice", t.Name)
			}
			if len(t.Name) <= len(Suffix) || t.Name[len(t.Name)-len(Suffix):] != Suffix {
				return nil, fmt.Errorf("tool %s: name must end in %s", t.Name, Suffix)
			}
			c.tools[t.Name] = t
			c.order = append(c.order, t.Name)
		}
	}
	for mode, names := range modeGroups {
		for _, n := range names {
			if c.groups[n] == nil {
				return nil, fmt.Errorf("mode %s: unknown group %s", mode, n)
			}
		}
	}
	for capName, names := range capabilityGroups {
		for _, n := range names {
			if c.groups[n] == nil {
				return nil, fmt.Errorf("capability %s: unknown group %s", capName, n)
			}
		}
	}
	return c, nil
}

// All returns every tool in declaration order.
func (c *Catalog) All() []*Tool {
	out := make([]*Tool, len(c.order))
	for i, n := range c.order {
		out[i] = c.tools[n]
	}
	return out
}

// Tools returns the tools a profile sees, sorted by name, without duplicates.
func (c *Catalog) Tools(p Profile) ([]*Tool, error) {
	names, err := GroupNames(p)
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	var out []*Tool
	for _, g := range names {
		for _, t := range c.groups[g].Tools {
			if !seen[t.Name] {
				seen[t.Name] = true
				out = append(out, t)
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// DefaultProfile is the profile a new session in mode gets: sessions have
// the user-question capability by default; the external endpoint has none.
func DefaultProfile(mode kanban.Mode) Profile {
	if mode == kanban.ModeExternal {
		return Profile{Mode: mode}
	}
	return Profile{Mode: mode, Capabilities: []string{kanban.CapUserQuestion}}
}
