package app

import (
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/kandev/kandev/apps/backend/internal/action"
	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// The board's task controls (issue 26, item 3): edit, archive and
// unarchive, delete with confirmation, search and filters.

// has reports whether an element matches a selector.
func (b *tab) has(sel string) bool {
	b.t.Helper()
	var ok bool
	b.js(fmt.Sprintf(`!!document.querySelector(%q)`, sel), &ok)
	return ok
}

// input sets a control's value and fires event on it, as typing or
// choosing does.
func (b *tab) input(sel, value, event string) {
	b.t.Helper()
	var ok bool
	b.js(fmt.Sprintf(`(() => { const el = document.querySelector(%q); if (!el) return false; el.value = %q;
		el.dispatchEvent(new Event(%q, {bubbles: true})); return true; })()`, sel, value, event), &ok)
	if !ok {
		b.t.Fatalf("no control %s", sel)
	}
}

// reload reloads the page and waits for view.
func (b *tab) reload(view string) {
	b.t.Helper()
	b.do(chromedp.Reload())
	b.until(view+" rendered after a reload", fmt.Sprintf(`document.body.dataset.view === %q && document.getElementById('main').dataset.ready === '1'`, view))
}

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
}

// TestBoardArchiveUnarchive: archiving from the task page hides the card
// (shown again, marked, with "Show archived", kept in the URL across a
// reload); unarchiving brings it back; an unarchive into a full step is
// refused with the server's reason and changes nothing.
func TestBoardArchiveUnarchive(t *testing.T) {
	e := newEnv(t)
	task := e.newTask("Finished work")
	other := e.newTask("Still going")
	var created action.SessionCreateOut
	e.dispatch(kanban.ActionSessionCreate, action.SessionCreateIn{TaskID: task.ID, Mode: kanban.ModeTask}, &created)
	b := newTab(t, e)
	b.signIn()
	card := fmt.Sprintf(`.card[data-id=%q]`, task.ID)
	b.until("the card", fmt.Sprintf(`document.querySelector(%q)`, card))
	b.open("#/task/"+task.ID, "task")
	b.click("#archive-task")
	b.until("the archived badge", `document.getElementById('task-archived') && document.getElementById('unarchive-task')`)
	if got := dbStr(e, `SELECT archived_at IS NOT NULL FROM tasks WHERE id = ?`, task.ID); got != "1" {
		t.Fatalf("archived: got %s", got)
	}
	// Archiving stopped its agent session.
	if got := dbStr(e, `SELECT state FROM task_sessions WHERE id = ?`, created.Session.ID); got != string(kanban.SessionCancelled) {
		t.Fatalf("the archived task's session: got state %s, want CANCELLED", got)
	}
	b.open("#/", "board")
	b.until("the other card", fmt.Sprintf(`document.querySelector('.card[data-id=%q]')`, other.ID))
	if b.has(card) {
		t.Fatal("an archived task is on the board by default")
	}
	b.click("#show-archived")
	b.until("the archived card", fmt.Sprintf(`document.querySelector(%q + ' .badge.archived')`, card))
	b.reload("board")
	b.until("the archived card after a reload", fmt.Sprintf(`document.getElementById('show-archived').checked && document.querySelector(%q)`, card))

	// Its step is full now: unarchiving is refused and changes nothing.
	// The page is opened first: a board redraws itself on a step's
	// change, and a redraw racing the navigation could replace the page.
	b.open("#/task/"+task.ID, "task")
	limit := 1
	e.dispatch(kanban.ActionWorkflowStepUpdate, map[string]any{"step_id": task.WorkflowStepID, "wip_limit": &limit}, nil)
	b.click("#unarchive-task")
	b.until("the refusal", `[...document.querySelectorAll('#toast .error')].some((p) => p.textContent.includes('wip_limit'))`)
	if got := dbStr(e, `SELECT archived_at IS NOT NULL FROM tasks WHERE id = ?`, task.ID); got != "1" {
		t.Fatalf("a refused unarchive changed the task: archived %s", got)
	}
	limit = 0
	e.dispatch(kanban.ActionWorkflowStepUpdate, map[string]any{"step_id": task.WorkflowStepID, "wip_limit": &limit}, nil)
	b.click("#unarchive-task")
	b.until("the archive button again", `document.getElementById('archive-task') && !document.getElementById('task-archived')`)
	b.open("#/", "board")
	b.until("the card back without show archived", fmt.Sprintf(`!document.getElementById('show-archived').checked && document.querySelector(%q) && !document.querySelector(%q + ' .badge.archived')`, card, card))
}

// TestBoardFilters: text, state and agent-profile filters hide the
// other cards, say how many match, and survive a reload (they are in the
// URL).
func TestBoardFilters(t *testing.T) {
	e := newEnv(t)
	mock := e.profileOf("mock-agent")
	login := e.newTask("Fix login bug")
	e.dispatch(kanban.ActionTaskSetState, map[string]any{"task_id": login.ID, "state": "REVIEW"}, nil)
	docs := e.newTask("Write docs")
	var out struct{ Task kanban.Task }
	e.dispatch(kanban.ActionTaskCreate, map[string]any{"title": "Fix signup", "agent_profile_id": mock.ID, "start_agent": false}, &out)
	signup := out.Task
	b := newTab(t, e)
	b.signIn()
	b.until("three cards", `document.querySelectorAll('.card').length === 3`)
	visible := func() string {
		return b.str(`[...document.querySelectorAll('.card')].filter((c) => !c.hidden).map((c) => c.task.title).sort().join(',')`)
	}
	b.input("#filter-text", "fix", "input")
	b.until("the text filter", `document.getElementById('filter-count').textContent === '2 of 3 tasks match'`)
	if got := visible(); got != "Fix login bug,Fix signup" {
		t.Fatalf("text filter: got %q", got)
	}
	b.input("#filter-state", "REVIEW", "change")
	b.until("the state filter", `document.getElementById('filter-count').textContent === '1 of 3 tasks match'`)
	b.shot("board-filters")
	b.reload("board")
	b.until("the filters after a reload", `document.getElementById('filter-text').value === 'fix' && document.getElementById('filter-state').value === 'REVIEW'`)
	if got := visible(); got != "Fix login bug" {
		t.Fatalf("after a reload: got %q", got)
	}
	b.input("#filter-state", "", "change")
	b.input("#filter-text", "", "input")
	b.input("#filter-agent", mock.ID, "change")
	b.until("the agent filter", `document.getElementById('filter-count').textContent === '1 of 3 tasks match'`)
	if got := visible(); got != "Fix signup" {
		t.Fatalf("agent filter: got %q", got)
	}
	b.input("#filter-agent", "none", "change")
	b.until("the default-profile filter", `document.getElementById('filter-count').textContent === '2 of 3 tasks match'`)
	if got := visible(); got != "Fix login bug,Write docs" {
		t.Fatalf("default-profile filter: got %q", got)
	}
	// A task updated live is filtered as it arrives.
	e.dispatch(kanban.ActionTaskUpdate, map[string]any{"task_id": docs.ID, "agent_profile_id": mock.ID}, nil)
	b.until("the live update filtered", fmt.Sprintf(`document.querySelector('.card[data-id=%q]').hidden`, docs.ID))
	_ = signup
}

// TestBoardDeleteTask: Delete asks first, naming the task and saying its
// subtasks are kept as top-level tasks; Cancel deletes nothing; confirming
// deletes it, and its card leaves another open board live.
func TestBoardDeleteTask(t *testing.T) {
	e := newEnv(t)
	parent := e.newTask("Parent to delete")
	var out struct{ Task kanban.Task }
	e.dispatch(kanban.ActionTaskCreate, map[string]any{"title": "Its subtask", "parent_id": parent.ID, "start_agent": false}, &out)
	child := out.Task
	board := newTab(t, e)
	board.signIn()
	card := fmt.Sprintf(`.card[data-id=%q]`, parent.ID)
	board.until("the parent's card", fmt.Sprintf(`document.querySelector(%q)`, card))
	b := newTab(t, e)
	b.open("#/task/"+parent.ID, "task")
	b.click("#delete-task")
	b.until("the confirmation", `document.getElementById('delete-task-dialog') && document.getElementById('delete-task-dialog').open`)
	var dlg struct{ Title, Subtasks, Text string }
	b.js(`(() => { const d = document.getElementById('delete-task-dialog');
		return {Title: d.querySelector('h2').textContent, Subtasks: d.querySelector('#delete-subtasks').textContent, Text: d.innerText}; })()`, &dlg)
	if dlg.Title != "Delete “Parent to delete”?" || !strings.Contains(dlg.Subtasks, "subtask is kept and becomes a top-level task") || !strings.Contains(dlg.Text, "Its subtask") {
		t.Fatalf("confirmation: got %+v", dlg)
	}
	b.shot("board-delete-task")
	b.click("#delete-task-dialog .actions button:not(.danger)")
	b.until("the dialog closed", `!document.getElementById('delete-task-dialog')`)
	if n := dbStr(e, `SELECT COUNT(*) FROM tasks WHERE id = ?`, parent.ID); n != "1" {
		t.Fatal("Cancel deleted the task")
	}
	b.click("#delete-task")
	b.until("the confirmation again", `document.getElementById('confirm-delete')`)
	b.click("#confirm-delete")
	b.until("back on the board", `document.body.dataset.view === 'board' && document.getElementById('main').dataset.ready === '1'`)
	if n := dbStr(e, `SELECT COUNT(*) FROM tasks WHERE id = ?`, parent.ID); n != "0" {
		t.Fatal("the confirmed delete left the task")
	}
	if p := dbStr(e, `SELECT COALESCE(parent_id, '') FROM tasks WHERE id = ?`, child.ID); p != "" {
		t.Fatalf("the subtask still names its deleted parent %q", p)
	}
	board.until("the card gone from the other board", fmt.Sprintf(`!document.querySelector(%q)`, card))
	board.until("the subtask's card still there, top-level now", fmt.Sprintf(`document.querySelector('.card[data-id=%q]') && !document.querySelector('.card[data-id=%q] .parent-link')`, child.ID, child.ID))
}

// TestBoardSubtasksNested: a parent's card lists its subtasks (collapsed,
// counted, each linked with its step), live; a subtask's card and page
// link back to its parent.
func TestBoardSubtasksNested(t *testing.T) {
	e := newEnv(t)
	steps := seededSteps(e)
	parent := e.newTask("Ship the release")
	sub := func(title string) kanban.Task {
		var out struct{ Task kanban.Task }
		e.dispatch(kanban.ActionTaskCreate, map[string]any{"title": title, "parent_id": parent.ID, "start_agent": false}, &out)
		return out.Task
	}
	notes := sub("Write the notes")
	tag := sub("Tag the build")
	e.dispatch(kanban.ActionTaskMove, map[string]any{"task_id": tag.ID, "workflow_step_id": steps["In Progress"].ID}, nil)
	b := newTab(t, e)
	b.signIn()
	pcard := fmt.Sprintf(`.card[data-id=%q]`, parent.ID)
	b.until("the parent's subtask list", fmt.Sprintf(`document.querySelector(%q + ' details.subtasks summary')`, pcard))
	var list struct {
		Summary string
		Open    bool
		Items   []string
		Hrefs   []string
	}
	b.js(fmt.Sprintf(`(() => { const d = document.querySelector(%q + ' details.subtasks');
		return {Summary: d.querySelector('summary').textContent, Open: d.open,
			Items: [...d.querySelectorAll('li')].map((li) => li.textContent),
			Hrefs: [...d.querySelectorAll('li a')].map((a) => a.getAttribute('href'))}; })()`, pcard), &list)
	if list.Summary != "Subtasks (2)" || list.Open || len(list.Items) != 2 ||
		!strings.HasPrefix(list.Items[0], "Tag the build") || !strings.Contains(list.Items[0], "In Progress") ||
		list.Hrefs[1] != "#/task/"+notes.ID {
		t.Fatalf("the parent's list: got %+v", list)
	}
	ncard := fmt.Sprintf(`.card[data-id=%q]`, notes.ID)
	var back struct {
		Sub        bool
		Text, Href string
	}
	b.js(fmt.Sprintf(`(() => { const c = document.querySelector(%q); const a = c.querySelector('.parent-link');
		return {Sub: c.classList.contains('subtask'), Text: a.textContent, Href: a.getAttribute('href')}; })()`, ncard), &back)
	if !back.Sub || back.Text != "↳ Subtask of “Ship the release”" || back.Href != "#/task/"+parent.ID {
		t.Fatalf("the subtask's card: got %+v", back)
	}
	// Opened, it stays open as a new subtask arrives live.
	b.click(pcard + " details.subtasks summary")
	sub("Announce it")
	b.until("the live count", fmt.Sprintf(`document.querySelector(%q + ' details.subtasks summary').textContent === 'Subtasks (3)'`, pcard))
	if !b.has(pcard + " details.subtasks[open]") {
		t.Fatal("the list closed on a live update")
	}
	// The parent renamed: its subtasks' cards say so live.
	e.dispatch(kanban.ActionTaskUpdate, map[string]any{"task_id": parent.ID, "title": "Ship the release now"}, nil)
	b.until("the renamed parent on its subtask's card", fmt.Sprintf(`document.querySelector(%q + ' .parent-link').textContent === '↳ Subtask of “Ship the release now”'`, ncard))
	e.dispatch(kanban.ActionTaskUpdate, map[string]any{"task_id": parent.ID, "title": "Ship the release"}, nil)
	b.until("the parent's title back", fmt.Sprintf(`document.querySelector(%q + ' .parent-link').textContent === '↳ Subtask of “Ship the release”'`, ncard))
	b.shot("board-subtasks")
	b.click(fmt.Sprintf(`%s details.subtasks a[href='#/task/%s']`, pcard, notes.ID))
	b.until("the subtask's page", fmt.Sprintf(`document.body.dataset.view === 'task' && location.hash === '#/task/%s' && document.getElementById('parent-link')`, notes.ID))
	if got := b.str(`document.getElementById('parent-link').textContent`); got != "↑ Subtask of “Ship the release”" {
		t.Fatalf("the page's parent link: got %q", got)
	}
	b.click("#parent-link")
	b.until("the parent's page", `document.getElementById('task-title') && document.getElementById('task-title').textContent === 'Ship the release'`)
}

// TestBoardCommandPanel: Ctrl+K opens the command panel; the steps marked
// show_in_command_panel are quick actions (create a task there from the
// board, move the open task there from its page; a refusal is told);
// typing filters, the arrows choose, Enter runs, Escape closes; tasks are
// reached by title.
func TestBoardCommandPanel(t *testing.T) {
	e := newEnv(t)
	steps := seededSteps(e)
	for _, name := range []string{"In Progress", "Review"} {
		e.dispatch(kanban.ActionWorkflowStepUpdate, map[string]any{"step_id": steps[name].ID, "show_in_command_panel": true}, nil)
	}
	task := e.newTask("Polish the docs")
	other := e.newTask("Other work")
	b := newTab(t, e)
	b.signIn()
	open := func() {
		b.t.Helper()
		b.do(chromedp.KeyEvent("k", chromedp.KeyModifiers(chromedp.ModifierCtrl)))
		b.until("the command panel", `document.getElementById('command-panel') && document.activeElement.id === 'command-input' && document.querySelector('#command-list [role=option]')`)
	}
	options := func() []string {
		var out []string
		b.js(`[...document.querySelectorAll('#command-list [role=option]')].map((li) => li.textContent)`, &out)
		return out
	}
	open()
	if got := strings.Join(options(), "|"); !strings.HasPrefix(got, "New task in In Progress|New task in Review|Go to the board") ||
		!strings.Contains(got, "Polish the docs") || strings.Contains(got, "Backlog") {
		t.Fatalf("board options: got %q", got)
	}
	b.shot("board-command-panel")
	b.do(chromedp.KeyEvent(kb.Escape))
	b.until("the panel closed", `!document.getElementById('command-panel')`)

	// Create a task in a step: the dialog opens on that step.
	open()
	b.do(chromedp.KeyEvent("new task"), chromedp.KeyEvent(kb.ArrowDown), chromedp.KeyEvent(kb.Enter))
	b.until("the create dialog on Review", fmt.Sprintf(`document.querySelector('#create-task [name=workflow_step_id]') && document.querySelector('#create-task [name=workflow_step_id]').value === %q`, steps["Review"].ID))
	b.do(chromedp.KeyEvent(kb.Escape))
	b.until("the create dialog closed", `!document.getElementById('create-task')`)

	// From the board, on a focused card: move that task.
	b.js(fmt.Sprintf(`document.querySelector('.card[data-id=%q]').focus()`, other.ID), nil)
	open()
	b.do(chromedp.KeyEvent("other work” to in"), chromedp.KeyEvent(kb.Enter))
	waitFor(t, func() bool { return stepOf(e, other.ID) == steps["In Progress"].ID })
	b.until("focus back on the moved card", fmt.Sprintf(`document.activeElement && document.activeElement.dataset.id === %q`, other.ID))

	// From the task's page: move it.
	b.open("#/task/"+task.ID, "task")
	open()
	b.do(chromedp.KeyEvent("to review"), chromedp.KeyEvent(kb.Enter))
	waitFor(t, func() bool { return stepOf(e, task.ID) == steps["Review"].ID })
	b.until("the panel closed after the move", `!document.getElementById('command-panel')`)
	// A refused move is told, with the server's reason.
	limit := 1
	e.dispatch(kanban.ActionWorkflowStepUpdate, map[string]any{"step_id": steps["In Progress"].ID, "wip_limit": &limit}, nil)
	open()
	b.do(chromedp.KeyEvent("to in progress"), chromedp.KeyEvent(kb.Enter))
	b.until("the refusal", `[...document.querySelectorAll('#toast .error')].some((p) => p.textContent.includes('wip_limit'))`)
	if got := stepOf(e, task.ID); got != steps["Review"].ID {
		t.Fatalf("a refused move changed the step to %s", got)
	}
	// Navigation by title.
	open()
	b.do(chromedp.KeyEvent("other w"), chromedp.KeyEvent(kb.Enter))
	b.until("the other task's page", fmt.Sprintf(`location.hash === '#/task/%s' && document.getElementById('task-title') && document.getElementById('task-title').textContent === 'Other work'`, other.ID))
}
