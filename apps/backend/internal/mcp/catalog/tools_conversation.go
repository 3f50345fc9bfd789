package catalog

import (
	"strings"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

var groupConversation = declare(&Group{Name: "conversation", Tools: []*Tool{
	{
		Action: kanban.ActionMessageList,
		Title:  "Get task conversation",
		Description: "Read a task's conversation (prompts, agent messages, tool calls, questions, status), or one " +
			"session's. Continue with next_cursor as after (asc) or before (desc).",
		Output: listOf(messageOut),
		Hints:  ReadHints,
	},
	{
		Name:    "list_task_sessions_kandev",
		Action:  kanban.ActionSessionList,
		Drop:    []string{"workspace_id"},
		Require: []string{"task_id"},
		Title:   "List task sessions",
		Description: "List a task's agent sessions, newest first, with their state, MCP mode and agent profile. Use a " +
			"session id to filter get_task_conversation_kandev.",
		Output: listOf(sessionOut),
		Hints:  ReadHints,
	},
}})

var (
	messageOut = out("One conversation message.", P{
		"id": Str("Message id."), "session_id": Str("Session it belongs to."), "task_id": Str("Task."),
		"author":     Str(`Who wrote it: "user", "agent", "operator", or "task:<id>" for a message from another task's session.`),
		"type":       Str("Message type: " + strings.Join(kanban.MessageTypes, ", ") + "."),
		"content":    Str("Text."),
		"turn":       Int("Agent turn number."),
		"created_at": Str("When written (RFC 3339)."),
	}, "id", "session_id", "task_id", "author", "type", "content", "created_at")
	sessionOut = out("An agent session on a task.", P{
		"id": Str("Session id."), "task_id": Str("Task."), "workspace_id": Str("Workspace."),
		"agent_profile_id":    Str("Agent profile the session runs with."),
		"executor_profile_id": Str("Executor profile it runs on."),
		"state":               Str("CREATED, RUNNING, WAITING_FOR_INPUT, COMPLETED, FAILED or CANCELLED."),
		"mcp_mode":            Str("Tool surface its agent sees (task, task-title-pending, config, office)."),
		"capabilities":        Arr("Capabilities such as user-question.", Str("A capability.")),
		"mcp_attached":        Bool("Whether its MCP server is connected right now."),
		"created_at":          Str("Creation time (RFC 3339)."),
		"updated_at":          Str("Last change (RFC 3339)."),
		"usage": out("What its agent reported it used (absent when it reported nothing).", P{
			"turns": Int("Turns with usage."), "input_tokens": Int("Input tokens."), "output_tokens": Int("Output tokens."),
			"cached_read_tokens": Int("Cache read tokens."), "cached_write_tokens": Int("Cache write tokens."),
			"thought_tokens": Int("Reasoning tokens."),
			"cost":           out("Cost, as the agent reported it.", P{"amount": S{"type": "number", "description": "Amount."}, "currency": Str("ISO 4217 code, or empty.")}),
			"context_used":   Int("Tokens in the agent's context."), "context_size": Int("Its context window."),
		}),
	}, "id", "task_id", "state", "mcp_mode")
)
