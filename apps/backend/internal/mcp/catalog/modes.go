package catalog

import (
	"fmt"
	"slices"
	"sort"

	"github.com/kandev/kandev/apps/backend/internal/action"
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
// `var groupX = declare(&Group{...})`. Adding a group: declare it in its
// own file and give it a row in the table below.
func declare(g *Group) *Group {
	for _, t := range g.Tools {
		// here, at init, so that New never writes shared state
		if err := t.derive(); err != nil {
			failDecl(fmt.Errorf("group %s: %w", g.Name, err))
		}
	}
	declared = append(declared, g)
	return g
}

// table is the one place that decides visibility: each group, the modes
// that see it, and the capability that gates it (if any). It mirrors the
// design's group table row for row.
var table = []row{
	{groupBoard, []kanban.Mode{task, config, external}, ""},
	{groupCreateTask, []kanban.Mode{task, external}, ""},
	// Task and office mode groups.
	{groupTaskLifecycle, []kanban.Mode{task, config, external}, ""},
	{groupTaskUpdate, []kanban.Mode{task}, ""},
	{groupConversation, []kanban.Mode{task, config, external}, ""},
	{groupCoordination, []kanban.Mode{task}, ""},
	{groupDependencies, []kanban.Mode{task, external}, ""},
	{groupRelated, []kanban.Mode{task, office}, ""},
	{groupUserQuestion, nil, kanban.CapUserQuestion},
	{groupParentQuestion, nil, kanban.CapParentQuestion},
	{groupPlan, []kanban.Mode{task, office}, ""},
	{groupWalkthrough, []kanban.Mode{task}, ""},
	{groupReview, []kanban.Mode{task}, ""},
	{groupRichOutput, []kanban.Mode{task, office}, ""},
	{groupBranchSources, []kanban.Mode{task}, ""},
	// Only where they can work: a task with a repository of that forge.
	{groupPRAutomation, []kanban.Mode{task}, kanban.CapForgeGitHub},
	{groupMRAutomation, []kanban.Mode{task}, kanban.CapForgeGitLab},
	{groupStepCompletion, []kanban.Mode{task}, ""},
	{groupDiagnostics, []kanban.Mode{task}, ""},
	{groupTaskTitle, []kanban.Mode{taskTitlePending}, ""},
	{groupOfficeDocuments, []kanban.Mode{office}, ""},
	{groupOfficeDecisions, []kanban.Mode{office}, ""},
	{groupComments, []kanban.Mode{task, office}, ""},
	// Configuration and external mode groups.
	{groupRepositories, []kanban.Mode{config, external}, ""},
	{groupTaskState, []kanban.Mode{config, external}, ""},
	{groupExternalQuestions, []kanban.Mode{external}, ""},
	{groupExternalPermissions, []kanban.Mode{external}, ""},
	{groupAudit, []kanban.Mode{external}, ""},
	{groupConfigWorkflows, []kanban.Mode{config, external}, ""},
	{groupConfigAgents, []kanban.Mode{config, external}, ""},
	{groupConfigMCP, []kanban.Mode{config, external}, ""},
	{groupConfigExecutors, []kanban.Mode{config, external}, ""},
}

// row is one group's entry in the mode table.
type row struct {
	Group      *Group
	Modes      []kanban.Mode
	Capability string // non-empty: only sessions with this capability see it
}

const (
	task             = kanban.ModeTask
	taskTitlePending = kanban.ModeTaskTitlePending
	config           = kanban.ModeConfig
	external         = kanban.ModeExternal
	office           = kanban.ModeOffice
)

// capabilityModes are the modes in which capabilities take effect (the
// external endpoint has no session to ask, so none).
var capabilityModes = []kanban.Mode{task, taskTitlePending, config, office}

// sees reports whether a profile sees a table row. task-title-pending is
// task mode plus the task-title group. A row with a capability needs it,
// in its modes (every capability mode when it names none).
func sees(p Profile, modes []kanban.Mode, capability string) bool {
	mode := p.Mode
	if capability != "" {
		if !slices.Contains(p.Capabilities, capability) {
			return false
		}
		if modes == nil {
			return slices.Contains(capabilityModes, mode)
		}
	}
	if slices.Contains(modes, mode) {
		return true
	}
	return mode == taskTitlePending && slices.Contains(modes, task)
}

// visible returns the groups a profile sees, in table order.
func visible(p Profile) ([]*Group, error) {
	if !slices.Contains(kanban.AllModes, p.Mode) {
		return nil, fmt.Errorf("unknown mode %q", p.Mode)
	}
	var out []*Group
	for _, r := range table {
		if sees(p, r.Modes, r.Capability) {
			out = append(out, r.Group)
		}
	}
	return out, nil
}

// GroupNames returns the names of the groups a profile sees, in table order.
func GroupNames(p Profile) ([]string, error) {
	groups, err := visible(p)
	if err != nil {
		return nil, err
	}
	out := make([]string, len(groups))
	for i, g := range groups {
		out[i] = g.Name
	}
	return out, nil
}

// Catalog is every declared tool, by name, with its group.
type Catalog struct {
	tools  map[string]*Tool
	groups map[string]*Group
	order  []string // tool names in declaration order
}

// New indexes the declared groups. It fails on a tool declaration error
// (see derive), a duplicate tool name, a name without the suffix, a table
// entry naming an undeclared group, or an action contract naming a tool
// (action.Def.Tool) that does not serve it unchanged.
func New() (*Catalog, error) {
	if declErr != nil {
		return nil, declErr
	}
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
			if t.Action == "" {
				return nil, fmt.Errorf("tool %s: declares no backend action", t.Name)
			}
			c.tools[t.Name] = t
			c.order = append(c.order, t.Name)
		}
	}
	for _, r := range table {
		if c.groups[r.Group.Name] != r.Group {
			return nil, fmt.Errorf("mode table: group %s is not declared", r.Group.Name)
		}
	}
	for name, g := range c.groups {
		if !slices.ContainsFunc(table, func(r row) bool { return r.Group == g }) {
			return nil, fmt.Errorf("group %s is in no mode", name)
		}
	}
	for _, ac := range action.Contracts() {
		if t := c.tools[ac.Tool()]; ac.Tool() != "" && (t == nil || t.Action != ac.Name() || !t.Forwards() || len(t.Drop)+len(t.Require) > 0) {
			return nil, fmt.Errorf("action %s names tool %s, which does not serve it unchanged", ac.Name(), ac.Tool())
		}
	}
	return c, nil
}

// Capability returns the capability that gates a tool's group ("" when
// none does, or for an unknown tool).
func (c *Catalog) Capability(tool string) string {
	for _, r := range table {
		if slices.ContainsFunc(r.Group.Tools, func(t *Tool) bool { return t.Name == tool }) && r.Capability != "" {
			return r.Capability
		}
	}
	return ""
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
	groups, err := visible(p)
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	var out []*Tool
	for _, g := range groups {
		for _, t := range g.Tools {
			if !seen[t.Name] {
				seen[t.Name] = true
				out = append(out, t)
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// sessionPlumbing are the actions a session's MCP server itself uses in
// every mode (attaching, reading its profile, reading its proxied servers
// and reporting what it serves of them).
var sessionPlumbing = []kanban.Action{kanban.ActionSessionAttach, kanban.ActionSessionProfile, kanban.ActionSessionReportCalls, kanban.ActionUpstreamConfig, kanban.ActionUpstreamReport}

// Actions returns the backend actions a profile may use: those of its
// tools plus the session plumbing. The backend authorizes session calls
// against this set, so a session token cannot do over the WebSocket API
// what its mode's tools cannot.
func (c *Catalog) Actions(p Profile) (map[kanban.Action]bool, error) {
	tools, err := c.Tools(p)
	if err != nil {
		return nil, err
	}
	out := map[kanban.Action]bool{}
	for _, a := range sessionPlumbing {
		out[a] = true
	}
	for _, t := range tools {
		out[t.Action] = true
	}
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
