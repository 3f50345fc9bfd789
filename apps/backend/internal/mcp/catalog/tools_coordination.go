package catalog

import "github.com/kandev/kandev/apps/backend/internal/kanban"

var groupCoordination = declare(&Group{Name: "coordination", Tools: []*Tool{
	{
		Action: kanban.ActionTaskMessage,
		Title:  "Message another task",
		Description: "Send a prompt to another task's agent (its newest live session, or session_id's), delivered as its " +
			"next turn, or at once with delivery_mode interrupt (direct parent only). CONFLICT when it has no live session " +
			"(use spawn_session_kandev). To answer a question an autopilot subtask asked you, pass its id as " +
			"reply_to_question_id: delivered once (a repeat returns already_answered=true).",
		Output: out("The delivered message.", P{
			"message":          messageOut,
			"session_id":       Str("The session it was delivered to."),
			"delivery_mode":    Str("queued or interrupt."),
			"already_answered": Bool("True when reply_to_question_id was answered before: nothing was delivered."),
		}, "session_id", "delivery_mode"),
		Hints: WriteHints,
	},
	{
		Action: kanban.ActionTaskStop,
		Title:  "Stop subtask",
		Description: "Stop the agents of one of your direct subtasks: every session of it that has not ended becomes " +
			"CANCELLED and gets a status message with your reason. Stopping a task whose sessions have all ended succeeds " +
			"and stops nothing. The task itself is kept.",
		Output: out("What was stopped.", P{
			"task_id":             Str("The stopped task."),
			"stopped_session_ids": Arr("Sessions moved to CANCELLED by this call.", Str("A session id.")),
		}, "task_id", "stopped_session_ids"),
		Hints: DestructiveHints,
	},
	{
		Action: kanban.ActionSessionSpawn,
		Title:  "Spawn session",
		Description: "Start another agent session on your task, a subtask or a task you created (any task of your " +
			"workspace under --session-scope workspace), e.g. a reviewer or a retry. Its first message is prompt (the only " +
			"context it gets), else the task's prompt.",
		Output: out("The new session.", P{
			"session": sessionOut,
			"agent_profile": out("The agent profile the session runs with.", P{
				"id": Str("Profile id."), "agent_id": Str("Agent."), "name": Str("Profile name."),
				"model": Str("Model, if set."), "is_default": Bool("The agent's default profile."),
			}, "id", "agent_id", "name"),
		}, "session"),
		Hints: WriteHints,
	},
}})
