package catalog

import (
	"fmt"
	"maps"
	"slices"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// A payload contract is the JSON Schema of an action's payload, checked by
// the same compiled validator before the handler on every transport. An
// action whose payload is exactly one tool's arguments has that tool's
// input schema as its contract; the others — actions a tool adapts (its
// Run builds the payload), actions wider than their tool (the board's
// operator-only filters) and actions no tool targets — are declared here.
// Where a payload field is a tool's property it takes that property's
// schema value (copied from the tool), so a rule is written once.

// payloadBuilder builds contracts from the catalog's tools, recording the
// first reference to an undeclared tool or property.
type payloadBuilder struct {
	c   *Catalog
	err error
}

// props copies the named input properties of tool (all of them when none
// are named).
func (b *payloadBuilder) props(tool string, names ...string) P {
	t := b.c.tools[tool]
	if t == nil {
		b.fail("payload contracts: unknown tool %s", tool)
		return P{}
	}
	src, _ := t.InputSchema()["properties"].(P)
	if len(names) == 0 {
		names = slices.Collect(maps.Keys(src))
	}
	out := P{}
	for _, n := range names {
		s, ok := src[n]
		if !ok {
			b.fail("payload contracts: tool %s has no property %s", tool, n)
			continue
		}
		out[n] = clone(s).(S)
	}
	return out
}

// input copies tool's whole input schema without the named properties.
func (b *payloadBuilder) input(tool string, without ...string) S {
	t := b.c.tools[tool]
	if t == nil {
		b.fail("payload contracts: unknown tool %s", tool)
		return NoParams()
	}
	s := clone(t.InputSchema()).(S)
	props, _ := s["properties"].(P)
	for _, n := range without {
		delete(props, n)
	}
	if req, ok := s["required"].([]string); ok {
		s["required"] = slices.DeleteFunc(req, func(r string) bool { return slices.Contains(without, r) })
		if len(s["required"].([]string)) == 0 {
			delete(s, "required")
		}
	}
	return s
}

func (b *payloadBuilder) fail(format string, args ...any) {
	if b.err == nil {
		b.err = fmt.Errorf(format, args...)
	}
}

// with returns p with more's properties added.
func with(p P, more P) P {
	maps.Copy(p, more)
	return p
}

// idOnly is the payload of the actions that read one entity by id.
func idOnly(what string) S { return Obj("", P{"id": ID(what)}, "id") }

func strs[T ~string](vs []T) []string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = string(v)
	}
	return out
}

// topicPattern is a WebSocket subscription topic: a workspace's or a
// session's events, "<kind>:<id>".
var topicPattern = `^(workspace|session):` + kanban.IDPattern[1:]

// payloadContracts declares the contracts of the actions that do not take
// a forwarding tool's arguments unchanged (see the comment at the top).
func payloadContracts(c *Catalog) (map[kanban.Action]S, error) {
	b := &payloadBuilder{c: c}
	taskRef := func(what string) S { return TaskRef(what + ` ("self": the session's own task).`) }
	kind := Enum("Artifact kind.", kanban.ArtifactKinds...)
	artifact := func(k, tool string) S {
		task := taskRef("The artifact's task")
		if t := c.tools[tool]; t != nil && slices.Contains(t.Properties(), "task_id") {
			task = b.props(tool, "task_id")["task_id"]
		}
		return Obj("", P{"task_id": task, "kind": Const("Artifact kind.", k), "data": b.input(tool, "task_id")},
			"kind", "data")
	}
	topics := Obj("", P{"topics": Arr("Topics to follow or stop following.",
		Str(`"workspace:<id>" or "session:<id>".`).Pattern(topicPattern)).Items(1, kanban.MaxTopics)}, "topics")
	out := map[kanban.Action]S{
		kanban.ActionSubscribe:   topics,
		kanban.ActionUnsubscribe: topics,

		kanban.ActionArtifactCreate: {"type": "object", "oneOf": []any{
			artifact(kanban.ArtifactWalkthrough, "show_walkthrough_kandev"),
			artifact(kanban.ArtifactFindings, "publish_review_findings_kandev"),
			artifact(kanban.ArtifactRichOutput, "show_rich_output_kandev"),
		}},
		kanban.ActionAgentProfileList: Obj("", with(b.props("list_agent_profiles_kandev"), P{
			"workspace_id": ID("Only the profiles usable in this workspace: the global ones and its own (a session always gets its own workspace's)."),
		})),
		kanban.ActionExecutorProfileList: Obj("", with(b.props("list_executor_profiles_kandev"), P{
			"workspace_id": ID("Only the profiles usable in this workspace: the global ones and its own (a session always gets its own workspace's)."),
		})),
		kanban.ActionArtifactLatest: Obj("", with(b.props("get_walkthrough_kandev"), P{"kind": kind}), "kind"),
		kanban.ActionArtifactDelete: Obj("", with(b.props("delete_walkthrough_kandev"), P{"kind": clone(kind).(S)}), "kind"),
		kanban.ActionArtifactList:   Obj("", PageProps(P{"task_id": taskRef("The task"), "kind": clone(kind).(S)})),
		kanban.ActionPlanRevisions:  Obj("", PageProps(P{"task_id": taskRef("The plan's task")})),

		kanban.ActionDiagnosticBundleCreate: Obj("", with(b.props("get_diagnostic_bundle_kandev"), P{
			"task_id": ID("Task whose workspace receives the bundle (required for the operator; a session's own task)."),
		}), "source"),
		kanban.ActionPermissionList: Obj("", with(b.props("list_pending_agent_permissions_kandev"), P{
			"workspace_id": ID("Only requests of this workspace's tasks."),
			"status": Enum("State to list (default pending; all: every state).",
				append(slices.Clone(kanban.PermissionStates), kanban.PermissionAnyState)...),
		})),

		kanban.ActionQuestionAsk: Obj("", with(b.props("ask_user_question_kandev", "questions", "context", "context_paragraphs"), P{
			"wait_seconds": Int("Longest wait for an answer in seconds; 0: the server's maximum.").Range(0, kanban.MaxQuestionWait),
		}), "questions"),
		kanban.ActionQuestionGet: idOnly("The question bundle."),
		kanban.ActionQuestionList: Obj("", with(b.props("list_pending_questions_kandev"), P{
			"task_id": ID("Only questions of this task."),
			"kind":    Enum("Who is asked (default user).", kanban.QuestionKinds...),
			"state":   Enum("Only questions in this state.", kanban.QuestionStates...),
		})),

		kanban.ActionRepositoryCreate: Obj("", P{
			"workspace_id":   ID("The repository's workspace; default the session's, else the first."),
			"name":           Str("Name; default the locator's last segment.").Len(1, kanban.MaxNameLen),
			"local_path":     Str("Local checkout path.").Len(1, kanban.MaxPathLen),
			"remote_url":     Str("Remote URL.").Len(1, kanban.MaxURLLen),
			"default_branch": Str("Branch tasks start from; default main.").Len(1, kanban.MaxBranchLen),
		}),
		kanban.ActionRepositoryUpdate: Obj("", P{
			"id":             ID("The repository."),
			"default_branch": Str("Branch tasks start from.").Len(1, kanban.MaxBranchLen),
		}, "id", "default_branch"),

		kanban.ActionSessionAttach:  NoParams(),
		kanban.ActionSessionProfile: NoParams(),
		kanban.ActionUpstreamConfig: NoParams(),
		kanban.ActionSessionCreate: Obj("", P{
			"task_id":             ID("The session's task."),
			"agent_profile_id":    ID("Agent profile; default the default."),
			"executor_profile_id": ID("Executor profile; default the default."),
			"mode":                Enum("MCP mode; default task.", strs(kanban.SessionModes)...),
			"capabilities": Arr("Extra tool groups the session sees.", Enum("A capability.", kanban.Capabilities...)).
				Items(0, len(kanban.Capabilities)).Unique(),
		}, "task_id"),
		kanban.ActionSessionGet:   idOnly("The session."),
		kanban.ActionSessionToken: idOnly("The session."),
		kanban.ActionSessionList: Obj("", with(b.props("list_task_sessions_kandev"), P{
			"workspace_id": ID("Every session of this workspace (instead of task_id)."),
		})),
		kanban.ActionSessionSetMode: Obj("", P{
			"id":   ID("The session."),
			"mode": Enum("The new MCP mode.", strs(kanban.SessionModes)...),
		}, "id", "mode"),
		kanban.ActionSessionStop: Obj("", P{
			"id":     ID("The session."),
			"reason": b.props("stop_task_kandev", "reason")["reason"],
		}, "id"),

		kanban.ActionTaskGet: Obj("", P{"id": taskRef("The task")}, "id"),
		kanban.ActionTaskList: Obj("", with(b.props("list_tasks_kandev"), P{
			"workspace_id": ID("The workspace; default the session's, else the first."),
			"parent_id":    ID("Only subtasks of this task."),
		})),
		kanban.ActionTaskDependencyList: Obj("", PageProps(P{
			"task_id":   taskRef("The task"),
			"direction": Enum("blockers (default): tasks it waits for; blocked: tasks waiting for it.", kanban.DependencyDirections...),
		}), "task_id"),

		kanban.ActionUpstreamList: Obj("", PageProps(P{"session_id": ID("The session.")}), "session_id"),
		kanban.ActionUpstreamRefused: Obj("", PageProps(P{
			"session_id": ID("The session."),
			"server":     Str("Only this server's refused tools.").Len(1, kanban.MaxMCPServerNameLen),
		}), "session_id"),
		kanban.ActionUpstreamReport: upstreamReport(),

		kanban.ActionWorkflowGet:     idOnly("The workflow."),
		kanban.ActionWorkflowStepGet: idOnly("The step."),
		kanban.ActionWorkspaceGet:    idOnly("The workspace."),
		kanban.ActionWorkspaceCreate: Obj("", P{
			"name":        Str("Name.").Len(1, kanban.MaxNameLen),
			"description": Str("Description.").Len(0, kanban.MaxDescriptionLen),
		}, "name"),
		kanban.ActionWorkspaceUpdate: Obj("", P{
			"id":          ID("The workspace."),
			"name":        Str("New name.").Len(1, kanban.MaxNameLen),
			"description": Str("New description.").Len(0, kanban.MaxDescriptionLen),
		}, "id"),
	}
	return out, b.err
}

// upstreamReport is the payload a session's MCP server sends after
// (re)building its proxied tools: per server, what it serves and refused.
// The contract is its shape; the values' rules (distinct printable names,
// byte bounds, counts covering the list) are kanban.ValidateUpstreams'.
func upstreamReport() S {
	refused := Obj("A refused tool.", P{
		"tool": Str("Its name."), "limit": Str("The limit it broke."), "reason": Str("Why, in words."),
	}, "tool", "limit", "reason")
	server := Obj("One server.", P{
		"name": Str("Server name."), "type": Str("Transport."), "state": Str("Where it stands."),
		"detail":        Str("What went wrong, if anything."),
		"tools_served":  Int("Tools served."),
		"tools_refused": Int("Tools refused."),
		"refused":       Arr("The refused tools (a bounded sample).", refused),
	}, "name", "type", "state", "tools_served", "tools_refused")
	return Obj("", P{"servers": Arr("Every proxied server.", server)}, "servers")
}

// clone deep-copies a schema value.
func clone(v any) any {
	switch x := v.(type) {
	case S:
		out := S{}
		for k, e := range x {
			out[k] = clone(e)
		}
		return out
	case P:
		out := P{}
		for k, e := range x {
			out[k] = clone(e).(S)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = clone(e)
		}
		return out
	case []string:
		return slices.Clone(x)
	}
	return v
}
