package app

import (
	"slices"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/client"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

const askBase = `{"questions":[{"id":"db","prompt":"Which database?","title":"DB","multi_select":false,` +
	`"options":[{"label":"Postgres","description":"server"},{"label":"SQLite","description":"embedded"}]}],"timeout_seconds":5}`

// surfaceTools are the task-, title- and office-mode tools, each called
// through a session MCP server in its mode.
var surfaceTools = []argTool{
	{"move_task_kandev", kanban.ModeTask, `{"task_id":"self","workflow_id":"wf1","workflow_step_id":"st1","position":0,"prompt":"p"}`, []string{"task_id", "workflow_step_id"}},
	{"delete_task_kandev", kanban.ModeTask, `{"task_id":"t1"}`, []string{"task_id"}},
	{"archive_task_kandev", kanban.ModeTask, `{"task_id":"t1"}`, []string{"task_id"}},
	{"update_task_kandev", kanban.ModeTask, `{"task_id":"self","title":"T","description":"p","state":"TODO","deferred_launch_prompt":"l"}`, []string{"task_id"}},
	{"get_task_conversation_kandev", kanban.ModeTask, `{"task_id":"self","session_id":"s1","message_types":["prompt"],"sort":"desc","before":"c","after":"c","limit":5}`, []string{"task_id"}},
	{"list_task_sessions_kandev", kanban.ModeTask, `{"task_id":"self","limit":5,"cursor":"c"}`, []string{"task_id"}},
	{"message_task_kandev", kanban.ModeTask, `{"task_id":"t1","prompt":"m","session_id":"s1","delivery_mode":"queued","reply_to_question_id":"q1"}`, []string{"task_id", "prompt"}},
	{"stop_task_kandev", kanban.ModeTask, `{"task_id":"t1","reason":"r"}`, []string{"task_id"}},
	{"spawn_session_kandev", kanban.ModeTask, `{"task_id":"self","name":"n","agent_profile_id":"a","executor_profile_id":"e","prompt":"p"}`, nil},
	{"add_task_dependency_kandev", kanban.ModeTask, `{"task_id":"self","depends_on_task_id":"t1"}`, []string{"depends_on_task_id"}},
	{"remove_task_dependency_kandev", kanban.ModeTask, `{"task_id":"self","depends_on_task_id":"t1"}`, []string{"depends_on_task_id"}},
	{"list_related_tasks_kandev", kanban.ModeTask, `{"task_id":"self","verbose":true,"limit":5}`, nil},
	{"ask_user_question_kandev", kanban.ModeTask, askBase, []string{"questions"}},
	{"create_task_plan_kandev", kanban.ModeTask, `{"task_id":"self","title":"t","content":"c"}`, []string{"content"}},
	{"get_task_plan_kandev", kanban.ModeTask, `{"task_id":"self"}`, nil},
	{"update_task_plan_kandev", kanban.ModeTask, `{"task_id":"self","title":"t","content":"c"}`, []string{"content"}},
	{"delete_task_plan_kandev", kanban.ModeTask, `{"task_id":"self"}`, nil},
	{"show_walkthrough_kandev", kanban.ModeTask, `{"task_id":"self","title":"t","steps":[{"file":"a.go","line":1,"text":"x"}]}`, []string{"steps"}},
	{"get_walkthrough_kandev", kanban.ModeTask, `{"task_id":"self"}`, nil},
	{"delete_walkthrough_kandev", kanban.ModeTask, `{"task_id":"self"}`, nil},
	{"publish_review_findings_kandev", kanban.ModeTask, `{"task_id":"self","summary":"s","findings":[]}`, []string{"findings"}},
	{"show_rich_output_kandev", kanban.ModeTask, `{"version":1,"title":"t","blocks":[{"type":"metrics","items":[{"label":"a","value":"1"}]}]}`, []string{"version", "title", "blocks"}},
	{"add_branch_to_task_kandev", kanban.ModeTask, `{"task_id":"self","local_path":"/x","base_branch":"main","checkout_branch":"f"}`, nil},
	{"add_workspace_sources_kandev", kanban.ModeTask, `{"sources":[{"kind":"repository","local_path":"/x"}]}`, []string{"sources"}},
	{"update_repository_base_branch_kandev", kanban.ModeTask, `{"task_id":"self","task_repository_id":"r","base_branch":"b"}`, []string{"base_branch"}},
	{"step_complete_kandev", kanban.ModeTask, `{"summary":"s","handoff":"h","blockers":"b"}`, []string{"summary"}},
	{"set_task_title_kandev", kanban.ModeTaskTitlePending, `{"title":"T"}`, []string{"title"}},
	{"list_task_documents_kandev", kanban.ModeOffice, `{"task_id":"self","limit":5,"cursor":"c"}`, nil},
	{"get_task_document_kandev", kanban.ModeOffice, `{"task_id":"self","document_key":"k"}`, []string{"document_key"}},
	{"write_task_document_kandev", kanban.ModeOffice, `{"task_id":"self","document_key":"k","type":"markdown","title":"t","content":"c"}`, []string{"document_key", "content"}},
	{"record_step_decision_kandev", kanban.ModeOffice, `{"task_id":"self","decision":"approved","reason":"r"}`, []string{"decision", "reason"}},
}

func inv(tool, msg string) string { return "invalid arguments for " + tool + ": " + msg }

// specificSurfaceCases are hand-written: nested unknown keys, enum
// near-misses, bounds just over, discriminated unions, key patterns.
var specificSurfaceCases = []argCase{
	{"position negative", "move_task_kandev", kanban.ModeTask, `{"task_id":"self","workflow_step_id":"s","position":-1}`,
		inv("move_task_kandev", "/position: must be >= 0 (minimum)")},
	{"title just over", "update_task_kandev", kanban.ModeTask, `{"task_id":"self","title":"` + strings.Repeat("t", 61) + `"}`,
		inv("update_task_kandev", "/title: longer than 60 characters (maxLength)")},
	{"state near-miss", "update_task_kandev", kanban.ModeTask, `{"task_id":"self","state":"finished"}`,
		inv("update_task_kandev", "/state: must be one of: TODO, IN_PROGRESS, REVIEW, BLOCKED, WAITING_FOR_INPUT, COMPLETED, FAILED, CANCELLED (enum)")},
	{"legacy prompt with description", "update_task_kandev", kanban.ModeTask, `{"task_id":"self","description":"d","prompt":"p"}`,
		inv("update_task_kandev", "provide either description or prompt, not both")},
	{"launch_prompt is not advertised", "update_task_kandev", kanban.ModeTask, `{"task_id":"self","launch_prompt":"l"}`,
		inv("update_task_kandev", "unknown field at /; allowed: deferred_launch_prompt, description, state, task_id, title")},
	{"empty deferred launch prompt", "update_task_kandev", kanban.ModeTask, `{"task_id":"self","deferred_launch_prompt":""}`,
		inv("update_task_kandev", "/deferred_launch_prompt: shorter than 1 characters (minLength)")},
	{"sort near-miss", "get_task_conversation_kandev", kanban.ModeTask, `{"task_id":"self","sort":"DESC"}`,
		inv("get_task_conversation_kandev", "/sort: must be one of: asc, desc (enum)")},
	{"message type near-miss", "get_task_conversation_kandev", kanban.ModeTask, `{"task_id":"self","message_types":["prompts"]}`,
		inv("get_task_conversation_kandev", "/message_types/0: must be one of: message, prompt, thought, tool_call, tool_result, plan, permission, status, error, question, answer, comment (enum)")},
	{"message types repeated", "get_task_conversation_kandev", kanban.ModeTask, `{"task_id":"self","message_types":["prompt","prompt"]}`,
		inv("get_task_conversation_kandev", "/message_types: items must be unique (uniqueItems)")},
	{"limit just over", "get_task_conversation_kandev", kanban.ModeTask, `{"task_id":"self","limit":201}`,
		inv("get_task_conversation_kandev", "/limit: must be <= 200 (maximum)")},
	{"delivery mode near-miss", "message_task_kandev", kanban.ModeTask, `{"task_id":"t","prompt":"m","delivery_mode":"queue"}`,
		inv("message_task_kandev", "/delivery_mode: must be one of: queued, interrupt (enum)")},
	{"empty prompt", "message_task_kandev", kanban.ModeTask, `{"task_id":"t","prompt":""}`,
		inv("message_task_kandev", "/prompt: shorter than 1 characters (minLength)")},
	{"reason just over", "stop_task_kandev", kanban.ModeTask, `{"task_id":"t","reason":"` + strings.Repeat("r", 1001) + `"}`,
		inv("stop_task_kandev", "/reason: longer than 1000 characters (maxLength)")},
	{"dependency id typo", "add_task_dependency_kandev", kanban.ModeTask, `{"depends_on":"t"}`,
		inv("add_task_dependency_kandev", `/ is missing required "depends_on_task_id"; unknown field at /; allowed: depends_on_task_id, task_id`)},
	{"bad task id", "remove_task_dependency_kandev", kanban.ModeTask, `{"depends_on_task_id":"a b"}`,
		inv("remove_task_dependency_kandev", "/depends_on_task_id: does not match pattern ^[A-Za-z0-9_-]{1,64}$")},
	{"related limit just over", "list_related_tasks_kandev", kanban.ModeTask, `{"limit":101}`,
		inv("list_related_tasks_kandev", "/limit: must be <= 100 (maximum)")},
	{"five questions", "ask_user_question_kandev", kanban.ModeTask, `{"questions":[` + strings.TrimSuffix(strings.Repeat(askItem+",", 5), ",") + `]}`,
		inv("ask_user_question_kandev", "/questions: more than 4 items (maxItems)")},
	{"no questions", "ask_user_question_kandev", kanban.ModeTask, `{"questions":[]}`,
		inv("ask_user_question_kandev", "/questions: fewer than 1 items (minItems)")},
	{"one option", "ask_user_question_kandev", kanban.ModeTask, `{"questions":[{"prompt":"Q?","options":[{"label":"a","description":"d"}]}]}`,
		inv("ask_user_question_kandev", "/questions/0/options: fewer than 2 items (minItems)")},
	{"option without description", "ask_user_question_kandev", kanban.ModeTask, `{"questions":[{"prompt":"Q?","options":[{"label":"a"},{"label":"b","description":"d"}]}]}`,
		inv("ask_user_question_kandev", `/questions/0/options/0 is missing required "description"`)},
	{"unknown key in an option", "ask_user_question_kandev", kanban.ModeTask, `{"questions":[{"prompt":"Q?","options":[{"label":"a","description":"d","value":1},{"label":"b","description":"d"}]}]}`,
		inv("ask_user_question_kandev", "unknown field at /questions/0/options/0; allowed: description, label, option_id")},
	{"multiSelect spelled camelCase", "ask_user_question_kandev", kanban.ModeTask, `{"questions":[{"prompt":"Q?","multiSelect":true,"options":[{"label":"a","description":"d"},{"label":"b","description":"d"}]}]}`,
		inv("ask_user_question_kandev", `unknown field at /questions/0; allowed: id, multi_select, options, prompt, title (did you mean "multi_select"?)`)},
	{"timeout just over", "ask_user_question_kandev", kanban.ModeTask, `{"questions":[` + askItem + `],"timeout_seconds":3601}`,
		inv("ask_user_question_kandev", "/timeout_seconds: must be <= 3600 (maximum)")},
	{"timeout zero", "ask_user_question_kandev", kanban.ModeTask, `{"questions":[` + askItem + `],"timeout_seconds":0}`,
		inv("ask_user_question_kandev", "/timeout_seconds: must be >= 1 (minimum)")},
	{"plan without content", "update_task_plan_kandev", kanban.ModeTask, `{"content":""}`,
		inv("update_task_plan_kandev", "/content: shorter than 1 characters (minLength)")},
	{"51 walkthrough steps", "show_walkthrough_kandev", kanban.ModeTask, `{"steps":[` + strings.TrimSuffix(strings.Repeat(`{"file":"a","line":1,"text":"t"},`, 51), ",") + `]}`,
		inv("show_walkthrough_kandev", "/steps: more than 50 items (maxItems)")},
	{"line zero", "show_walkthrough_kandev", kanban.ModeTask, `{"steps":[{"file":"a","line":0,"text":"t"}]}`,
		inv("show_walkthrough_kandev", "/steps/0/line: must be >= 1 (minimum)")},
	{"unknown key in a step", "show_walkthrough_kandev", kanban.ModeTask, `{"steps":[{"file":"a","line":1,"text":"t","path":"b"}]}`,
		inv("show_walkthrough_kandev", "unknown field at /steps/0; allowed: file, line, line_end, repo, text, title")},
	{"severity near-miss", "publish_review_findings_kandev", kanban.ModeTask, `{"findings":[{"severity":"critical","title":"t","body":"b"}]}`,
		inv("publish_review_findings_kandev", "/findings/0/severity: must be one of: blocker, major, minor, nit (enum)")},
	{"101 findings", "publish_review_findings_kandev", kanban.ModeTask, `{"findings":[` + strings.TrimSuffix(strings.Repeat(`{"severity":"nit","title":"t","body":"b"},`, 101), ",") + `]}`,
		inv("publish_review_findings_kandev", "/findings: more than 100 items (maxItems)")},
	{"version 2", "show_rich_output_kandev", kanban.ModeTask, `{"version":2,"title":"t","blocks":[{"type":"metrics","items":[{"label":"a","value":"1"}]}]}`,
		inv("show_rich_output_kandev", "/version: must be 1 (const)")},
	{"block type near-miss", "show_rich_output_kandev", kanban.ModeTask, `{"version":1,"title":"t","blocks":[{"type":"table"}]}`,
		inv("show_rich_output_kandev", "/blocks/0/type: must be one of: file, chart, metrics (const)")},
	{"block without type", "show_rich_output_kandev", kanban.ModeTask, `{"version":1,"title":"t","blocks":[{"path":"a"}]}`,
		inv("show_rich_output_kandev", `/blocks/0 is missing required "type"`)},
	{"chart type near-miss", "show_rich_output_kandev", kanban.ModeTask, `{"version":1,"title":"t","blocks":[{"type":"chart","chart_type":"pie","title":"t","summary":"s","labels":["a"],"series":[{"label":"s","values":[1]}]}]}`,
		inv("show_rich_output_kandev", "/blocks/0/chart_type: must be one of: line, bar (enum)")},
	{"metric value a number", "show_rich_output_kandev", kanban.ModeTask, `{"version":1,"title":"t","blocks":[{"type":"metrics","items":[{"label":"a","value":1}]}]}`,
		inv("show_rich_output_kandev", "/blocks/0/items/0/value: expected string")},
	{"chart without summary", "show_rich_output_kandev", kanban.ModeTask, `{"version":1,"title":"t","blocks":[{"type":"chart","chart_type":"bar","title":"t","labels":["a"],"series":[{"label":"s","values":[1]}]}]}`,
		inv("show_rich_output_kandev", `/blocks/0 is missing required "summary"`)},
	{"unknown key in a file block", "show_rich_output_kandev", kanban.ModeTask, `{"version":1,"title":"t","blocks":[{"type":"file","path":"a","content":"x"}]}`,
		inv("show_rich_output_kandev", `unknown field at /blocks/0; allowed: caption, mime_type, path, repo, title, type`)},
	{"file path just over", "show_rich_output_kandev", kanban.ModeTask, `{"version":1,"title":"t","blocks":[{"type":"file","path":"` + strings.Repeat("x", 1025) + `"}]}`,
		inv("show_rich_output_kandev", "/blocks/0/path: longer than 1024 characters (maxLength)")},
	{"five blocks", "show_rich_output_kandev", kanban.ModeTask, `{"version":1,"title":"t","blocks":[` + strings.TrimSuffix(strings.Repeat(`{"type":"file","path":"a"},`, 5), ",") + `]}`,
		inv("show_rich_output_kandev", "/blocks: more than 4 items (maxItems)")},
	{"7 metrics", "show_rich_output_kandev", kanban.ModeTask, `{"version":1,"title":"t","blocks":[{"type":"metrics","items":[` + strings.TrimSuffix(strings.Repeat(`{"label":"a","value":"1"},`, 7), ",") + `]}]}`,
		inv("show_rich_output_kandev", "/blocks/0/items: more than 6 items (maxItems)")},
	{"11 sources", "add_workspace_sources_kandev", kanban.ModeTask, `{"sources":[` + strings.TrimSuffix(strings.Repeat(`{"kind":"folder","local_path":"/x"},`, 11), ",") + `]}`,
		inv("add_workspace_sources_kandev", "/sources: more than 10 items (maxItems)")},
	{"unknown key in a source", "add_workspace_sources_kandev", kanban.ModeTask, `{"sources":[{"kind":"repository","repository_url":"https://x"}]}`,
		inv("add_workspace_sources_kandev", "unknown field at /sources/0; allowed: base_branch, checkout_branch, display_name, github_url, kind, local_path, remote_url, repository_id")},
	{"source kind near-miss", "add_workspace_sources_kandev", kanban.ModeTask, `{"sources":[{"kind":"repo","local_path":"/x"}]}`,
		inv("add_workspace_sources_kandev", "/sources/0/kind: must be one of: repository, folder (enum)")},
	{"branch just over", "update_repository_base_branch_kandev", kanban.ModeTask, `{"base_branch":"` + strings.Repeat("b", 256) + `"}`,
		inv("update_repository_base_branch_kandev", "/base_branch: longer than 255 characters (maxLength)")},
	{"blockers just over", "step_complete_kandev", kanban.ModeTask, `{"summary":"s","blockers":"` + strings.Repeat("b", kanban.MaxStepBlockersLen+1) + `"}`,
		inv("step_complete_kandev", "/blockers: longer than 4000 characters (maxLength)")},
	{"spawn prompt just over", "spawn_session_kandev", kanban.ModeTask, `{"prompt":"` + strings.Repeat("p", kanban.MaxPromptLen+1) + `"}`,
		inv("spawn_session_kandev", "/prompt: longer than 100000 characters (maxLength)")},
	{"add_branch base branch just over", "add_branch_to_task_kandev", kanban.ModeTask, `{"local_path":"/src/a","base_branch":"` + strings.Repeat("b", kanban.MaxBranchLen+1) + `"}`,
		inv("add_branch_to_task_kandev", "/base_branch: longer than 255 characters (maxLength)")},
	{"no sources", "add_workspace_sources_kandev", kanban.ModeTask, `{"sources":[]}`,
		inv("add_workspace_sources_kandev", "/sources: fewer than 1 items (minItems)")},
	{"decision without reason", "record_step_decision_kandev", kanban.ModeOffice, `{"decision":"approved"}`,
		inv("record_step_decision_kandev", `/ is missing required "reason"`)},
	{"summary just over", "step_complete_kandev", kanban.ModeTask, `{"summary":"` + strings.Repeat("s", 4001) + `"}`,
		inv("step_complete_kandev", "/summary: longer than 4000 characters (maxLength)")},
	{"title empty", "set_task_title_kandev", kanban.ModeTaskTitlePending, `{"title":""}`,
		inv("set_task_title_kandev", "/title: shorter than 1 characters (minLength)")},
	{"title just over", "set_task_title_kandev", kanban.ModeTaskTitlePending, `{"title":"` + strings.Repeat("t", 61) + `"}`,
		inv("set_task_title_kandev", "/title: longer than 60 characters (maxLength)")},
	{"bad key", "get_task_document_kandev", kanban.ModeOffice, `{"document_key":"Spec Doc"}`,
		inv("get_task_document_kandev", "/document_key: does not match pattern ^[a-z0-9][a-z0-9._-]{0,63}$")},
	{"type near-miss", "write_task_document_kandev", kanban.ModeOffice, `{"document_key":"k","content":"c","type":"md"}`,
		inv("write_task_document_kandev", "/type: must be one of: markdown, text, json, html, custom (enum)")},
	{"decision near-miss", "record_step_decision_kandev", kanban.ModeOffice, `{"decision":"approve","reason":"r"}`,
		inv("record_step_decision_kandev", "/decision: must be one of: approved, rejected (enum)")},
}

const askItem = `{"prompt":"Q?","options":[{"label":"a","description":"d"},{"label":"b","description":"d"}]}`

// TestSurfaceToolArgumentsRefused drives every refused call through a real
// session MCP server in the tool's mode and checks the exact error and
// that the database did not change.
func TestSurfaceToolArgumentsRefused(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	clients := map[kanban.Mode]*client.Client{}
	for _, m := range []kanban.Mode{kanban.ModeTask, kanban.ModeTaskTitlePending, kanban.ModeOffice} {
		clients[m] = e.sessionMCP(m, "").Client
	}
	runRefusedArgs(t, e, clients, append(genericArgCases(t, surfaceTools), specificSurfaceCases...))
}

// TestSurfaceToolsOmittedAndNullArgs: omitted and null arguments are {},
// anything but an object is refused, tools whose arguments are all
// optional take {}.
func TestSurfaceToolsOmittedAndNullArgs(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	s := e.sessionMCP(kanban.ModeTask, "")
	runValidation(t, e, s.Client, []validationCase{
		{"omitted args", "list_related_tasks_kandev", "", ""},
		{"null args", "list_related_tasks_kandev", "null", ""},
		{"omitted args reach the action", "get_task_plan_kandev", "", "NOT_FOUND: plan not found"},
		{"null args reach the action", "get_task_plan_kandev", "null", "NOT_FOUND: plan not found"},
		{"all optional with {}", "get_walkthrough_kandev", "{}", "NOT_FOUND: artifact not found"},
		{"all optional omitted", "delete_walkthrough_kandev", "", ""},
		{"array args", "step_complete_kandev", "[1]", inv("step_complete_kandev", "/: expected object")},
		{"string args", "get_walkthrough_kandev", `"x"`, inv("get_walkthrough_kandev", "/: expected object")},
		{"null required", "step_complete_kandev", "null", inv("step_complete_kandev", `/ is missing required "summary"`)},
	})
}

// TestSurfaceToolsListedPerMode pins which session mode sees each tool:
// the table's rows, as a client sees them.
func TestSurfaceToolsListedPerMode(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	names := map[kanban.Mode]map[string]bool{}
	for _, m := range kanban.SessionModes {
		names[m] = toolNames(t, e.sessionMCP(m, "").Client)
	}
	names[kanban.ModeExternal] = toolNames(t, e.operatorMCP())
	want := map[string][]kanban.Mode{
		"move_task_kandev":              {kanban.ModeTask, kanban.ModeTaskTitlePending, kanban.ModeConfig, kanban.ModeExternal},
		"update_task_kandev":            {kanban.ModeTask, kanban.ModeTaskTitlePending},
		"get_task_conversation_kandev":  {kanban.ModeTask, kanban.ModeTaskTitlePending, kanban.ModeConfig, kanban.ModeExternal},
		"message_task_kandev":           {kanban.ModeTask, kanban.ModeTaskTitlePending},
		"add_task_dependency_kandev":    {kanban.ModeTask, kanban.ModeTaskTitlePending, kanban.ModeExternal},
		"list_related_tasks_kandev":     {kanban.ModeTask, kanban.ModeTaskTitlePending, kanban.ModeOffice},
		"ask_user_question_kandev":      {kanban.ModeTask, kanban.ModeTaskTitlePending, kanban.ModeConfig, kanban.ModeOffice},
		"get_task_plan_kandev":          {kanban.ModeTask, kanban.ModeTaskTitlePending, kanban.ModeOffice},
		"show_walkthrough_kandev":       {kanban.ModeTask, kanban.ModeTaskTitlePending},
		"show_rich_output_kandev":       {kanban.ModeTask, kanban.ModeTaskTitlePending, kanban.ModeOffice},
		"add_branch_to_task_kandev":     {kanban.ModeTask, kanban.ModeTaskTitlePending},
		"step_complete_kandev":          {kanban.ModeTask, kanban.ModeTaskTitlePending},
		"set_task_title_kandev":         {kanban.ModeTaskTitlePending},
		"write_task_document_kandev":    {kanban.ModeOffice},
		"record_step_decision_kandev":   {kanban.ModeOffice},
		"remove_task_dependency_kandev": {kanban.ModeTask, kanban.ModeTaskTitlePending, kanban.ModeExternal},
	}
	for tool, modes := range want {
		for _, m := range kanban.AllModes {
			if got, w := names[m][tool], slices.Contains(modes, m); got != w {
				t.Errorf("%s in mode %s: listed=%v, want %v", tool, m, got, w)
			}
		}
	}
}
