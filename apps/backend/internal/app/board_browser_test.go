package app

import (
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/kandev/kandev/apps/backend/internal/action"
	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// The board's browser tests run in one headless Chromium (Debian's),
// each on its own backend and tab. They are not parallel: the tabs share
// two cores with the rest of the suite.

// TestBoardSignIn: a wrong token is refused on the sign-in page; the
// operator token opens the seeded board; no script can read the token or
// the cookie, and neither is in the URL or page storage.
func TestBoardSignIn(t *testing.T) {
	e := newEnv(t)
	b := newTab(t, e)
	b.do(chromedp.Navigate(e.url + "/"))
	b.until("the sign-in form", `document.getElementById('token')`)
	b.shot("board-sign-in")
	b.set("#token", "not-the-token")
	b.click("button[type=submit]")
	b.until("the refusal", `document.getElementById('token-error')`)
	// The refusal names a command that works in a fresh checkout (before:
	// "Run kandev token", but make run puts no kandev on PATH); the
	// getting-started e2e test runs it.
	if got := b.str(`document.getElementById('token-error').textContent`); !strings.Contains(got, "not the operator token") ||
		!strings.Contains(got, "run apps/backend/bin/kandev token in your Kandev checkout") {
		t.Fatalf("refusal: got %q", got)
	}
	// One warning sign, drawn by the stylesheet (before: one in the page
	// and one from the stylesheet, "⚠ ⚠").
	var signs int
	b.js(`(() => { const el = document.getElementById('token-error');
		return (el.textContent.match(/⚠/g) || []).length + (getComputedStyle(el, '::before').content.match(/⚠/g) || []).length; })()`, &signs)
	if signs != 1 {
		t.Fatalf("the refusal shows %d warning signs, want 1", signs)
	}
	if got := b.str(`document.body.innerText`); strings.Contains(got, "not-the-token") {
		t.Fatal("the refused token is echoed in the page")
	}
	b.signIn()
	var cols []string
	b.js(`[...document.querySelectorAll('.column h2')].map((h) => h.textContent)`, &cols)
	if strings.Join(cols, ",") != "Backlog,In Progress,Review,Done" {
		t.Fatalf("columns: got %v, want the seeded Kanban steps", cols)
	}
	// The empty board says how to get a first task (before: nothing).
	b.until("the empty-board hint", `!document.getElementById('empty-board').hidden`)
	if got := b.str(`document.getElementById('empty-board').textContent`); !strings.Contains(got, "+ New task") || !strings.Contains(got, "Mock Agent") {
		t.Fatalf("empty-board hint: got %q", got)
	}
	var leaks struct {
		Cookie, URL string
		Storage     int
	}
	b.js(`({Cookie: document.cookie, URL: location.href, Storage: localStorage.length + sessionStorage.length})`, &leaks)
	if leaks.Cookie != "" || strings.Contains(leaks.URL, e.token) || leaks.Storage != 0 {
		t.Fatalf("script-visible credentials: got %+v, want no cookie, no token in the URL, empty storage", leaks)
	}
	b.click("form[action='/auth/sign-out'] button")
	b.until("the sign-in form after signing out", `document.getElementById('token')`)
}

// TestBoardLiveCreateOverMCP: a task created by an MCP client appears on
// an open board without a reload, in its step, with its badges.
func TestBoardLiveCreateOverMCP(t *testing.T) {
	e := newEnv(t)
	b := newTab(t, e)
	b.signIn()
	ext := e.operatorMCP()
	var out action.TaskCreateOut
	e.decode(e.call(ext, "create_task_kandev", `{"title":"Created over MCP","prompt":"hello","start_agent":true}`), &out)
	sel := fmt.Sprintf(`.card[data-id=%q]`, out.Task.ID)
	b.until("the new card", fmt.Sprintf(`document.querySelector(%q)`, sel))
	var card struct{ Step, Text string }
	b.js(fmt.Sprintf(`(() => { const c = document.querySelector(%q); return {Step: c.closest('.column').querySelector('h2').textContent, Text: c.innerText}; })()`, sel), &card)
	if card.Step != "Backlog" || !strings.Contains(card.Text, "Created over MCP") || !strings.Contains(card.Text, "Todo") {
		t.Fatalf("card: got %+v, want the task in Backlog with its state", card)
	}
	b.until("the agent badge", fmt.Sprintf(`document.querySelector(%q + ' .badge.agent')`, sel))
	b.until("the count", `document.querySelector('.column .wip').textContent.startsWith('1 task')`)
	b.until("the empty-board hint gone", `document.getElementById('empty-board').hidden`)
}

// TestBoardMove: a card dragged to another step moves there on the
// server; a move into a full step is refused with the server's reason and
// the card returns; the keyboard moves cards too.
func TestBoardMove(t *testing.T) {
	e := newEnv(t)
	steps := seededSteps(e)
	a := e.newTask("Drag me")
	full := e.newTask("Already in review")
	e.dispatch(kanban.ActionTaskMove, action.TaskMoveIn{TaskID: full.ID, WorkflowStepID: steps["Review"].ID}, nil)
	limit := 1
	e.dispatch(kanban.ActionWorkflowStepUpdate, action.StepUpdateIn{StepID: steps["Review"].ID, WIPLimit: &limit}, nil)
	b := newTab(t, e)
	b.signIn()
	card := fmt.Sprintf(`.card[data-id=%q]`, a.ID)
	b.drag(card, fmt.Sprintf(`.column[data-step=%q] .cards`, steps["In Progress"].ID))
	waitFor(t, func() bool { return stepOf(e, a.ID) == steps["In Progress"].ID })
	b.until("the card in In Progress", fmt.Sprintf(`document.querySelector(%q).closest('.column').dataset.step === %q`, card, steps["In Progress"].ID))

	b.drag(card, fmt.Sprintf(`.column[data-step=%q] .cards`, steps["Review"].ID))
	b.until("the refusal", `!document.getElementById('board-error').hidden`)
	msg := b.str(`document.getElementById('board-error').textContent`)
	if !strings.Contains(msg, "Could not move") || !strings.Contains(strings.ToLower(msg), "wip") {
		t.Fatalf("refusal: got %q, want the server's WIP-limit reason", msg)
	}
	b.until("the card back in In Progress", fmt.Sprintf(`document.querySelector(%q).closest('.column').dataset.step === %q`, card, steps["In Progress"].ID))
	if got := stepOf(e, a.ID); got != steps["In Progress"].ID {
		t.Fatalf("refused move changed the task's step to %s", got)
	}
	b.shot("board-refused-move")

	b.js(fmt.Sprintf(`document.querySelector(%q).focus()`, card), nil)
	b.do(keyShift("ArrowRight"))
	waitFor(t, func() bool { return stepOf(e, a.ID) == steps["Review"].ID || !b.boardErrorHidden() })
	// Review is full: the keyboard move is refused like the drag.
	if got := stepOf(e, a.ID); got != steps["In Progress"].ID {
		t.Fatalf("keyboard move into a full step: task moved to %s", got)
	}
	b.js(fmt.Sprintf(`document.querySelector(%q).focus()`, card), nil)
	b.do(keyShift("ArrowLeft"))
	waitFor(t, func() bool { return stepOf(e, a.ID) == steps["Backlog"].ID })
}

func (b *tab) boardErrorHidden() bool {
	var hidden bool
	b.js(`document.getElementById('board-error').hidden`, &hidden)
	return hidden
}

func seededSteps(e *env) map[string]kanban.WorkflowStep {
	var wfs kanban.List[kanban.Workflow]
	e.dispatch(kanban.ActionWorkflowList, action.WorkflowListIn{WorkspaceID: e.workspaceID()}, &wfs)
	var steps kanban.List[kanban.WorkflowStep]
	e.dispatch(kanban.ActionWorkflowStepList, action.StepListIn{WorkflowID: wfs.Items[0].ID}, &steps)
	out := map[string]kanban.WorkflowStep{}
	for _, s := range steps.Items {
		out[s.Name] = s
	}
	return out
}

func stepOf(e *env, taskID string) string {
	return dbStr(e, `SELECT workflow_step_id FROM tasks WHERE id = ?`, taskID)
}
