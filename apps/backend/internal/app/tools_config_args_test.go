package app

import (
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/client"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// configTools are the configuration and external tools, called through
// the operator's /mcp endpoint.
var configTools = []argTool{
	{"create_workflow_kandev", kanban.ModeExternal, `{"name":"W","workspace_id":"ws1"}`, []string{"name"}},
	{"update_workflow_kandev", kanban.ModeExternal, `{"workflow_id":"wf1","name":"N"}`, []string{"workflow_id"}},
	{"delete_workflow_kandev", kanban.ModeExternal, `{"workflow_id":"wf1","cascade":false}`, []string{"workflow_id"}},
	{"export_workflow_kandev", kanban.ModeExternal, `{"workflow_id":"wf1"}`, []string{"workflow_id"}},
	{"import_workflow_kandev", kanban.ModeExternal, `{"workspace_id":"ws1","document":"version: 1\ntype: kandev_workflow\nworkflows: []\n"}`, []string{"document"}},
	{"create_workflow_step_kandev", kanban.ModeExternal, `{"workflow_id":"wf1","name":"S","wip_limit":2}`, []string{"workflow_id", "name"}},
	{"update_workflow_step_kandev", kanban.ModeExternal, `{"step_id":"st1","prompt":"p"}`, []string{"step_id"}},
	{"delete_workflow_step_kandev", kanban.ModeExternal, `{"step_id":"st1"}`, []string{"step_id"}},
	{"reorder_workflow_steps_kandev", kanban.ModeExternal, `{"workflow_id":"wf1","step_ids":["a","b"]}`, []string{"workflow_id", "step_ids"}},
	{"update_agent_kandev", kanban.ModeExternal, `{"agent_id":"a1","supports_mcp":true}`, []string{"agent_id"}},
	{"list_agent_profiles_kandev", kanban.ModeExternal, `{"agent_id":"a1","limit":10}`, nil},
	{"create_agent_profile_kandev", kanban.ModeExternal, `{"agent_id":"a1","name":"P"}`, []string{"agent_id", "name"}},
	{"update_agent_profile_kandev", kanban.ModeExternal, `{"profile_id":"p1","auto_approve":true}`, []string{"profile_id"}},
	{"delete_agent_profile_kandev", kanban.ModeExternal, `{"profile_id":"p1"}`, []string{"profile_id"}},
	{"get_mcp_config_kandev", kanban.ModeExternal, `{"profile_id":"p1"}`, []string{"profile_id"}},
	{"update_mcp_config_kandev", kanban.ModeExternal, `{"profile_id":"p1","enabled":true}`, []string{"profile_id"}},
	{"list_executors_kandev", kanban.ModeExternal, `{"limit":5}`, nil},
	{"create_executor_profile_kandev", kanban.ModeExternal, `{"executor_id":"e1","name":"P"}`, []string{"executor_id", "name"}},
	{"update_executor_profile_kandev", kanban.ModeExternal, `{"profile_id":"x1","name":"P"}`, []string{"profile_id"}},
	{"delete_executor_profile_kandev", kanban.ModeExternal, `{"profile_id":"x1"}`, []string{"profile_id"}},
	{"list_repositories_kandev", kanban.ModeExternal, `{"limit":5}`, nil},
	{"update_task_state_kandev", kanban.ModeExternal, `{"task_id":"t1","state":"BLOCKED"}`, []string{"task_id", "state"}},
	{"list_pending_questions_kandev", kanban.ModeExternal, `{"limit":5}`, nil},
	{"answer_question_kandev", kanban.ModeExternal, `{"pending_id":"q1","rejected":true}`, []string{"pending_id"}},
}

// specificConfigCases are hand-written: nested unknown keys, enum near-misses,
// bounds just over, record keys, hostile import documents.
var specificConfigCases = []argCase{
	{"unknown key in a step", "create_workflow_kandev", kanban.ModeExternal, `{"name":"W","steps":[{"name":"A","colour":"red"}]}`,
		"invalid arguments for create_workflow_kandev: unknown field at /steps/0; allowed: allow_manual_move, approval, auto_advance, auto_advance_requires_signal, auto_archive_after_hours, cancel_triggers_turn_complete, color, events, heartbeat_minutes, is_start_step, name, prompt, pull_from_step_id, pull_from_step_position, show_in_command_panel, wip_limit (did you mean \"color\"?)"},
	{"step without a name", "create_workflow_kandev", kanban.ModeExternal, `{"name":"W","steps":[{"color":"red"}]}`,
		`invalid arguments for create_workflow_kandev: /steps/0 is missing required "name"`},
	{"empty steps", "create_workflow_kandev", kanban.ModeExternal, `{"name":"W","steps":[]}`,
		"invalid arguments for create_workflow_kandev: /steps: fewer than 1 items (minItems)"},
	{"name just over", "create_workflow_kandev", kanban.ModeExternal, `{"name":"` + strings.Repeat("n", 101) + `"}`,
		"invalid arguments for create_workflow_kandev: /name: longer than 100 characters (maxLength)"},
	{"wip_limit just over", "create_workflow_step_kandev", kanban.ModeExternal, `{"workflow_id":"w","name":"S","wip_limit":10001}`,
		"invalid arguments for create_workflow_step_kandev: /wip_limit: must be <= 10000 (maximum)"},
	{"wip_limit negative", "update_workflow_step_kandev", kanban.ModeExternal, `{"step_id":"s","wip_limit":-1}`,
		"invalid arguments for update_workflow_step_kandev: /wip_limit: must be >= 0 (minimum)"},
	{"events key near-miss", "update_workflow_step_kandev", kanban.ModeExternal, `{"step_id":"s","events":{"on_start":[]}}`,
		"invalid arguments for update_workflow_step_kandev: /events: a key does not satisfy propertyNames"},
	{"unknown key in an automation", "update_workflow_step_kandev", kanban.ModeExternal, `{"step_id":"s","events":{"on_enter":[{"type":"archive","cfg":{}}]}}`,
		"invalid arguments for update_workflow_step_kandev: unknown field at /events/*/0; allowed: config, type"},
	{"unknown automation type", "update_workflow_step_kandev", kanban.ModeExternal, `{"step_id":"s","events":{"on_enter":[{"type":"notify"}]}}`,
		"invalid arguments for update_workflow_step_kandev: /events/*/0/type: must be one of: start_agent, send_prompt, move_to_step, set_state, stop_agent, set_session_mode, queue_run, queue_run_for_each_participant, auto_start_agent, move_to_next, move_to_next_step, move_to_previous, move_to_previous_step, archive, enable_plan_mode, disable_plan_mode, reset_agent_context, clear_decisions (const)"},
	{"settings for a settings-less automation", "update_workflow_step_kandev", kanban.ModeExternal, `{"step_id":"s","events":{"on_enter":[{"type":"move_to_next","config":{"step_id":"x"}}]}}`,
		"invalid arguments for update_workflow_step_kandev: unknown field at /events/*/0/config; no fields allowed"},
	{"unknown automation setting", "update_workflow_step_kandev", kanban.ModeExternal, `{"step_id":"s","events":{"on_enter":[{"type":"send_prompt","config":{"prompt":"p","channel":"x"}}]}}`,
		"invalid arguments for update_workflow_step_kandev: unknown field at /events/*/0/config; allowed: prompt"},
	{"missing automation setting", "update_workflow_step_kandev", kanban.ModeExternal, `{"step_id":"s","events":{"on_enter":[{"type":"move_to_step","config":{}}]}}`,
		"invalid arguments for update_workflow_step_kandev: /events/*/0/config: fewer than 1 properties (minProperties)"},
	{"automation config not an object", "create_workflow_step_kandev", kanban.ModeExternal, `{"workflow_id":"w","name":"S","events":{"on_exit":[{"type":"send_prompt","config":[1]}]}}`,
		"invalid arguments for create_workflow_step_kandev: /events/*/0/config: expected object"},
	{"cascade as a string", "delete_workflow_kandev", kanban.ModeExternal, `{"workflow_id":"w","cascade":"yes"}`,
		"invalid arguments for delete_workflow_kandev: /cascade: expected boolean"},
	{"cascade typo", "delete_workflow_kandev", kanban.ModeExternal, `{"workflow_id":"w","cascde":true}`,
		"invalid arguments for delete_workflow_kandev: unknown field at /; allowed: cascade, workflow_id (did you mean \"cascade\"?)"},
	{"duplicate step ids", "reorder_workflow_steps_kandev", kanban.ModeExternal, `{"workflow_id":"w","step_ids":["a","a"]}`,
		"invalid arguments for reorder_workflow_steps_kandev: /step_ids: items must be unique (uniqueItems)"},
	{"no step ids", "reorder_workflow_steps_kandev", kanban.ModeExternal, `{"workflow_id":"w","step_ids":[]}`,
		"invalid arguments for reorder_workflow_steps_kandev: /step_ids: fewer than 1 items (minItems)"},
	{"state near-miss", "update_task_state_kandev", kanban.ModeExternal, `{"task_id":"t","state":"blockd"}`,
		"invalid arguments for update_task_state_kandev: /state: must be one of: TODO, IN_PROGRESS, REVIEW, BLOCKED, WAITING_FOR_INPUT, COMPLETED, FAILED, CANCELLED (enum)"},
	{"server type near-miss", "update_mcp_config_kandev", kanban.ModeExternal, `{"profile_id":"p","servers":{"gh":{"type":"sse","url":"https://x"}}}`,
		"invalid arguments for update_mcp_config_kandev: /servers/*/type: must be one of: stdio, http (enum)"},
	{"unknown key in a server", "update_mcp_config_kandev", kanban.ModeExternal, `{"profile_id":"p","servers":{"gh":{"type":"stdio","command":"gh","environment":{}}}}`,
		"invalid arguments for update_mcp_config_kandev: unknown field at /servers/*; allowed: args, command, env, headers, max_server_bytes, max_tool_bytes, proxy, timeout_seconds, type, url"},
	{"server without type", "update_mcp_config_kandev", kanban.ModeExternal, `{"profile_id":"p","servers":{"gh":{"command":"gh"}}}`,
		`invalid arguments for update_mcp_config_kandev: /servers/* is missing required "type"`},
	{"bad server name", "update_mcp_config_kandev", kanban.ModeExternal, `{"profile_id":"p","servers":{"bad name":{"type":"stdio","command":"gh"}}}`,
		"invalid arguments for update_mcp_config_kandev: /servers: a key does not satisfy propertyNames"},
	{"bad env name", "update_mcp_config_kandev", kanban.ModeExternal, `{"profile_id":"p","servers":{"gh":{"type":"stdio","command":"gh","env":{"1X":"v"}}}}`,
		"invalid arguments for update_mcp_config_kandev: /servers/*/env: a key does not satisfy propertyNames"},
	{"env value not a string", "update_mcp_config_kandev", kanban.ModeExternal, `{"profile_id":"p","servers":{"gh":{"type":"stdio","command":"gh","env":{"TOKEN":5}}}}`,
		"invalid arguments for update_mcp_config_kandev: /servers/*/env/*: expected string"},
	{"policy near-miss", "create_executor_profile_kandev", kanban.ModeExternal, `{"executor_id":"e","name":"P","mcp_policy":"enable"}`,
		"invalid arguments for create_executor_profile_kandev: /mcp_policy: must be one of: inherit, enabled, disabled, restricted (enum)"},
	{"script just over", "update_executor_profile_kandev", kanban.ModeExternal, `{"profile_id":"x","prepare_script":"` + strings.Repeat("s", 65537) + `"}`,
		"invalid arguments for update_executor_profile_kandev: /prepare_script: longer than 65536 characters (maxLength)"},
	{"bad config key", "create_executor_profile_kandev", kanban.ModeExternal, `{"executor_id":"e","name":"P","config":{"a b":1}}`,
		"invalid arguments for create_executor_profile_kandev: /config: a key does not satisfy propertyNames"},
	{"limit just over", "list_pending_questions_kandev", kanban.ModeExternal, `{"limit":201}`,
		"invalid arguments for list_pending_questions_kandev: /limit: must be <= 200 (maximum)"},
	{"limit zero", "list_executors_kandev", kanban.ModeExternal, `{"limit":0}`,
		"invalid arguments for list_executors_kandev: /limit: must be >= 1 (minimum)"},
	{"state is not a filter", "list_pending_questions_kandev", kanban.ModeExternal, `{"state":"answered"}`,
		"~invalid arguments for list_pending_questions_kandev: unknown field at /; allowed: created_since, cursor, limit, workspace_id"},
	{"document as an object", "import_workflow_kandev", kanban.ModeExternal, `{"document":{"version":1,"type":"kandev_workflow","workflows":[]}}`,
		"invalid arguments for import_workflow_kandev: /document: expected string"},
	{"document empty", "import_workflow_kandev", kanban.ModeExternal, `{"document":""}`,
		"invalid arguments for import_workflow_kandev: /document: shorter than 1 characters (minLength)"},
	{"unknown key in an answer", "answer_question_kandev", kanban.ModeExternal, `{"pending_id":"q","answers":[{"question_id":"q1","label":"A"}]}`,
		"invalid arguments for answer_question_kandev: unknown field at /answers/0; allowed: custom_text, question_id, selected_options"},
	{"empty selection", "answer_question_kandev", kanban.ModeExternal, `{"pending_id":"q","answers":[{"question_id":"q1","selected_options":[]}]}`,
		"invalid arguments for answer_question_kandev: /answers/0/selected_options: fewer than 1 items (minItems)"},
	{"too many answers", "answer_question_kandev", kanban.ModeExternal, `{"pending_id":"q","answers":[{"question_id":"a","custom_text":"x"},{"question_id":"b","custom_text":"x"},{"question_id":"c","custom_text":"x"},{"question_id":"d","custom_text":"x"},{"question_id":"e","custom_text":"x"}]}`,
		"invalid arguments for answer_question_kandev: /answers: more than 4 items (maxItems)"},
}

// TestConfigToolArgumentsRefused drives every refused call through the
// external /mcp endpoint and checks the exact error and that the database
// did not change.
func TestConfigToolArgumentsRefused(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	clients := map[kanban.Mode]*client.Client{kanban.ModeExternal: e.operatorMCP()}
	runRefusedArgs(t, e, clients, append(genericArgCases(t, configTools), specificConfigCases...))
}
