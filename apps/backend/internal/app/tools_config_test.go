package app

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/client"

	"github.com/kandev/kandev/apps/backend/internal/action"
	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

func TestConfigWorkflowTools(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	c := e.operatorMCP()
	var created action.WorkflowOut
	callJSON(e, c, "create_workflow_kandev", `{"name":"Release","description":"ship it","steps":[
		{"name":"Todo","color":"#111111"},
		{"name":"Doing","wip_limit":2,"events":{"on_enter":[{"type":"send_prompt","config":{"prompt":"Pick it up"}}]}}]}`, &created)
	wf := created.Workflow.ID
	if n := dbInt(e, `SELECT COUNT(*) FROM workflow_steps WHERE workflow_id = ?`, wf); n != 2 || len(created.Steps) != 2 {
		t.Fatalf("got %d step rows, %d returned, want 2", n, len(created.Steps))
	}
	if got := dbStr(e, `SELECT events FROM workflow_steps WHERE workflow_id = ? AND name = 'Doing'`, wf); got != `{"on_enter":[{"type":"send_prompt","config":{"prompt":"Pick it up"}}]}` {
		t.Fatalf("got stored events %s", got)
	}

	var w kanban.Workflow
	callJSON(e, c, "update_workflow_kandev", fmt.Sprintf(`{"workflow_id":%q,"name":"Release 2"}`, wf), &w)
	if got := dbStr(e, `SELECT name || '|' || description FROM workflows WHERE id = ?`, wf); got != "Release 2|ship it" {
		t.Fatalf("got workflow %q, want the new name and the old description", got)
	}

	var st kanban.WorkflowStep
	callJSON(e, c, "create_workflow_step_kandev", fmt.Sprintf(`{"workflow_id":%q,"name":"Done","allow_manual_move":false}`, wf), &st)
	if got := dbInt(e, `SELECT position FROM workflow_steps WHERE id = ?`, st.ID); got != 2 {
		t.Fatalf("got position %d, want 2", got)
	}
	callJSON(e, c, "update_workflow_step_kandev", fmt.Sprintf(`{"step_id":%q,"wip_limit":3,"events":{"on_exit":[{"type":"archive"}]}}`, st.ID), &st)
	if got := dbStr(e, `SELECT wip_limit || '|' || allow_manual_move || '|' || events FROM workflow_steps WHERE id = ?`, st.ID); got != `3|0|{"on_exit":[{"type":"archive"}]}` {
		t.Fatalf("got step %q", got)
	}

	ids := []string{created.Steps[0].ID, created.Steps[1].ID, st.ID}
	refused(e, c, "reorder_workflow_steps_kandev", fmt.Sprintf(`{"workflow_id":%q,"step_ids":[%q,%q]}`, wf, ids[2], ids[0]),
		"VALIDATION_ERROR: step_ids: must list each of the workflow's 3 steps exactly once")
	var order struct{ Items []kanban.WorkflowStep }
	callJSON(e, c, "reorder_workflow_steps_kandev", fmt.Sprintf(`{"workflow_id":%q,"step_ids":[%q,%q,%q]}`, wf, ids[2], ids[0], ids[1]), &order)
	for i, id := range []string{ids[2], ids[0], ids[1]} {
		if got := dbInt(e, `SELECT position FROM workflow_steps WHERE id = ?`, id); got != i {
			t.Fatalf("step %d: got position %d, want %d", i, got, i)
		}
	}

	checkWorkflowDeletes(e, c, wf, st.ID, ids[1])
}

// checkWorkflowDeletes: a step (doneStep) or workflow holding a task is
// not deleted, an empty step (emptyStep) is, and a cascade deletes the
// workflow with its steps, its task and the task's session.
func checkWorkflowDeletes(e *env, c *client.Client, wf, doneStep, emptyStep string) {
	t := e.t
	t.Helper()
	var task action.TaskCreateOut
	f := false
	e.dispatch(kanban.ActionTaskCreate, action.TaskCreateIn{Title: "On Done", WorkflowID: wf, WorkflowStepID: doneStep, StartAgent: &f}, &task)
	refused(e, c, "delete_workflow_step_kandev", fmt.Sprintf(`{"step_id":%q}`, doneStep),
		"CONFLICT: step has 1 tasks (archived included); move or delete them first")
	var del action.Deleted
	callJSON(e, c, "delete_workflow_step_kandev", fmt.Sprintf(`{"step_id":%q}`, emptyStep), &del)
	if n := dbInt(e, `SELECT COUNT(*) FROM workflow_steps WHERE id = ?`, emptyStep); n != 0 || !del.Deleted {
		t.Fatalf("step still there (%d rows) or not reported deleted", n)
	}

	refused(e, c, "delete_workflow_kandev", fmt.Sprintf(`{"workflow_id":%q}`, wf),
		"CONFLICT: workflow has 1 tasks; move or delete them first, or delete with cascade")
	refused(e, c, "delete_workflow_kandev", fmt.Sprintf(`{"workflow_id":%q,"cascade":false}`, wf),
		"CONFLICT: workflow has 1 tasks; move or delete them first, or delete with cascade")
	var sess action.SessionCreateOut
	e.dispatch(kanban.ActionSessionCreate, action.SessionCreateIn{TaskID: task.Task.ID}, &sess)
	callJSON(e, c, "delete_workflow_kandev", fmt.Sprintf(`{"workflow_id":%q,"cascade":true}`, wf), &del)
	if n := dbInt(e, `SELECT (SELECT COUNT(*) FROM workflows WHERE id = ?) + (SELECT COUNT(*) FROM workflow_steps WHERE workflow_id = ?)
		+ (SELECT COUNT(*) FROM tasks WHERE id = ?) + (SELECT COUNT(*) FROM task_sessions WHERE id = ?)`,
		wf, wf, task.Task.ID, sess.Session.ID); n != 0 {
		t.Fatalf("cascade left %d rows of the workflow, its steps, its task and the task's session", n)
	}
	refused(e, c, "update_workflow_kandev", fmt.Sprintf(`{"workflow_id":%q,"name":"x"}`, wf), "NOT_FOUND: workflow not found")
}

// roundTripWorkflow is a workflow using every step setting.
const roundTripWorkflow = `{"name":"Pipeline","description":"all settings","steps":[
	{"name":"Intake","color":"#ff0000","prompt":"Triage it.","allow_manual_move":false,"auto_advance":true,"wip_limit":5,
	 "auto_archive_after_hours":0,"auto_advance_requires_signal":true,"events":{"on_turn_complete":[{"type":"set_state","config":{"state":"REVIEW"}},{"type":"move_to_step","config":{"step_position":2}}]}},
	{"name":"Build","is_start_step":true,"auto_archive_after_hours":48,
	 "events":{"on_enter":[{"type":"start_agent"},{"type":"send_prompt","config":{"prompt":"Build it."}}],"on_exit":[]}},
	{"name":"Ship","pull_from_step_position":1}]}`

func TestWorkflowExportImportRoundTrip(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	c := e.operatorMCP()
	var created action.WorkflowOut
	callJSON(e, c, "create_workflow_kandev", roundTripWorkflow, &created)

	export := func(id string) string {
		var doc action.WorkflowDocument
		callJSON(e, c, "export_workflow_kandev", fmt.Sprintf(`{"workflow_id":%q}`, id), &doc)
		return text(e.call(c, "export_workflow_kandev", fmt.Sprintf(`{"workflow_id":%q}`, id)))
	}
	doc := export(created.Workflow.ID)
	var parsed action.WorkflowDocument
	if err := json.Unmarshal([]byte(doc), &parsed); err != nil {
		t.Fatal(err)
	}
	if parsed.Type != "kandev_workflow" || parsed.Version != 1 || len(parsed.Workflows) != 1 || len(parsed.Workflows[0].Steps) != 3 ||
		!parsed.Workflows[0].Steps[1].IsStartStep || parsed.Workflows[0].Steps[2].Position != 2 {
		t.Fatalf("got document %s, want type kandev_workflow, version 1, one workflow of 3 steps with Build as start", doc)
	}
	if strings.Contains(doc, created.Workflow.ID) || strings.Contains(doc, `"id"`) {
		t.Fatalf("the document carries ids: %s", doc)
	}

	// The JSON text passes unchanged into another workspace.
	ws, err := e.b.store.CreateWorkspace(context.Background(), "Second", "")
	if err != nil {
		t.Fatal(err)
	}
	before := e.counts()
	var imported action.WorkflowImportOut
	callJSON(e, c, "import_workflow_kandev", mustJSON(t, map[string]any{"workspace_id": ws.ID, "document": doc}), &imported)
	if len(imported.Created) != 1 || len(imported.Workflows) != 1 || len(imported.Workflows[0].Steps) != 3 {
		t.Fatalf("got import %+v, want a new workflow with 3 steps", imported)
	}
	after := e.counts()
	if after["workflows"] != before["workflows"]+1 || after["workflow_steps"] != before["workflow_steps"]+3 {
		t.Fatalf("import wrote %d workflows and %d steps, want 1 and 3",
			after["workflows"]-before["workflows"], after["workflow_steps"]-before["workflow_steps"])
	}
	if again := export(imported.Workflows[0].Workflow.ID); again != doc {
		t.Fatalf("export after import differs:\n got %s\nwant %s", again, doc)
	}
	// Into the first workspace again: skipped by name.
	var skipped action.WorkflowImportOut
	callJSON(e, c, "import_workflow_kandev", mustJSON(t, map[string]any{"document": doc}), &skipped)
	if len(skipped.Created) != 0 || len(skipped.Skipped) != 1 || skipped.Skipped[0] != "Pipeline" {
		t.Fatalf("got %+v, want Pipeline skipped", skipped)
	}
}

func TestWorkflowImportHostileDocuments(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	c := e.operatorMCP()
	step := func(name string, pos int, extra string) string {
		return fmt.Sprintf(`{"name":%q,"position":%d,"color":"","events":{}%s}`, name, pos, extra)
	}
	docOf := func(steps ...string) string {
		return mustJSON(t, map[string]any{"document": `{"version":1,"type":"kandev_workflow","workflows":[{"name":"W","steps":[` +
			strings.Join(steps, ",") + `]}]}`})
	}
	refused(e, c, "import_workflow_kandev", mustJSON(t, map[string]any{"document": strings.Repeat(" ", 1<<20) + "{}"}),
		"invalid arguments for import_workflow_kandev: /document: longer than 1048576 characters (maxLength)")
	refused(e, c, "import_workflow_kandev", docOf(step("Same", 0, ""), step("Other", 1, ""), step("Same", 2, "")),
		"VALIDATION_ERROR: document.workflows[0].steps: step names must be unique within a workflow")
	refused(e, c, "import_workflow_kandev", docOf(step("A", 0, `,"is_start_step":true`), step("B", 1, `,"is_start_step":true`)),
		"VALIDATION_ERROR: document.workflows[0].steps: at most one step may be the start step")
	refused(e, c, "import_workflow_kandev", docOf(`{"name":"A","position":0,"color":"","events":{"on_enter":[{"type":"notify"}]}}`),
		"VALIDATION_ERROR: document.workflows[0].steps[0].events.on_enter[0].type: must be one of: "+strings.Join(kanban.AutomationTypeNames(), ", "))
	refused(e, c, "import_workflow_kandev", mustJSON(t, map[string]any{"document": "a: &a [1,2]\nb: [*a, *a]\nversion: 1\ntype: kandev_workflow\nworkflows: []\n"}),
		"VALIDATION_ERROR: document: unknown field; allowed: type, version, workflows")
	refused(e, c, "import_workflow_kandev", mustJSON(t, map[string]any{"workspace_id": "nope", "document": `{"version":1,"type":"kandev_workflow","workflows":[{"name":"W","steps":[{"name":"A","position":0,"color":"","events":{}}]}]}`}),
		"NOT_FOUND: workspace not found")
}

func TestConfigAgentTools(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	c := e.operatorMCP()
	codex := dbStr(e, `SELECT id FROM agents WHERE name = 'codex'`)
	var ag kanban.Agent
	callJSON(e, c, "update_agent_kandev", fmt.Sprintf(`{"agent_id":%q,"supports_mcp":false,"mcp_config_path":"~/.codex/config.toml"}`, codex), &ag)
	if got := dbStr(e, `SELECT supports_mcp || '|' || mcp_config_path FROM agents WHERE id = ?`, codex); got != "0|~/.codex/config.toml" {
		t.Fatalf("got agent row %q", got)
	}
	refused(e, c, "update_agent_kandev", `{"agent_id":"missing","supports_mcp":true}`, "NOT_FOUND: agent not found")

	var prof kanban.AgentProfile
	callJSON(e, c, "create_agent_profile_kandev", fmt.Sprintf(`{"agent_id":%q,"name":"fast","model":"o4-mini"}`, codex), &prof)
	if got := dbStr(e, `SELECT name || '|' || model || '|' || auto_approve || '|' || user_question || '|' || is_default FROM agent_profiles WHERE id = ?`, prof.ID); got != "fast|o4-mini|0|1|0" {
		t.Fatalf("got profile row %q, want user_question on by default and not the default profile", got)
	}
	refused(e, c, "create_agent_profile_kandev", fmt.Sprintf(`{"agent_id":%q,"name":"fast"}`, codex), "CONFLICT: the agent already has a profile with this name")

	var page struct {
		Items      []kanban.AgentProfile `json:"items"`
		NextCursor string                `json:"next_cursor"`
	}
	callJSON(e, c, "list_agent_profiles_kandev", fmt.Sprintf(`{"agent_id":%q,"limit":1}`, codex), &page)
	if len(page.Items) != 1 || page.NextCursor == "" {
		t.Fatalf("got %d profiles, cursor %q, want 1 and a next cursor", len(page.Items), page.NextCursor)
	}
	cursor := page.NextCursor
	page.Items, page.NextCursor = nil, ""
	callJSON(e, c, "list_agent_profiles_kandev", fmt.Sprintf(`{"agent_id":%q,"limit":1,"cursor":%q}`, codex, cursor), &page)
	if len(page.Items) != 1 || page.Items[0].ID != prof.ID || page.NextCursor != "" {
		t.Fatalf("got second page %+v, want the new profile and no cursor", page)
	}

	callJSON(e, c, "update_agent_profile_kandev", fmt.Sprintf(`{"profile_id":%q,"auto_approve":true,"user_question":false}`, prof.ID), &prof)
	if got := dbStr(e, `SELECT model || '|' || auto_approve || '|' || user_question FROM agent_profiles WHERE id = ?`, prof.ID); got != "o4-mini|1|0" {
		t.Fatalf("got profile row %q", got)
	}

	// A running session uses the profile: deleting it is refused.
	task := e.newTask("Uses fast")
	var sess action.SessionCreateOut
	e.dispatch(kanban.ActionSessionCreate, action.SessionCreateIn{TaskID: task.ID, AgentProfileID: prof.ID}, &sess)
	if _, err := e.b.store.DB().Exec(`UPDATE task_sessions SET state = 'RUNNING' WHERE id = ?`, sess.Session.ID); err != nil {
		t.Fatal(err)
	}
	refused(e, c, "delete_agent_profile_kandev", fmt.Sprintf(`{"profile_id":%q}`, prof.ID),
		"CONFLICT: the agent profile is used by a running session")
	if _, err := e.b.store.DB().Exec(`UPDATE task_sessions SET state = 'COMPLETED' WHERE id = ?`, sess.Session.ID); err != nil {
		t.Fatal(err)
	}
	var del action.Deleted
	callJSON(e, c, "delete_agent_profile_kandev", fmt.Sprintf(`{"profile_id":%q}`, prof.ID), &del)
	if n := dbInt(e, `SELECT COUNT(*) FROM agent_profiles WHERE id = ?`, prof.ID); n != 0 {
		t.Fatal("the profile is still stored")
	}
}

func TestConfigMCPTools(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	c := e.operatorMCP()
	prof := dbStr(e, `SELECT p.id FROM agent_profiles p JOIN agents a ON a.id = p.agent_id WHERE a.name = 'claude-code'`)
	var cfg kanban.MCPConfig
	callJSON(e, c, "get_mcp_config_kandev", fmt.Sprintf(`{"profile_id":%q}`, prof), &cfg)
	if !cfg.Enabled || len(cfg.Servers) != 0 {
		t.Fatalf("got default config %+v, want enabled with no servers", cfg)
	}

	r := e.call(c, "update_mcp_config_kandev", fmt.Sprintf(`{"profile_id":%q,"servers":{
		"github":{"type":"stdio","command":"gh-mcp","args":["--stdio"],"env":{"GITHUB_TOKEN":"ghp_SECRET1"}},
		"docs":{"type":"http","url":"https://docs.example/mcp","headers":{"Authorization":"Bearer SECRET2"}}}}`, prof))
	e.decode(r, &cfg)
	if strings.Contains(text(r), "SECRET") || cfg.Servers["github"].Env["GITHUB_TOKEN"] != action.SecretMask ||
		cfg.Servers["docs"].Headers["Authorization"] != action.SecretMask {
		t.Fatalf("update returned unmasked secrets: %s", text(r))
	}
	stored := dbStr(e, `SELECT servers FROM agent_profile_mcp_configs WHERE agent_profile_id = ?`, prof)
	if !strings.Contains(stored, "ghp_SECRET1") || !strings.Contains(stored, "Bearer SECRET2") {
		t.Fatalf("secrets not stored: %s", stored)
	}
	r = e.call(c, "get_mcp_config_kandev", fmt.Sprintf(`{"profile_id":%q}`, prof))
	if r.IsError || strings.Contains(text(r), "SECRET") || !strings.Contains(text(r), action.SecretMask) {
		t.Fatalf("get returned %s, want masked secrets", text(r))
	}

	// Write the masked read back with one change: the secrets are kept.
	var read kanban.MCPConfig
	e.decode(r, &read)
	servers, _ := json.Marshal(read.Servers)
	callJSON(e, c, "update_mcp_config_kandev", fmt.Sprintf(`{"profile_id":%q,"enabled":false,"servers":%s}`, prof, servers), &cfg)
	stored = dbStr(e, `SELECT enabled || '|' || servers FROM agent_profile_mcp_configs WHERE agent_profile_id = ?`, prof)
	if !strings.HasPrefix(stored, "0|") || !strings.Contains(stored, "ghp_SECRET1") || !strings.Contains(stored, "Bearer SECRET2") {
		t.Fatalf("got stored %s, want disabled and the secrets kept", stored)
	}
	checkMaskedSecretsStay(e, c, prof, read)

	refused(e, c, "update_mcp_config_kandev", fmt.Sprintf(`{"profile_id":%q,"servers":{"new":{"type":"stdio","command":"x","env":{"KEY":%q}}}}`, prof, action.SecretMask),
		"VALIDATION_ERROR: servers.*.env: a masked value can only keep a stored secret of the same server and key")
	refused(e, c, "update_mcp_config_kandev", fmt.Sprintf(`{"profile_id":%q,"servers":{"x":{"type":"stdio","command":"x","url":"https://a"}}}`, prof),
		"VALIDATION_ERROR: servers.*: a stdio server takes no url or headers")
	refused(e, c, "update_mcp_config_kandev", fmt.Sprintf(`{"profile_id":%q,"servers":{"x":{"type":"http","url":"ftp://a"}}}`, prof),
		"VALIDATION_ERROR: servers.*.url: must be an http or https URL")
	refused(e, c, "get_mcp_config_kandev", `{"profile_id":"missing"}`, "NOT_FOUND: agent profile not found")

	callJSON(e, c, "update_mcp_config_kandev", fmt.Sprintf(`{"profile_id":%q,"servers":{}}`, prof), &cfg)
	if got := dbStr(e, `SELECT servers FROM agent_profile_mcp_configs WHERE agent_profile_id = ?`, prof); got != "{}" {
		t.Fatalf("got servers %s after clearing, want {}", got)
	}
}

// checkMaskedSecretsStay: a kept (masked) secret of read, the profile's
// masked config, is never redirected to a new destination.
func checkMaskedSecretsStay(e *env, c *client.Client, prof string, read kanban.MCPConfig) {
	e.t.Helper()
	for _, change := range []func(*kanban.MCPServerConfig){
		func(s *kanban.MCPServerConfig) { s.Args = []string{"--stdio", "--upload-to", "elsewhere"} },
		func(s *kanban.MCPServerConfig) { s.Command = "/tmp/evil" },
	} {
		gh := read.Servers["github"]
		change(&gh)
		moved := map[string]kanban.MCPServerConfig{"github": gh, "docs": read.Servers["docs"]}
		b, _ := json.Marshal(moved)
		refused(e, c, "update_mcp_config_kandev", fmt.Sprintf(`{"profile_id":%q,"servers":%s}`, prof, b),
			"VALIDATION_ERROR: servers: a masked secret can only be kept while the server's type, command, args and url stay the same; send the secret again to change them")
	}
	docs := read.Servers["docs"]
	docs.URL = "https://attacker.example/collect"
	b, _ := json.Marshal(map[string]kanban.MCPServerConfig{"github": read.Servers["github"], "docs": docs})
	refused(e, c, "update_mcp_config_kandev", fmt.Sprintf(`{"profile_id":%q,"servers":%s}`, prof, b),
		"VALIDATION_ERROR: servers: a masked secret can only be kept while the server's type, command, args and url stay the same; send the secret again to change them")
}

func TestConfigExecutorTools(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	c := e.operatorMCP()
	var execs struct {
		Items []kanban.Executor `json:"items"`
	}
	callJSON(e, c, "list_executors_kandev", "", &execs)
	if len(execs.Items) != 4 || execs.Items[0].Name != "exec-docker" || execs.Items[1].Name != "exec-local" {
		t.Fatalf("got executors %+v, want the four seeded ones", execs.Items)
	}
	local := execs.Items[1].ID
	var p kanban.ExecutorProfile
	callJSON(e, c, "create_executor_profile_kandev", fmt.Sprintf(`{"executor_id":%q,"name":"sandboxed",
		"config":{"image":"node:22","limits":{"cpu":2,"mem":"4g"},"ports":[3000],"debug":false},"prepare_script":"npm ci"}`, local), &p)
	if got := dbStr(e, `SELECT mcp_policy || '|' || config || '|' || prepare_script FROM executor_profiles WHERE id = ?`, p.ID); got != `inherit|{"debug":false,"image":"node:22","limits":{"cpu":2,"mem":"4g"},"ports":[3000]}|npm ci` {
		t.Fatalf("got profile row %q", got)
	}
	callJSON(e, c, "update_executor_profile_kandev", fmt.Sprintf(`{"profile_id":%q,"mcp_policy":"restricted","config":{"image":"node:24"},"cleanup_script":"rm -rf tmp"}`, p.ID), &p)
	if got := dbStr(e, `SELECT name || '|' || mcp_policy || '|' || config || '|' || prepare_script || '|' || cleanup_script FROM executor_profiles WHERE id = ?`, p.ID); got != `sandboxed|restricted|{"image":"node:24"}|npm ci|rm -rf tmp` {
		t.Fatalf("got profile row %q", got)
	}
	refused(e, c, "update_executor_profile_kandev", `{"profile_id":"missing","name":"x"}`, "NOT_FOUND: executor profile not found")
	var del action.Deleted
	callJSON(e, c, "delete_executor_profile_kandev", fmt.Sprintf(`{"profile_id":%q}`, p.ID), &del)
	if n := dbInt(e, `SELECT COUNT(*) FROM executor_profiles WHERE id = ?`, p.ID); n != 0 {
		t.Fatal("the profile is still stored")
	}
	last := dbStr(e, `SELECT id FROM executor_profiles WHERE executor_id = ?`, local)
	refused(e, c, "delete_executor_profile_kandev", fmt.Sprintf(`{"profile_id":%q}`, last),
		"CONFLICT: cannot delete the last profile of an executor")
}

func TestRepositoryAndTaskStateTools(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	c := e.operatorMCP()
	var repo kanban.Repository
	e.dispatch(kanban.ActionRepositoryCreate, action.RepositoryCreateIn{Name: "api", LocalPath: t.TempDir(), DefaultBranch: "main"}, &repo)
	var repos struct {
		Items []kanban.Repository `json:"items"`
	}
	callJSON(e, c, "list_repositories_kandev", `{"limit":10}`, &repos)
	if len(repos.Items) != 1 || repos.Items[0].ID != repo.ID || repos.Items[0].DefaultBranch != "main" {
		t.Fatalf("got repositories %+v, want the one created", repos.Items)
	}
	refused(e, c, "list_repositories_kandev", `{"workspace_id":"missing"}`, "NOT_FOUND: workspace not found")

	task := e.newTask("Stateful")
	var got kanban.Task
	callJSON(e, c, "update_task_state_kandev", fmt.Sprintf(`{"task_id":%q,"state":"BLOCKED"}`, task.ID), &got)
	if s := dbStr(e, `SELECT state FROM tasks WHERE id = ?`, task.ID); s != "BLOCKED" || got.State != kanban.TaskBlocked {
		t.Fatalf("got state %s, want BLOCKED", s)
	}
	callJSON(e, c, "update_task_state_kandev", fmt.Sprintf(`{"task_id":%q,"state":"in-progress"}`, task.ID), &got)
	if s := dbStr(e, `SELECT state FROM tasks WHERE id = ?`, task.ID); s != "IN_PROGRESS" || got.State != kanban.TaskInProgress {
		t.Fatalf("state alias in-progress: got state %s, want IN_PROGRESS", s)
	}
	refused(e, c, "update_task_state_kandev", `{"task_id":"self","state":"FINISHED"}`,
		"invalid arguments for update_task_state_kandev: /state: must be one of: TODO, IN_PROGRESS, REVIEW, BLOCKED, WAITING_FOR_INPUT, COMPLETED, FAILED, CANCELLED (enum)")
	refused(e, c, "update_task_state_kandev", `{"task_id":"self","state":"COMPLETED"}`,
		`VALIDATION_ERROR: task_id: "self" is only available to agent sessions`)
}
