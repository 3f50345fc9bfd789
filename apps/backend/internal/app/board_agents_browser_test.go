package app

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/kandev/kandev/apps/backend/internal/action"
	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// The board's browser tests with real agents: each backend runs the mock
// agent (the built kandev binary) over ACP, as kandev serve does.

// seenMessage is one version of a conversation message the page drew.
type seenMessage struct {
	ID, Type, Status, Text string
}

// watchConversation records every version of every message the task
// page draws from now on (a re-published message is redrawn in place).
func (b *tab) watchConversation() {
	b.t.Helper()
	b.js(`(() => { window.__seen = []; const box = document.getElementById('panel-conversation');
		const rec = (el) => { const tool = el.querySelector('.tool'); window.__seen.push({ID: el.dataset.id, Type: el.dataset.type,
			Status: tool ? tool.dataset.status : '', Text: el.textContent}); };
		new MutationObserver((muts) => { for (const m of muts) for (const n of m.addedNodes) {
			if (n.nodeType !== 1) continue;
			if (n.matches('.msg')) rec(n); else n.querySelectorAll('.msg').forEach(rec);
		} }).observe(box, {childList: true, subtree: true}); return true; })()`, nil)
}

func (b *tab) seen() []seenMessage {
	b.t.Helper()
	var out []seenMessage
	b.js(`window.__seen`, &out)
	return out
}

// checkStreamedMessage: the streamed message was drawn first with part
// one only, then redrawn with the same id and both parts; one element in
// the end.
func checkStreamedMessage(t *testing.T, b *tab) {
	t.Helper()
	var id string
	partial, whole := false, false
	for _, m := range b.seen() {
		if m.Type != "message" || !strings.Contains(m.Text, "Part one") {
			continue
		}
		if id == "" {
			id = m.ID
		}
		if m.ID != id {
			t.Fatalf("the streamed message changed id: %s, then %s", id, m.ID)
		}
		partial = partial || !strings.Contains(m.Text, "Part two")
		whole = whole || (partial && strings.Contains(m.Text, "Part two"))
	}
	if !partial || !whole {
		t.Fatalf("streaming: got partial %v, whole %v; seen %+v", partial, whole, b.seen())
	}
	var n int
	b.js(fmt.Sprintf(`document.querySelectorAll('.msg[data-id=%q]').length`, id), &n)
	if n != 1 {
		t.Fatalf("streamed message drawn %d times, want once", n)
	}
}

// checkToolCallRedrawn: the tool call was drawn in progress, then
// completed, under one id.
func checkToolCallRedrawn(t *testing.T, b *tab) {
	t.Helper()
	var toolID string
	statuses := map[string]bool{}
	for _, m := range b.seen() {
		if m.Type == "tool_call" && strings.Contains(m.Text, "list_tasks_kandev") {
			if toolID != "" && m.ID != toolID {
				t.Fatalf("the tool call changed id: %s, then %s", toolID, m.ID)
			}
			toolID = m.ID
			statuses[m.Status] = true
		}
	}
	if !statuses["in_progress"] || !statuses["completed"] {
		t.Fatalf("tool call statuses seen: %v, want in_progress then completed", statuses)
	}
}

// TestBoardConversationStreams: an agent started from the task page's
// controls streams its conversation into the open page: one message that
// grows in place (same id, more text), a collapsed thought, its plan as a
// list, and a tool call redrawn in place from in progress to completed
// with its input and output; the session's state follows live.
func TestBoardConversationStreams(t *testing.T) {
	e := newAgentEnv(t)
	task := e.newTask("Stream to me")
	b := newTab(t, e)
	b.signIn()
	b.open("#/task/"+task.ID, "task")
	b.until("no session yet", `document.getElementById('no-session')`)
	b.watchConversation()
	b.set("#spawn [name=agent_profile_id]", e.profileOf("mock-agent").ID)
	b.set("#spawn [name=prompt]", strings.Join([]string{
		"@say Part one of the answer.",
		"@sleep 700",
		"@say Part two, the end.",
		"@think Weighing the options",
		"@plan Read the code | Write the fix",
		`@tool list_tasks_kandev {"limit": 5}`,
		"@say Done.",
	}, "\n"))
	b.click("#spawn button.primary")
	b.until("the last message", `[...document.querySelectorAll('.msg.type-message')].some((m) => m.textContent.includes('Done.'))`)
	b.until("the idle session", `document.querySelector('#session-info .badge.agent').textContent.includes('Idle')`)

	checkStreamedMessage(t, b)
	checkToolCallRedrawn(t, b)
	var page struct {
		ThoughtOpen          bool
		Thought, Input, Plan string
		Output, Prompt, Info string
	}
	b.js(`(() => { const th = document.querySelector('.msg.type-thought details'); const tool = document.querySelector('.msg.type-tool_call');
		const part = (label) => [...tool.querySelectorAll('details')].find((d) => d.querySelector('summary').textContent === label).querySelector('pre').textContent;
		return {ThoughtOpen: th.open, Thought: th.textContent, Input: part('Input'), Output: part('Output'),
			Plan: [...document.querySelectorAll('.agent-plan li')].map((li) => li.textContent).join('|'),
			Prompt: document.querySelector('.msg.type-prompt').textContent, Info: document.getElementById('session-info').textContent}; })()`, &page)
	if page.ThoughtOpen || !strings.Contains(page.Thought, "Weighing the options") {
		t.Fatalf("thought: got open %v, %q; want collapsed with its text", page.ThoughtOpen, page.Thought)
	}
	if page.Input != "{\n  \"limit\": 5\n}" || !strings.Contains(page.Output, "Stream to me") {
		t.Fatalf("tool input %q and output %q: want the indented arguments and the listed task", page.Input, page.Output)
	}
	if !strings.Contains(page.Plan, "Read the code (Pending, medium priority)") || !strings.Contains(page.Plan, "Write the fix") {
		t.Fatalf("plan: got %q", page.Plan)
	}
	if !strings.Contains(page.Prompt, "You") || !strings.Contains(page.Prompt, "@say Part one") {
		t.Fatalf("prompt message: got %q", page.Prompt)
	}
	if !strings.Contains(page.Info, "Run by Kandev") || !strings.Contains(page.Info, "Tools connected") {
		t.Fatalf("session info: got %q", page.Info)
	}
}

// TestBoardResolvesPermission: an agent's permission request is badged on
// its card and counted in the navigation; the operator allows it in the
// permissions view and the agent goes on. A request answered by another
// operator while the page shows it says so; a request the page answers
// after someone else did is told it lost, and the first answer stands.
func TestBoardResolvesPermission(t *testing.T) {
	e := newAgentEnv(t)
	b := newTab(t, e)
	b.signIn()
	task, sid := e.startMock("Deploy it", strings.Join([]string{"@permission Deploy to staging", "@say Deployed.",
		"@permission Rotate the keys", "@say Rotated.", "@permission Delete the old build", "@say Should not happen."}, "\n"), nil)
	card := fmt.Sprintf(`.card[data-id=%q]`, task.ID)
	b.until("the permission badge", fmt.Sprintf(`document.querySelector(%q + ' .badge[data-waiting=permissions]')`, card))
	b.until("the waiting agent", fmt.Sprintf(`document.querySelector(%q + ' .badge.agent').textContent.includes('Waiting for input')`, card))
	b.until("the permission count", `document.getElementById('permissions-count').textContent === '1'`)
	b.open("#/permissions", "permissions")
	b.until("the request", `document.querySelector('.permission .permission-title')`)
	if got := b.str(`document.querySelector('.permission').textContent`); !strings.Contains(got, "Deploy to staging") || !strings.Contains(got, "Deploy it") {
		t.Fatalf("permission card: got %q, want its title and task", got)
	}
	b.shot("board-permission")
	b.click(`.permission button[data-option=allow]`)
	b.until("the confirmation", `document.querySelector('.permission .notice').textContent.includes('You chose “Allow”')`)
	e.waitMessage(task.ID, "message", "Deployed.")

	// The next request, answered elsewhere while the page shows it.
	second := e.waitPermission(task.ID, "Rotate the keys")
	b.until("the second request", fmt.Sprintf(`document.querySelector('.permission[data-id=%q]')`, second.ID))
	e.dispatch(kanban.ActionPermissionResolve, action.PermissionResolveIn{TaskID: task.ID, SessionID: sid, RequestID: second.ID,
		PendingID: second.PendingID, OptionID: "allow"}, nil)
	b.until("the answered-elsewhere notice", fmt.Sprintf(`(document.querySelector('.permission[data-id=%q] .notice') || {}).textContent?.includes('answered “Allow” by operator')`, second.ID))
	e.waitMessage(task.ID, "message", "Rotated.")

	// The last one: the page does not hear of the other answer and loses.
	third := e.waitPermission(task.ID, "Delete the old build")
	sel := fmt.Sprintf(`.permission[data-id=%q]`, third.ID)
	b.until("the third request", fmt.Sprintf(`document.querySelector(%q)`, sel))
	b.js(`import('/app/api.js').then((m) => m.api.unsubscribe(...m.api.topics))`, nil)
	e.dispatch(kanban.ActionPermissionResolve, action.PermissionResolveIn{TaskID: task.ID, SessionID: sid, RequestID: third.ID,
		PendingID: third.PendingID, OptionID: "reject"}, nil)
	b.click(sel + " button[data-option=allow]")
	b.until("the losing notice", fmt.Sprintf(`(document.querySelector(%q + ' .notice.warn') || {}).textContent?.includes('Someone answered first: this request was answered “Reject”')`, sel))
	e.waitMessage(task.ID, "message", "Permission not granted: Delete the old build")
	e.waitState(sid, kanban.SessionIdle)
	if got := dbStr(e, `SELECT option_id FROM agent_permissions WHERE id = ?`, third.ID); got != "reject" {
		t.Fatalf("stored answer: got %q, want the first one (reject)", got)
	}
	if e.agentSaid(task.ID, "Should not happen.") {
		t.Fatal("the agent went on after the first answer rejected")
	}
}

// waitPermission waits for the task's pending permission request titled
// title and returns it.
func (e *env) waitPermission(taskID, title string) kanban.Permission {
	e.t.Helper()
	deadline := time.Now().Add(agentWait)
	for time.Now().Before(deadline) {
		var l kanban.List[kanban.Permission]
		e.dispatch(kanban.ActionPermissionList, action.PermissionListIn{TaskID: taskID}, &l)
		for _, p := range l.Items {
			if p.Title == title {
				return p
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	e.t.Fatalf("no pending permission request %q", title)
	return kanban.Permission{}
}

// TestBoardAgentStatusAndQueue: cards follow their agents live (a failed
// agent with its exit code); a task the workflow engine put in a full
// step's admission queue is badged with that step, its page shows the
// engine's records in the conversation, and the badge goes once the task
// is admitted.
func TestBoardAgentStatusAndQueue(t *testing.T) {
	e := newAgentEnv(t)
	steps := seededSteps(e)
	busy := e.newTask("Occupying In Progress")
	e.dispatch(kanban.ActionTaskMove, action.TaskMoveIn{TaskID: busy.ID, WorkflowStepID: steps["In Progress"].ID}, nil)
	limit := 1
	e.dispatch(kanban.ActionWorkflowStepUpdate, action.StepUpdateIn{StepID: steps["In Progress"].ID, WIPLimit: &limit}, nil)
	// Backlog without its automations, auto-advancing on the agent's
	// signal at the turn's end: only the agent's step_complete_kandev moves
	// its tasks, through the engine, so the one that signals waits in the
	// queue of the full In Progress.
	signal := true
	e.dispatch(kanban.ActionWorkflowStepUpdate, action.StepUpdateIn{StepID: steps["Backlog"].ID, Events: map[string][]kanban.StepAction{},
		AutoAdvanceRequiresSignal: &signal}, nil)
	b := newTab(t, e)
	b.signIn()
	queued, _ := e.startMock("Queue me", `@tool step_complete_kandev {"summary":"Ready for work"}`, nil)
	crash, crashSID := e.startMock("Crash", "@say Bye.\n@exit 3", nil)

	crashCard := fmt.Sprintf(`.card[data-id=%q]`, crash.ID)
	b.until("the failed agent", fmt.Sprintf(`(document.querySelector(%q + ' .badge.agent') || {}).textContent?.includes('Failed (exit 3)')`, crashCard))
	if got := b.str(fmt.Sprintf(`document.querySelector(%q + ' .badge.state-FAILED').textContent`, crashCard)); !strings.Contains(got, "Failed") {
		t.Fatalf("crashed task's state badge: got %q", got)
	}
	queuedCard := fmt.Sprintf(`.card[data-id=%q]`, queued.ID)
	b.until("the queue badge", fmt.Sprintf(`(document.querySelector(%q + ' .badge.queued') || {}).textContent === '⇢Waiting for room in In Progress'`, queuedCard))
	if got := b.str(fmt.Sprintf(`document.querySelector(%q + ' .badge.agent').textContent`, queuedCard)); !strings.Contains(got, "Idle") {
		t.Fatalf("queued task's agent badge: got %q, want Idle", got)
	}

	b.open("#/task/"+queued.ID, "task")
	b.until("the queue badge on the page", `document.getElementById('task-queued')`)
	b.until("the engine's record", `[...document.querySelectorAll('.msg.author-workflow')].some((m) => m.textContent.includes('waits in its admission queue'))`)
	if got := b.str(`document.querySelector('.msg.author-workflow .who strong').textContent`); got != "Workflow" {
		t.Fatalf("workflow record author: got %q", got)
	}
	e.dispatch(kanban.ActionTaskMove, action.TaskMoveIn{TaskID: busy.ID, WorkflowStepID: steps["Done"].ID}, nil)
	b.until("the admission record", `[...document.querySelectorAll('.msg.author-workflow')].some((m) => m.textContent.includes('Admitted to In Progress from its admission queue'))`)
	b.until("the queue badge gone", `!document.getElementById('task-queued')`)
	if got := stepOf(e, queued.ID); got != steps["In Progress"].ID {
		t.Fatalf("admitted task on step %s, want In Progress", got)
	}

	b.open("#/task/"+crash.ID, "task")
	b.until("the exit code", `document.getElementById('session-info').textContent.includes('Exit code 3')`)
	want := e.waitState(crashSID, kanban.SessionFailed).Error
	if got := b.str(`document.getElementById('session-error').textContent`); want == "" || got != want {
		t.Fatalf("session error: got %q, want the stored %q", got, want)
	}
	b.until("the runtime's error record", `[...document.querySelectorAll('.msg.type-error.author-kandev')].some((m) => m.textContent.includes('The session failed'))`)
}

// newcomerPrompt is the mock-agent task of docs/public/agents.md.
var newcomerPrompt = strings.Join([]string{
	"Try the runtime.",
	"@say Hello! I am the mock agent.",
	"@plan Look around | Create a subtask | Report",
	`@tool list_tasks_kandev {"limit": 5}`,
	`@tool create_task_kandev {"title": "Follow-up from the mock agent", "parent_id": "self", "start_agent": false}`,
	"@permission Touch the repository",
	`@tool ask_user_question_kandev {"questions": [{"prompt": "Ship it?", "options": [{"label": "Yes", "description": "Ship"}, {"label": "No", "description": "Wait"}]}]}`,
	"@say Thanks, done.",
}, "\n")

// newcomerCreatesTask creates, in the New task form, a task with the mock
// agent's default profile running newcomerPrompt, and returns its ID once
// its card shows.
func newcomerCreatesTask(t *testing.T, e *env, b *tab) string {
	t.Helper()
	b.click("#new-task")
	b.until("the dialog", `document.querySelector('#create-task [name=title]')`)
	b.set("#create-task [name=title]", "Try the mock agent")
	b.set("#create-task [name=prompt]", newcomerPrompt)
	mock := e.profileOf("mock-agent").ID
	var label string
	b.js(fmt.Sprintf(`(() => { const s = document.querySelector('#create-task [name=agent_profile_id]'); s.value = %q; return s.selectedOptions[0].textContent; })()`, mock), &label)
	if !strings.HasPrefix(label, "Mock Agent — default") { // as docs/public/board.md names it
		t.Fatalf("mock-agent profile option: got %q", label)
	}
	var labels []string
	b.js(`[...document.querySelectorAll('#create-task [name=agent_profile_id] option')].map((o) => o.textContent)`, &labels)
	for _, l := range labels {
		if strings.Contains(l, "default (default)") {
			t.Fatalf("profile option %q says default twice", l)
		}
	}
	b.click("#create-task button.primary")
	b.until("the dialog closed", `!document.getElementById('create-task')`)
	// The toast that says so does not stand between the pointer and the
	// board: what is under its middle is the page, not the toast.
	b.until("the toast", `document.querySelector('#toast p')`)
	var underToast bool
	b.js(`(() => { const r = document.querySelector('#toast p').getBoundingClientRect();
		const el = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2); return !!el && !el.closest('#toast'); })()`, &underToast)
	if !underToast {
		t.Fatal("the toast takes the pointer: a card under it cannot be clicked or dragged")
	}
	b.until("the new card", `[...document.querySelectorAll('.card .title')].some((a) => a.textContent === 'Try the mock agent')`)
	return b.str(`[...document.querySelectorAll('.card')].find((c) => c.querySelector('.title').textContent === 'Try the mock agent').dataset.id`)
}

// checkPermissionOutcomeKept: the conversation's record of the permission
// request tells its outcome, live and after a reload (before: "Waiting
// for an operator" for ever).
func checkPermissionOutcomeKept(t *testing.T, b *tab, taskID string) {
	t.Helper()
	b.open("#/task/"+taskID, "task")
	permMsg := `[...document.querySelectorAll('.msg.type-permission')].map((m) => m.textContent).join('|')`
	b.until("the answered permission", permMsg+`.includes('Answered “Allow” by operator: Touch the repository')`)
	b.js(`location.reload(), true`, nil)
	b.until("the task page again", `document.body.dataset.view === 'task' && document.getElementById('main').dataset.ready === '1'`)
	b.until("the answered permission after a reload", permMsg+`.includes('Answered “Allow” by operator: Touch the repository')`)
	if got := b.str(permMsg); strings.Contains(got, "Waiting for an operator") {
		t.Fatalf("the permission still reads waiting after it was answered: %q", got)
	}
}

// TestBoardNewcomer is issue 14's "done when", all in the page: sign in,
// see the board, create a task with the mock agent, watch it work, approve
// its permission and answer its question, and see it reach Review.
func TestBoardNewcomer(t *testing.T) {
	e := newAgentEnv(t)
	b := newTab(t, e)
	b.signIn()
	taskID := newcomerCreatesTask(t, e, b)
	card := fmt.Sprintf(`.card[data-id=%q]`, taskID)
	b.until("the permission badge", fmt.Sprintf(`document.querySelector(%q + ' .badge[data-waiting=permissions]')`, card))
	b.until("the subtask's card", `[...document.querySelectorAll('.card .title')].some((a) => a.textContent === 'Follow-up from the mock agent')`)
	b.shot("board")

	b.click(card + " .title")
	b.until("the task page", fmt.Sprintf(`document.body.dataset.view === 'task' && location.hash === %q && document.getElementById('main').dataset.ready === '1'`, "#/task/"+taskID))
	b.until("the agent's greeting", `[...document.querySelectorAll('.msg.type-message')].some((m) => m.textContent.includes('Hello! I am the mock agent.'))`)
	b.until("the agent's plan", `document.querySelectorAll('.agent-plan li').length === 3`)
	// The plan panel does not say "No plan yet." beside the agent's plan.
	b.until("the working plan in the plan panel", `document.getElementById('plan-working') && !document.getElementById('plan-none')`)
	b.until("the permission on the page", `document.querySelector('#task-permissions .permission button[data-option=allow]')`)
	b.until("the subtask created", `[...document.querySelectorAll('.tool')].filter((x) => x.dataset.status === 'completed').length === 2`)
	b.shotPage("board-task")
	b.click("#task-permissions .permission button[data-option=allow]")
	b.until("the question on the page", `document.querySelector('#task-questions .question input[value=q1_opt1]')`)
	b.click("#task-questions .question input[value=q1_opt1]")
	b.click("#task-questions .question button.primary")
	b.until("the agent's thanks", `[...document.querySelectorAll('.msg.type-message')].some((m) => m.textContent.includes('Thanks, done.'))`)
	b.until("the task in review", `document.querySelector('.task-head .badge').textContent.includes('Review')`)
	// Not only its state: the seeded workflow moved the card itself, Backlog
	// → In Progress when the agent started → Review when its turn ended.
	steps := seededSteps(e)
	waitFor(t, func() bool { return stepOf(e, taskID) == steps["Review"].ID })
	for _, rec := range []string{"on_turn_start of Backlog, move_to_next: moved to In Progress",
		"on_turn_complete of In Progress, move_to_step: moved to Review"} {
		e.waitMessage(taskID, "status", rec)
	}
	b.open("#/", "board")
	b.until("the card in the Review column", fmt.Sprintf(`(document.querySelector(%q) || {closest: () => null}).closest('.column')?.dataset.step === %q`, card, steps["Review"].ID))
	var subtasks kanban.List[kanban.Task]
	e.dispatch(kanban.ActionTaskList, action.TaskListIn{ParentID: taskID}, &subtasks)
	if len(subtasks.Items) != 1 {
		t.Fatalf("subtasks: got %d, want the mock agent's one", len(subtasks.Items))
	}
	tc := e.waitMessage(taskID, "tool_call", "ask_user_question_kandev")
	if !strings.Contains(tc.Content, "Yes") || !strings.Contains(tc.Content, "completed") {
		t.Fatalf("the question's tool call did not return the page's answer: %s", tc.Content)
	}
	e.waitMessage(taskID, "message", "Permission granted: Touch the repository")

	checkPermissionOutcomeKept(t, b, taskID)
}

// TestBoardNewcomerStartsLater: a task created in the New task form with
// the mock agent's profile and "Start an agent on it now" unticked waits
// in Backlog with no agent; moved to In Progress from its card's Move
// menu, the seeded workflow starts an agent on it with the profile chosen
// in the form (before: the default profile, Claude Code), and the card
// goes on to Review by itself when the agent's turn ends.
func TestBoardNewcomerStartsLater(t *testing.T) {
	e := newAgentEnv(t)
	steps := seededSteps(e)
	b := newTab(t, e)
	b.signIn()
	b.click("#new-task")
	b.until("the dialog", `document.querySelector('#create-task [name=title]')`)
	b.set("#create-task [name=title]", "Start me later")
	b.set("#create-task [name=prompt]", "@say Started with the profile I chose.")
	mock := e.profileOf("mock-agent").ID
	b.set("#create-task [name=agent_profile_id]", mock)
	b.js(`(() => { document.querySelector('#create-task [name=start_agent]').checked = false; return true; })()`, nil)
	b.click("#create-task button.primary")
	b.until("the dialog closed", `!document.getElementById('create-task')`)
	b.until("the new card", `[...document.querySelectorAll('.card .title')].some((a) => a.textContent === 'Start me later')`)
	taskID := b.str(`[...document.querySelectorAll('.card')].find((c) => c.querySelector('.title').textContent === 'Start me later').dataset.id`)
	card := fmt.Sprintf(`.card[data-id=%q]`, taskID)
	if got := stepOf(e, taskID); got != steps["Backlog"].ID {
		t.Fatalf("the new task is on %s, want Backlog", got)
	}
	if n := dbStr(e, `SELECT COUNT(*) FROM task_sessions WHERE task_id = ?`, taskID); n != "0" {
		t.Fatalf("%s sessions before the move, want none", n)
	}

	b.click(card + " button.move")
	b.until("the move menu", `document.getElementById('movemenu')`)
	b.click(`#movemenu button:nth-child(1)`) // the first other step: In Progress
	e.waitMessage(taskID, "message", "Started with the profile I chose.")
	if got := dbStr(e, `SELECT agent_profile_id FROM task_sessions WHERE task_id = ?`, taskID); got != mock {
		t.Fatalf("the workflow started the agent with profile %s, want the mock agent's %s chosen in the form", got, mock)
	}
	b.until("the card in the Review column", fmt.Sprintf(`(document.querySelector(%q) || {closest: () => null}).closest('.column')?.dataset.step === %q`, card, steps["Review"].ID))
	b.until("its Review state", fmt.Sprintf(`document.querySelector(%q + ' .badge.state-REVIEW')`, card))
}

// TestBoardStoppedAgent: stopping a working agent from the task page
// leaves its task in its step (In Progress, where its turn took it) with
// the state Cancelled, and the state badge explains what the state means
// next to the column; before, the card read Review as if the agent had
// finished. Stopping an agent at rest after its turn keeps Review.
func TestBoardStoppedAgent(t *testing.T) {
	e := newAgentEnv(t)
	steps := seededSteps(e)
	b := newTab(t, e)
	b.signIn()
	task, sid := e.startMock("Stop me", "@sleep 60000", nil)
	e.waitState(sid, kanban.SessionRunning)
	waitFor(t, func() bool { return stepOf(e, task.ID) == steps["In Progress"].ID })
	b.open("#/task/"+task.ID, "task")
	b.until("the running agent", `document.querySelector('#session-info .badge.agent').textContent.includes('Running')`)
	b.click("#stop-agent")
	b.until("the cancelled state", `document.querySelector('.task-head .badge').textContent.includes('Cancelled')`)
	if got := b.str(`document.querySelector('.task-head .badge').title`); !strings.Contains(got, "stopped before it finished") || !strings.Contains(got, "column") {
		t.Fatalf("state badge explanation: got %q", got)
	}
	b.open("#/", "board")
	card := fmt.Sprintf(`.card[data-id=%q]`, task.ID)
	b.until("the cancelled card", fmt.Sprintf(`document.querySelector(%q + ' .badge.state-CANCELLED')`, card))
	if got := b.str(fmt.Sprintf(`document.querySelector(%q).closest('.column').dataset.step`, card)); got != steps["In Progress"].ID {
		t.Fatalf("the stopped task's card is in column %s, want In Progress", got)
	}
	if got := e.task(task.ID).State; got != kanban.TaskCancelled {
		t.Fatalf("stored state %s, want CANCELLED", got)
	}
}
