package app

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/kandev/kandev/apps/backend/internal/action"
	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// TestBoardCreateTaskForm: the server's validation errors appear next to
// the fields they name and nothing is created; a valid form creates the
// task and its card appears.
func TestBoardCreateTaskForm(t *testing.T) {
	e := newEnv(t)
	b := newTab(t, e)
	b.signIn()
	b.click("#new-task")
	b.until("the dialog", `document.querySelector('#create-task [name=title]')`)
	b.click("#create-task button.primary")
	b.until("the title error", `!document.querySelector('#create-task [data-field=title] .field-error').hidden`)
	if got := b.str(`document.querySelector('#create-task [data-field=title] .field-error').textContent`); got != "invalid arguments for create_task_kandev: /title: shorter than 1 characters (minLength)" {
		t.Fatalf("empty title: got %q", got)
	}
	b.set("#create-task [name=title]", strings.Repeat("x", 61))
	b.click("#create-task button.primary")
	b.until("the length error", `document.querySelector('#create-task [data-field=title] .field-error').textContent.includes('longer than 60')`)
	var invalid string
	b.js(`document.querySelector('#create-task [name=title]').getAttribute('aria-invalid')`, &invalid)
	if invalid != "true" {
		t.Fatalf("aria-invalid: got %q, want true", invalid)
	}
	b.shot("board-create-task-errors")
	if n := dbStr(e, `SELECT COUNT(*) FROM tasks`); n != "0" {
		t.Fatalf("refused forms wrote %s tasks", n)
	}
	b.set("#create-task [name=title]", "Write the release notes")
	b.set("#create-task [name=prompt]", "Summarise **what changed**.")
	b.click("#create-task [name=start_agent]")
	b.click("#create-task button.primary")
	b.until("the dialog closed", `!document.getElementById('create-task')`)
	b.until("the new card", `[...document.querySelectorAll('.card .title')].some((a) => a.textContent === 'Write the release notes')`)
	if got := dbStr(e, `SELECT COUNT(*) FROM task_sessions`); got != "0" {
		t.Fatalf("start agent unticked: got %s sessions, want 0", got)
	}
}

// TestBoardAnswersQuestion: a waiting ask_user_question_kandev call is
// badged on the board, answered in the page, and returns that answer;
// a second answer that loses is told so.
func TestBoardAnswersQuestion(t *testing.T) {
	e := newEnv(t)
	s := e.sessionMCP(kanban.ModeTask, "")
	b := newTab(t, e)
	b.signIn()
	done := ask(e, s)
	b.until("the waiting badge", fmt.Sprintf(`document.querySelector('.card[data-id=%q] .badge.waiting')`, s.TaskID))
	b.until("the question count", `document.getElementById('questions-count').textContent === '1'`)
	b.open("#/questions", "questions")
	b.until("the question", `document.querySelector('.question fieldset')`)
	b.shot("board-question")
	b.click(".question fieldset:nth-of-type(1) input[value=sqlite]")
	b.set(".question fieldset:nth-of-type(2) input[type=text]", "kandev-next")
	b.click(".question button.primary")
	out := <-done
	if out.err != nil {
		t.Fatal(out.err)
	}
	want := []kanban.Answer{{QuestionID: "db", SelectedOptions: []string{"sqlite"}}, {QuestionID: "name", CustomText: "kandev-next"}}
	if fmt.Sprint(out.answers) != fmt.Sprint(want) {
		t.Fatalf("answers: got %+v, want %+v", out.answers, want)
	}
	b.until("the confirmation", `document.querySelector('.question .notice').textContent.includes('Answer sent')`)

	// A second question answered elsewhere first: the page's answer loses.
	done = ask(e, s)
	b.until("the second question", `document.querySelectorAll('.question').length === 2`)
	var qs kanban.List[kanban.Question]
	e.dispatch(kanban.ActionQuestionList, action.QuestionListIn{State: kanban.QuestionPending}, &qs)
	// Stop this tab hearing about the other answer, so it submits its own.
	b.js(`import('/app/api.js').then((m) => m.api.unsubscribe(...m.api.topics))`, nil)
	e.dispatch(kanban.ActionQuestionAnswer, action.QuestionAnswerIn{PendingID: qs.Items[0].ID, Answers: []kanban.Answer{{QuestionID: "db", SelectedOptions: []string{"pg"}}, {QuestionID: "name", SelectedOptions: []string{"kandev"}}}}, nil)
	if out := <-done; out.err != nil || out.answers[0].SelectedOptions[0] != "pg" {
		t.Fatalf("second ask: got %+v, want the other operator's answer", out)
	}
	second := fmt.Sprintf(`.question[data-id=%q]`, qs.Items[0].ID)
	b.click(second + " fieldset:nth-of-type(1) input[value=sqlite]")
	b.click(second + " fieldset:nth-of-type(2) input[value=other]")
	b.click(second + " button.primary")
	b.until("the losing notice", fmt.Sprintf(`(document.querySelector(%q + ' .notice.warn') || {}).textContent?.includes('Someone answered first')`, second))
}

// TestBoardTaskPageModeSwitch: the task page shows the session and its
// conversation; switching the mode there reaches the connected kandev mcp
// as exactly one tools/list_changed.
func TestBoardTaskPageModeSwitch(t *testing.T) {
	e := newEnv(t)
	s := e.sessionMCP(kanban.ModeTask, "")
	notes := &noteLog{}
	s.Client.OnNotification(notes.add)
	e.dispatch(kanban.ActionTaskMessage, action.TaskMessageIn{TaskID: s.TaskID, Prompt: "Please **also** update the docs"}, nil)
	b := newTab(t, e)
	b.signIn()
	b.open("#/task/"+s.TaskID, "task")
	b.until("the conversation", `document.querySelector('.conversation .msg strong')`)
	if got := b.str(`document.querySelector('.conversation').innerText`); !strings.Contains(got, "also") {
		t.Fatalf("conversation: got %q, want the operator's message", got)
	}
	b.until("the attached session", `document.getElementById('session-info').textContent.includes('Tools connected')`)
	b.js(`(() => { const s = document.getElementById('session-mode'); s.value = 'config'; s.dispatchEvent(new Event('change')); })()`, nil)
	waitFor(t, func() bool { return s.MCP.Server().Profile().Mode == kanban.ModeConfig })
	s.MCP.Server().MCP().SendNotificationToAllClients("test/sentinel", nil)
	waitFor(t, func() bool { return notes.count("test/sentinel") == 1 })
	if n := notes.count("notifications/tools/list_changed"); n != 1 {
		t.Fatalf("list_changed notifications: got %d, want 1", n)
	}
	if got := dbStr(e, `SELECT mcp_mode FROM task_sessions WHERE id = ?`, s.ID); got != "config" {
		t.Fatalf("stored mode: got %s, want config", got)
	}
}

// TestBoardHandSessionDetached: a session made by hand reads Running with
// its tools connected while its kandev mcp is attached; when the client
// goes away the page and the card say Not connected, live and after a
// reload (before: "Running · Tools not connected" for ever).
func TestBoardHandSessionDetached(t *testing.T) {
	e := newEnv(t)
	s := e.sessionMCP(kanban.ModeTask, "")
	b := newTab(t, e)
	b.signIn()
	b.open("#/task/"+s.TaskID, "task")
	info := `document.getElementById('session-info').textContent`
	b.until("the attached session", info+`.includes('Tools connected') && `+info+`.includes('Running')`)
	s.MCP.Close()
	b.until("the detached session", info+`.includes('Not connected') && `+info+`.includes('Tools not connected')`)
	if got := b.str(info); strings.Contains(got, "Running") {
		t.Fatalf("session info after its client went away: %q", got)
	}
	b.open("#/", "board")
	card := fmt.Sprintf(`.card[data-id=%q]`, s.TaskID)
	b.until("the card's agent badge", fmt.Sprintf(`(document.querySelector(%q + ' .badge.agent') || {}).textContent?.includes('Not connected')`, card))
}

// TestBoardRendersInert: a task title, a prompt and an agent message
// holding <script>, an event-handler attribute and javascript: links show
// as text; nothing runs and no such link is live.
func TestBoardRendersInert(t *testing.T) {
	e := newEnv(t)
	hostile := `<script>window.__pwned=1</script><img src=x onerror="window.__pwned=2">`
	var out action.TaskCreateOut
	e.dispatch(kanban.ActionTaskCreate, action.TaskCreateIn{Title: "<script>window.__pwned=3</script>", Prompt: hostile + " [click](javascript:window.__pwned=4)"}, &out)
	_, err := e.b.store.AppendMessage(context.Background(), kanban.Message{SessionID: out.SessionID, TaskID: out.Task.ID, Author: "agent", Type: "message",
		Content: "Done. " + hostile + "\n\n[open](javascript:window.__pwned=5) and [docs](https://example.com/docs) <a href=\"javascript:window.__pwned=6\">x</a>"})
	if err != nil {
		t.Fatal(err)
	}
	b := newTab(t, e)
	b.signIn()
	b.until("the card", `document.querySelector('.card .title')`)
	if got := b.str(`document.querySelector('.card .title').textContent`); got != "<script>window.__pwned=3</script>" {
		t.Fatalf("card title: got %q, want the literal text", got)
	}
	b.open("#/task/"+out.Task.ID, "task")
	b.until("the agent message", `document.querySelector('.msg.author-agent')`)
	var got struct {
		Pwned           any
		Scripts, Images int
		Hrefs           []string
		Text            string
	}
	b.js(`({Pwned: window.__pwned ?? null, Scripts: document.querySelectorAll('main script').length, Images: document.querySelectorAll('main img').length,
		Hrefs: [...document.querySelectorAll('main .md a')].map((a) => a.getAttribute('href')), Text: document.querySelector('.msg.author-agent').innerText})`, &got)
	if got.Pwned != nil || got.Scripts != 0 || got.Images != 0 {
		t.Fatalf("hostile markup ran or became elements: %+v", got)
	}
	for _, h := range got.Hrefs {
		if !strings.HasPrefix(h, "https://") {
			t.Fatalf("live link %q, want only the https one", h)
		}
	}
	if len(got.Hrefs) != 1 || !strings.Contains(got.Text, "<script>") || !strings.Contains(got.Text, "open") {
		t.Fatalf("agent message: got %+v, want the markup as text and one live https link", got)
	}
}

// TestBoardPhone: at 390×844 the board stacks its columns without
// horizontal scrolling, and the Move menu moves a card without a drag.
func TestBoardPhone(t *testing.T) {
	e := newEnv(t)
	steps := seededSteps(e)
	a := e.newTask("On the phone")
	b := newTab(t, e)
	b.do(chromedp.EmulateViewport(390, 844, chromedp.EmulateMobile))
	b.signIn()
	var layout struct{ ScrollWidth, Width, Columns, Stacked int }
	b.js(`(() => { const cols = [...document.querySelectorAll('.column')]; return {ScrollWidth: document.documentElement.scrollWidth, Width: window.innerWidth,
		Columns: cols.length, Stacked: cols.filter((c) => c.getBoundingClientRect().width <= window.innerWidth).length}; })()`, &layout)
	if layout.ScrollWidth > layout.Width || layout.Columns != 4 || layout.Stacked != 4 {
		t.Fatalf("phone layout: got %+v, want 4 stacked columns and no horizontal scroll", layout)
	}
	b.shot("board-phone")
	b.click(fmt.Sprintf(`.card[data-id=%q] button.move`, a.ID))
	b.until("the move menu", `document.getElementById('movemenu')`)
	b.js(`[...document.querySelectorAll('#movemenu button')].find((x) => x.textContent === 'Move to Done').click()`, nil)
	waitFor(t, func() bool { return stepOf(e, a.ID) == steps["Done"].ID })
}
