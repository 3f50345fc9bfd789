package app

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/kandev/kandev/apps/backend/internal/action"
	"github.com/kandev/kandev/apps/backend/internal/kanban"
	"github.com/kandev/kandev/apps/backend/internal/ws"
)

// storeRuleCase is a payload that breaks a rule the store no longer checks
// because the action's contract holds it (a bound, an enum, a pattern, a
// required field), or a domain rule the store keeps (a kanban method).
type storeRuleCase struct {
	name    string
	action  kanban.Action
	payload map[string]any
	msgHas  string
}

// TestStoreRulesRefusedOverWebSocket: the rules the store left to the
// contracts (and the domain rules it calls in kanban) still refuse a bad
// payload sent over a real WebSocket, as VALIDATION_ERROR, naming no
// caller value, with nothing changed in the database.
func TestStoreRulesRefusedOverWebSocket(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	task := e.newTask("Target")
	prof, err := e.b.store.DefaultAgentProfile(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	cases := append(append(taskAndWorkflowRuleCases(task), contractRuleCases(task)...), domainRuleCases(task, prof)...)
	refusedOverWebSocket(e, e.wsClient(e.token, nil), cases)
}

// taskAndWorkflowRuleCases are the contracts' bounds and enums of tasks,
// workflows and steps (around task).
func taskAndWorkflowRuleCases(task *kanban.Task) []storeRuleCase {
	wf := task.WorkflowID
	return []storeRuleCase{
		// Task: bounds and enums are the contracts' (store/task.go kept only
		// kanban.TaskCreate.Check and TaskUpdate.Check).
		{"task.create empty title", kanban.ActionTaskCreate, map[string]any{"title": ""}, "/title:"},
		{"task.create long prompt", kanban.ActionTaskCreate, map[string]any{"title": "t", "prompt": strings.Repeat("p", kanban.MaxPromptLen+1)}, "/prompt:"},
		{"task.create bad workspace_mode", kanban.ActionTaskCreate, map[string]any{"title": "t", "workspace_mode": "sk-live-CANARY"}, "/workspace_mode:"},
		{"task.create empty blocker", kanban.ActionTaskCreate, map[string]any{"title": "t", "blocked_by": []string{""}}, "/blocked_by/0:"},
		{"task.update long title", kanban.ActionTaskUpdate, map[string]any{"task_id": task.ID, "title": strings.Repeat("x", kanban.MaxTitleLen+1)}, "/title:"},
		{"task.update empty title", kanban.ActionTaskUpdate, map[string]any{"task_id": task.ID, "title": ""}, "/title:"},
		{"task.update bad state", kanban.ActionTaskUpdate, map[string]any{"task_id": task.ID, "state": "sk-live-CANARY"}, "/state:"},
		{"task.list bad state", kanban.ActionTaskList, map[string]any{"state": "blocked"}, "/state:"},
		// Workflows and steps: bounds are the contracts' (store/step.go and
		// workflow.go keep the single-line name and the automations' check).
		{"workflow.update empty name", kanban.ActionWorkflowUpdate, map[string]any{"workflow_id": wf, "name": ""}, "/name:"},
		{"workflow.create long name", kanban.ActionWorkflowCreate, map[string]any{"name": strings.Repeat("n", kanban.MaxNameLen+1)}, "/name:"},
		{"workflow.step.create no name", kanban.ActionWorkflowStepCreate, map[string]any{"workflow_id": wf}, `missing required "name"`},
		{"workflow.step.create wip over the bound", kanban.ActionWorkflowStepCreate, map[string]any{"workflow_id": wf, "name": "Q", "wip_limit": kanban.MaxWIPLimit + 1}, "/wip_limit:"},
		{"workflow.step.update negative auto-archive", kanban.ActionWorkflowStepUpdate, map[string]any{"step_id": task.WorkflowStepID, "auto_archive_after_hours": -1}, "/auto_archive_after_hours:"},
		{"workflow.create steps over the bound", kanban.ActionWorkflowCreate, map[string]any{"name": "W", "steps": []map[string]any{{"name": "A", "wip_limit": -1}}}, "/steps/0/wip_limit:"},
	}
}

// contractRuleCases are the contracts' enums, patterns and bounds of the
// other actions (around task).
func contractRuleCases(task *kanban.Task) []storeRuleCase {
	return []storeRuleCase{
		// Documents, artifacts, sessions, workspaces, profiles, questions:
		// enums, patterns and bounds are the contracts'.
		{"document.write bad key", kanban.ActionDocumentWrite, map[string]any{"task_id": task.ID, "document_key": "Bad Key!", "content": "x"}, "/document_key:"},
		{"document.write key with a slash", kanban.ActionDocumentWrite, map[string]any{"task_id": task.ID, "document_key": "a/b", "content": "x"}, "/document_key:"},
		{"document.write unknown type", kanban.ActionDocumentWrite, map[string]any{"task_id": task.ID, "document_key": "k", "type": "pdf", "content": "x"}, "/type:"},
		{"document.write long title", kanban.ActionDocumentWrite, map[string]any{"task_id": task.ID, "document_key": "k", "title": strings.Repeat("t", 201), "content": "x"}, "/title:"},
		{"artifact.list unknown kind", kanban.ActionArtifactList, map[string]any{"task_id": task.ID, "kind": "bogus"}, "/kind:"},
		{"artifact.delete unknown kind", kanban.ActionArtifactDelete, map[string]any{"task_id": task.ID, "kind": "all"}, "/kind:"},
		{"session.create external mode", kanban.ActionSessionCreate, map[string]any{"task_id": task.ID, "mode": "external"}, "/mode:"},
		{"session.create unknown capability", kanban.ActionSessionCreate, map[string]any{"task_id": task.ID, "capabilities": []string{"user_question"}}, "/capabilities/0:"},
		{"session.create capability twice", kanban.ActionSessionCreate, map[string]any{"task_id": task.ID, "capabilities": []string{"user-question", "user-question"}}, "/capabilities:"},
		{"session.create no task", kanban.ActionSessionCreate, map[string]any{}, `missing required "task_id"`},
		{"workspace.create empty name", kanban.ActionWorkspaceCreate, map[string]any{"name": ""}, "/name:"},
		{"workspace.update long description", kanban.ActionWorkspaceUpdate, map[string]any{"id": task.WorkspaceID, "description": strings.Repeat("d", kanban.MaxDescriptionLen+1)}, "/description:"},
		{"agent.profile.create long model", kanban.ActionAgentProfileCreate, map[string]any{"agent_id": "a", "name": "x", "model": strings.Repeat("m", kanban.MaxModelLen+1)}, "/model:"},
		{"agent.profile.create no name", kanban.ActionAgentProfileCreate, map[string]any{"agent_id": "a"}, `missing required "name"`},
		{"agent.update long path", kanban.ActionAgentUpdate, map[string]any{"agent_id": "a", "mcp_config_path": strings.Repeat("p", kanban.MaxPathLen+1)}, "/mcp_config_path:"},
		{"executor.profile.create unknown policy", kanban.ActionExecutorProfileCreate, map[string]any{"executor_id": "e", "name": "x", "mcp_policy": "Inherit"}, "/mcp_policy:"},
		{"executor.profile.create long script", kanban.ActionExecutorProfileCreate, map[string]any{"executor_id": "e", "name": "x", "prepare_script": strings.Repeat("s", kanban.MaxScriptLen+1)}, "/prepare_script:"},
		{"executor.profile.update unknown policy", kanban.ActionExecutorProfileUpdate, map[string]any{"profile_id": "p", "mcp_policy": "everything"}, "/mcp_policy:"},
		{"question.list bad state", kanban.ActionQuestionList, map[string]any{"state": "PENDING"}, "/state:"},
		{"mcp_config.update server name with a space", kanban.ActionMCPConfigUpdate, map[string]any{"profile_id": "p",
			"servers": map[string]any{"my server": map[string]any{"type": "stdio", "command": "x"}}}, "/servers:"},
		{"mcp_config.update server name too long", kanban.ActionMCPConfigUpdate, map[string]any{"profile_id": "p",
			"servers": map[string]any{strings.Repeat("n", 65): map[string]any{"type": "stdio", "command": "x"}}}, "/servers:"},
		{"mcp_config.update too many servers", kanban.ActionMCPConfigUpdate, map[string]any{"profile_id": "p", "servers": manyServers()}, "/servers:"},
		{"mcp_config.update long command", kanban.ActionMCPConfigUpdate, map[string]any{"profile_id": "p",
			"servers": map[string]any{"a": map[string]any{"type": "stdio", "command": strings.Repeat("c", kanban.MaxCommandLen+1)}}}, "/servers/*/command:"},
		{"question.list bad kind", kanban.ActionQuestionList, map[string]any{"kind": "operator"}, "/kind:"},
	}
}

// domainRuleCases are the domain rules the store (or, for a workflow's
// steps, the action) calls in kanban (around task and the profile prof).
func domainRuleCases(task *kanban.Task, prof *kanban.AgentProfile) []storeRuleCase {
	wf := task.WorkflowID
	return []storeRuleCase{
		// Domain rules the store (or, for a workflow's steps, the action)
		// calls in kanban.
		{"workflow.update two-line name", kanban.ActionWorkflowUpdate, map[string]any{"workflow_id": wf, "name": "a\nb"}, "name: must be a single line"},
		{"workflow.step.create two-line name", kanban.ActionWorkflowStepCreate, map[string]any{"workflow_id": wf, "name": "a\tb"}, "name: must be a single line"},
		{"workflow.create step names twice", kanban.ActionWorkflowCreate, map[string]any{"name": "W", "steps": []map[string]any{{"name": "A"}, {"name": "A"}}}, "step names must be unique"},
		{"workflow.create two start steps", kanban.ActionWorkflowCreate, map[string]any{"name": "W", "steps": []map[string]any{{"name": "A", "is_start_step": true}, {"name": "B", "is_start_step": true}}}, "at most one step may be the start step"},
		{"task.create two-line title", kanban.ActionTaskCreate, map[string]any{"title": "a\nb", "start_agent": false}, "title: must be a single line"},
		{"task.create inherit_parent alone", kanban.ActionTaskCreate, map[string]any{"title": "t", "start_agent": false, "workspace_mode": "inherit_parent"}, "inherit_parent needs a parent task"},
		{"task.create two locators", kanban.ActionTaskCreate, map[string]any{"title": "t", "start_agent": false, "local_path": "/tmp/r", "repository_url": "https://example.com/r.git"}, "at most one of repository_id, local_path, repository_url"},
		{"task.update two-line title", kanban.ActionTaskUpdate, map[string]any{"task_id": task.ID, "title": "a\nb"}, "title: must be a single line"},
		{"workspace.update two-line name", kanban.ActionWorkspaceUpdate, map[string]any{"id": task.WorkspaceID, "name": "a\nb"}, "name: must be a single line"},
		{"document.write two-line title", kanban.ActionDocumentWrite, map[string]any{"task_id": task.ID, "document_key": "k", "title": "a\nb", "content": "x"}, "title: must be a single line"},
		{"mcp_config.update stdio with a url", kanban.ActionMCPConfigUpdate, map[string]any{"profile_id": prof.ID,
			"servers": map[string]any{"a": map[string]any{"type": "stdio", "command": "x", "url": "http://x"}}}, "a stdio server takes no url or headers"},
		{"mcp_config.update http with a file url", kanban.ActionMCPConfigUpdate, map[string]any{"profile_id": prof.ID,
			"servers": map[string]any{"a": map[string]any{"type": "http", "url": "file:///etc/passwd"}}}, "must be an http or https URL"},
	}
}

// TestQuestionRulesRefusedOverWebSocket: a question bundle's shape —
// counts, ids, lengths — is question.ask's contract (the store keeps only
// kanban.PrepareQuestions: default ids and distinct ids and labels), and
// a session calling question.ask directly over the WebSocket is refused
// as an MCP caller of ask_user_question_kandev is.
func TestQuestionRulesRefusedOverWebSocket(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	var created action.SessionCreateOut
	e.dispatch(kanban.ActionSessionCreate, action.SessionCreateIn{TaskID: e.newTask("asker").ID,
		Capabilities: []string{kanban.CapUserQuestion}}, &created)
	opt := func(label string) map[string]any { return map[string]any{"label": label, "description": "d"} }
	bundle := func(mut func(q map[string]any)) map[string]any {
		q := map[string]any{"prompt": "Which?", "options": []any{opt("A"), opt("B")}}
		mut(q)
		return map[string]any{"questions": []any{q}, "wait_seconds": 1}
	}
	five := []any{}
	for range kanban.MaxQuestionItems + 1 {
		five = append(five, map[string]any{"prompt": "p", "options": []any{opt("A"), opt("B")}})
	}
	ask := kanban.ActionQuestionAsk
	cases := []storeRuleCase{
		{"no questions", ask, map[string]any{"questions": []any{}}, "/questions:"},
		{"too many questions", ask, map[string]any{"questions": five}, "/questions:"},
		{"empty prompt", ask, bundle(func(q map[string]any) { q["prompt"] = "" }), "/questions/0/prompt:"},
		{"long prompt", ask, bundle(func(q map[string]any) { q["prompt"] = strings.Repeat("q", kanban.MaxQuestionTextLen+1) }), "/questions/0/prompt:"},
		{"one option", ask, bundle(func(q map[string]any) { q["options"] = []any{opt("A")} }), "/questions/0/options:"},
		{"empty label", ask, bundle(func(q map[string]any) { q["options"] = []any{opt("A"), opt("")} }), "/questions/0/options/1/label:"},
		{"long description", ask, bundle(func(q map[string]any) {
			q["options"] = []any{opt("A"), map[string]any{"label": "B", "description": strings.Repeat("d", kanban.MaxOptionDescLen+1)}}
		}), "/questions/0/options/1/description:"},
		{"id not an id", ask, bundle(func(q map[string]any) { q["id"] = "a b" }), "/questions/0/id:"},
		{"long title", ask, bundle(func(q map[string]any) { q["title"] = strings.Repeat("t", kanban.MaxQuestionTitleLen+1) }), "/questions/0/title:"},
		{"wait too long", ask, map[string]any{"questions": []any{map[string]any{"prompt": "p", "options": []any{opt("A"), opt("B")}}}, "wait_seconds": kanban.MaxQuestionWait + 1}, "/wait_seconds:"},
		// Domain rules: kanban.PrepareQuestions.
		{"duplicate labels", ask, bundle(func(q map[string]any) { q["options"] = []any{opt("A"), opt("A")} }), "duplicates another option's label"},
		{"duplicate option ids", ask, bundle(func(q map[string]any) {
			q["options"] = []any{map[string]any{"option_id": "x", "label": "A", "description": "d"}, map[string]any{"option_id": "x", "label": "B", "description": "d"}}
		}), "duplicates another option's id"},
	}
	refusedOverWebSocket(e, e.wsClient(created.Token, nil), cases)
}

// refusedOverWebSocket sends each case as c over a real WebSocket and
// checks a VALIDATION_ERROR that contains msgHas, echoes no canary and
// leaves every table as it was.
func refusedOverWebSocket(e *env, c *ws.Client, cases []storeRuleCase) {
	t := e.t
	t.Helper()
	g := e.guardWrites()
	defer g.finish("refused WebSocket requests")
	for _, tc := range cases {
		err := c.Call(context.Background(), tc.action, tc.payload, nil)
		ke, ok := kanban.AsError(err)
		if !ok || ke.Code != kanban.CodeValidation || !strings.Contains(ke.Message, tc.msgHas) {
			t.Errorf("%s: got %v, want VALIDATION_ERROR containing %q", tc.name, err, tc.msgHas)
			continue
		}
		if strings.Contains(ke.Message, "CANARY") {
			t.Errorf("%s: the message echoes a caller value: %q", tc.name, ke.Message)
		}
		g.unchanged(tc.name)
	}
}

// manyServers is one MCP server more than a profile may have.
func manyServers() map[string]any {
	out := map[string]any{}
	for i := range kanban.MaxMCPServers + 1 {
		out[fmt.Sprintf("s%d", i)] = map[string]any{"type": "stdio", "command": "x"}
	}
	return out
}
