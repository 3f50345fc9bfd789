package app

import (
	"fmt"
	"strings"
	"testing"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// The board's task controls (issue 26, item 3): edit, archive and
// unarchive, delete with confirmation.

// TestBoardEditTask: the task page edits title, prompt and the profiles
// kept with the task; a refused edit shows the server's reason next to
// its field and changes nothing.
func TestBoardEditTask(t *testing.T) {
	e := newEnv(t)
	task := e.newTask("Original title")
	mock := e.profileOf("mock-agent")
	worktree := e.executorProfileNamed("exec-worktree")
	b := newTab(t, e)
	b.signIn()
	b.open("#/task/"+task.ID, "task")
	b.click("#edit-task")
	b.until("the edit dialog", `document.querySelector('#edit-task-dialog [name=title]')`)
	if got := b.str(`document.querySelector('#edit-task-dialog [name=title]').value`); got != "Original title" {
		t.Fatalf("edit form title: got %q", got)
	}
	b.set("#edit-task-dialog [name=title]", strings.Repeat("x", 61))
	b.set("#edit-task-dialog [name=description]", "A prompt that must not be saved")
	b.click("#edit-task-dialog button.primary")
	b.until("the title refusal", `document.querySelector('#edit-task-dialog [data-field=title] .field-error').textContent.includes('longer than 60')`)
	if got := dbStr(e, `SELECT title || '|' || description FROM tasks WHERE id = ?`, task.ID); got != "Original title|" {
		t.Fatalf("a refused edit changed the task: %q", got)
	}
	b.set("#edit-task-dialog [name=title]", "Edited title")
	b.set("#edit-task-dialog [name=description]", "Do **this** instead.")
	b.set("#edit-task-dialog [name=agent_profile_id]", mock.ID)
	b.set("#edit-task-dialog [name=executor_profile_id]", worktree)
	b.shot("board-edit-task")
	b.click("#edit-task-dialog button.primary")
	b.until("the dialog closed", `!document.getElementById('edit-task-dialog')`)
	b.until("the new title", `document.getElementById('task-title').textContent === 'Edited title'`)
	b.until("the profiles line", `(document.getElementById('task-profiles') || {}).textContent?.includes('Mock Agent')`)
	got := dbStr(e, `SELECT t.title || '|' || t.description || '|' || p.agent_profile_id || '|' || p.executor_profile_id
		FROM tasks t JOIN task_start_profiles p ON p.task_id = t.id WHERE t.id = ?`, task.ID)
	if want := fmt.Sprintf("Edited title|Do **this** instead.|%s|%s", mock.ID, worktree); got != want {
		t.Fatalf("saved: got %q, want %q", got, want)
	}
	// Back to the defaults: the kept profiles are cleared.
	b.click("#edit-task")
	b.until("the edit dialog again", fmt.Sprintf(`document.querySelector('#edit-task-dialog [name=agent_profile_id]').value === %q`, mock.ID))
	b.set("#edit-task-dialog [name=agent_profile_id]", "")
	b.set("#edit-task-dialog [name=executor_profile_id]", "")
	b.click("#edit-task-dialog button.primary")
	b.until("the profiles line gone", `!document.getElementById('task-profiles')`)
	if n := dbStr(e, `SELECT COUNT(*) FROM task_start_profiles WHERE task_id = ?`, task.ID); n != "0" {
		t.Fatalf("cleared profiles: %s rows left", n)
	}
	_ = kanban.ActionTaskUpdate
}
