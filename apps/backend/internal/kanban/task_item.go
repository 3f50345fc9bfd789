package kanban

import "time"

// PreviewLen is how many characters of a long text (a task's prompt) a
// list item shows by default; the full text comes from a verbose list.
const PreviewLen = 100

// Preview returns the first n characters (code points) of s, and whether
// s was longer and so was cut.
func Preview(s string, n int) (string, bool) {
	if len(s) <= n { // at most n bytes: at most n characters
		return s, false
	}
	count := 0
	for i := range s {
		if count == n {
			return s[:i], true
		}
		count++
	}
	return s, false
}

// TaskCounts are the counts a task list shows with each task; zero counts
// are left out of the JSON.
type TaskCounts struct {
	// Subtasks is the number of the task's children that are not archived.
	Subtasks int `json:"subtasks,omitempty"`
	// OpenBlockers is the number of tasks the task depends on that are not
	// COMPLETED.
	OpenBlockers int `json:"open_blockers,omitempty"`
}

// TaskSummary is a task as a list shows it by default: what an agent needs
// to choose a task, with a preview of its prompt (Description, at most
// PreviewLen characters; DescriptionTruncated says it was cut). The full
// task is a TaskDetail of a verbose list.
type TaskSummary struct {
	ID                   string     `json:"id"`
	WorkflowStepID       string     `json:"workflow_step_id"`
	ParentID             string     `json:"parent_id,omitempty"`
	Title                string     `json:"title"`
	State                TaskState  `json:"state"`
	Position             int        `json:"position"`
	Description          string     `json:"description,omitempty"`
	DescriptionTruncated bool       `json:"description_truncated,omitempty"`
	ArchivedAt           *time.Time `json:"archived_at,omitempty"`
	// QueuedForStepID and QueuedAt are set while the task waits in a full
	// step's admission queue (see Task).
	QueuedForStepID string     `json:"queued_for_step_id,omitempty"`
	QueuedAt        *time.Time `json:"queued_at,omitempty"`
	// AgentProfileID is the agent profile kept with the task (see Task).
	AgentProfileID string `json:"agent_profile_id,omitempty"`
	TaskCounts
}

// TaskDetail is a task as a verbose list shows it: every field, and the
// counts.
type TaskDetail struct {
	Task
	TaskCounts
}
