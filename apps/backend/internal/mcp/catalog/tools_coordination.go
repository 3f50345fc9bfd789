package catalog

import "github.com/kandev/kandev/apps/backend/internal/kanban"

// maxStopReason bounds stop_task_kandev's reason (as the action does).
const maxStopReason = 1000

var _ = declare(&Group{Name: "coordination", Tools: []*Tool{
	{
		Name:   "message_task_kandev",
		Action: kanban.ActionTaskMessage,
		Title:  "Message another task",
		Description: "Send a prompt to another task's agent: it is appended to that task's newest live session's " +
			"conversation, or session_id's (author task:<your task id>), and delivered as the agent's next turn. " +
			"delivery_mode interrupt instead cancels the agent's current turn and delivers at once; only the task's direct " +
			"parent may interrupt. Fails with CONFLICT when the task has no live session (use spawn_session_kandev). To " +
			"answer a question an autopilot subtask asked you (ask_parent_question_kandev), pass its question id as " +
			"reply_to_question_id: the answer is recorded and delivered to the asking session once; a repeated reply " +
			"delivers nothing and returns already_answered=true.",
		Input: Obj("", P{
			"task_id":    ID("Task to message (not your own)."),
			"prompt":     Str("The message to deliver to the task's agent.").Len(1, kanban.MaxPromptLen),
			"session_id": ID("A live session of the task to deliver to. Default: its newest live session."),
			"delivery_mode": Enum("queued: delivered at the next turn (default); interrupt: interrupt the current turn "+
				"(direct parent only).", "queued", "interrupt").Default("queued"),
			"reply_to_question_id": ID("A question your direct subtask task_id asked you with ask_parent_question_kandev; " +
				"prompt is your answer."),
		}, "task_id", "prompt"),
		Output: out("The delivered message.", P{
			"message":          messageOut,
			"session_id":       Str("The session it was delivered to."),
			"delivery_mode":    Str("queued or interrupt."),
			"already_answered": Bool("True when reply_to_question_id was answered before: nothing was delivered."),
		}, "session_id", "delivery_mode"),
		Hints: WriteHints,
	},
	{
		Name:   "stop_task_kandev",
		Action: kanban.ActionTaskStop,
		Title:  "Stop subtask",
		Description: "Stop the agents of one of your direct subtasks: every session of it that has not ended becomes " +
			"CANCELLED and gets a status message with your reason. Stopping a task whose sessions have all ended succeeds " +
			"and stops nothing. The task itself is kept.",
		Input: Obj("", P{
			"task_id": ID("Direct subtask whose sessions to stop."),
			"reason":  Str("Why, recorded in the stopped sessions' conversations.").Len(1, maxStopReason),
		}, "task_id"),
		Output: out("What was stopped.", P{
			"task_id":             Str("The stopped task."),
			"stopped_session_ids": Arr("Sessions moved to CANCELLED by this call.", Str("A session id.")),
		}, "task_id", "stopped_session_ids"),
		Hints: DestructiveHints,
	},
	{
		Name:   "spawn_session_kandev",
		Action: kanban.ActionSessionSpawn,
		Title:  "Spawn session",
		Description: "Start another agent session on an existing task of your workspace (your own by default), e.g. a " +
			"reviewer next to the implementer, or a retry. Its first message is prompt — the only context the new agent " +
			"gets — else the task's own prompt. Returns the session and the agent profile it runs with.",
		Input: Obj("", P{
			"task_id":             SelfTaskRef(`Task to start a session on; "self" (default) is your own task.`),
			"name":                Str(`Session name shown to people, e.g. "reviewer".`).Len(1, kanban.MaxNameLen),
			"agent_profile_id":    ID("Agent profile to run. Default: the default profile."),
			"executor_profile_id": ID("Executor profile to run on. Default: the default profile."),
			"prompt":              Str("First message for the new session. Default: the task's prompt.").Len(1, kanban.MaxPromptLen),
		}),
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
