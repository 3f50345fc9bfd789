package app

import (
	"fmt"
	"strings"
	"testing"

	"github.com/kandev/kandev/apps/backend/internal/action"
	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// hostileName and hostileText are a file the agent writes to attack the
// board: markup in its path and in its content.
const (
	hostileName = `docs/<i>evil<i>.html`
	hostileText = `<img src=x onerror="window.__pwned=1"><script>window.__pwned=2</script>`
)

// TestBoardChangesTabReview: the mock agent writes files in its task's
// git worktree (@write); the task page's Changes tab lists them, shows
// the diff's lines, takes a comment on a line, sends the review (which
// reaches the agent as a prompt it answers by rewriting the line), shows
// the comment outdated after Refresh, resolves it, and shows a file of
// hostile markup as text.
func TestBoardChangesTabReview(t *testing.T) {
	t.Parallel()
	e, task := agentWroteFiles(t)
	b := newTab(t, e)
	b.signIn()
	b.open("#/task/"+task.ID, "task")
	b.click("#tab-changes")
	b.until("the changed files", `document.querySelectorAll('#panel-changes .file').length === 2`)
	if got := b.str(`document.querySelector('#panel-changes .repo-changes .hint').textContent`); got != "2 changed files · +4 −0" {
		t.Fatalf("repository totals: %q", got)
	}
	b.click(`#panel-changes .file[data-path="src/app.go"] .file-open`)
	line := `#diff-view tr.line.add[data-side=new][data-line="3"]`
	b.until("the diff's line", fmt.Sprintf(`(document.querySelector(%q) || {}).textContent?.includes('const Greeting = "hi"')`, line))
	commentOnRange(t, b)
	b.click(line + " .line-comment")
	b.until("the comment form", `document.querySelector('#diff-view .comment-form textarea')`)
	b.set("#diff-view .comment-form textarea", "@say board comment seen\n@write src/app.go package app\\n\\nconst Greeting = \"hello\"\\n\n@say rewritten")
	b.click("#diff-view .comment-form button.primary")
	b.until("the comment at its line", fmt.Sprintf(`(document.querySelector(%q).nextElementSibling || {}).querySelector?.('.review-comment[data-state=open]')`, line))
	b.until("the open count", `document.getElementById('review-open').textContent === '2 open comments'`)
	b.js(`document.querySelector('#diff-view .review-comment').scrollIntoView({block: 'end'})`, nil)
	b.shot("board-changes-review")
	b.click("#send-review")
	b.until("the review sent", `(document.getElementById('review-result') || {}).textContent === 'Sent 2 to the agent · 0 remaining'`)
	e.waitMessage(task.ID, "message", "board comment seen")
	checkBoardReviewPrompt(t, e.conversation(task.ID))
	// The agent rewrote the line it was told about: Refresh shows the new
	// line and the comment outdated, which can still be resolved.
	e.waitMessage(task.ID, "message", "rewritten")
	b.click("#changes-refresh")
	b.until("the comment outdated", fmt.Sprintf(`(document.querySelector(%q) || {}).textContent?.includes('"hello"') && document.querySelector('#diff-view .review-comment[data-state=outdated]')`, line))
	b.until("the outdated comment's Resolve", fmt.Sprintf(`document.querySelector(%q)`, line+" + tr .review-comment[data-state=outdated] .comment-state"))
	b.click(line + " + tr .review-comment .comment-state")
	b.until("the comment resolved", fmt.Sprintf(`document.querySelector(%q)`, line+" + tr .review-comment[data-state=resolved]"))
	var resolved kanban.List[kanban.ReviewComment]
	e.dispatch(kanban.ActionReviewCommentList, action.ReviewCommentListIn{TaskID: task.ID, State: kanban.CommentResolved}, &resolved)
	if len(resolved.Items) != 1 || resolved.Items[0].StartLine != 3 || resolved.Items[0].Side != kanban.SideNew || resolved.Items[0].SentAt == nil {
		t.Fatalf("resolved comments: %+v", resolved.Items)
	}
	checkHostileFileInert(t, b)
}

// commentOnRange comments on lines 1-2 of the open diff: the first line's
// number, then the second's with Shift.
func commentOnRange(t *testing.T, b *tab) {
	t.Helper()
	b.click(`#diff-view tr.line[data-side=new][data-line="1"] .line-comment`)
	b.js(`document.querySelector('#diff-view tr.line[data-side=new][data-line="2"] .line-comment').dispatchEvent(new MouseEvent('click', {shiftKey: true, bubbles: true}))`, nil)
	b.until("the range's form", `(document.querySelector('#diff-view .comment-form textarea') || {}).getAttribute?.('aria-label') === 'Comment on new lines 1–2'`)
	b.set("#diff-view .comment-form textarea", "Tidy these lines.")
	b.click("#diff-view .comment-form button.primary")
	b.until("the range comment", `(document.querySelector('#diff-view tr.line[data-line="2"] + tr .review-comment') || {}).textContent?.includes('lines 1–2')`)
}

// checkHostileFileInert opens the hostile file's diff: its path and its
// lines are text, nothing ran and no element came of them.
func checkHostileFileInert(t *testing.T, b *tab) {
	t.Helper()
	b.js(fmt.Sprintf(`[...document.querySelectorAll('#panel-changes .file')].find((li) => li.dataset.path === %q).querySelector('.file-open').click()`, hostileName), nil)
	b.until("the hostile diff", fmt.Sprintf(`(document.getElementById('diff-title') || {}).textContent === %q && document.querySelector('#diff-view tr.line.add')`, hostileName))
	var got struct {
		Pwned           any
		Scripts, Images int
		Line, File      string
	}
	b.js(fmt.Sprintf(`({Pwned: window.__pwned ?? null, Scripts: document.querySelectorAll('main script').length, Images: document.querySelectorAll('main img, main i').length,
		Line: document.querySelector('#diff-view tr.line.add td.text').textContent,
		File: [...document.querySelectorAll('#panel-changes .file')].find((li) => li.dataset.path === %q).querySelector('.file-open').textContent})`, hostileName), &got)
	if got.Pwned != nil || got.Scripts != 0 || got.Images != 0 {
		t.Fatalf("the hostile file's markup ran or became elements: %+v", got)
	}
	if got.Line != "+"+hostileText || got.File != hostileName {
		t.Fatalf("hostile file shown as %+v, want its path and line as text", got)
	}
}

// checkBoardReviewPrompt: the agent got one review prompt quoting the
// line commented on, with the comment.
func checkBoardReviewPrompt(t *testing.T, msgs []kanban.Message) {
	t.Helper()
	n := 0
	for _, m := range msgs {
		if m.Type == "prompt" && strings.Contains(m.Content, "left comments on lines of the diff") {
			n++
			if !strings.Contains(m.Content, "src/app.go, line 3") || !strings.Contains(m.Content, "src/app.go, lines 1-2") || !strings.Contains(m.Content, "> const Greeting = \"hi\"") ||
				!strings.Contains(m.Content, "@say board comment seen") {
				t.Fatalf("review prompt: %q", m.Content)
			}
		}
	}
	if n != 1 {
		t.Fatalf("review prompts: %d, want 1: %s", n, dumpConversation(msgs))
	}
}

// agentWroteFiles is a backend whose mock agent wrote src/app.go and a
// file of hostile markup in its task's git worktree and is now at rest.
func agentWroteFiles(t *testing.T) (*env, *kanban.Task) {
	repo := gitRepo(t)
	e := newAgentEnv(t)
	prompt := strings.Join([]string{
		`Write the app.`,
		`@write src/app.go package app\n\nconst Greeting = "hi"\n`,
		`@write ` + hostileName + ` ` + hostileText + `\n`,
		`@say edited`,
	}, "\n")
	task, sid := e.startMock("Changes task", prompt, map[string]any{"local_path": repo, "executor_profile_id": e.executorProfileNamed("exec-worktree")})
	e.waitState(sid, kanban.SessionIdle)
	e.waitMessage(task.ID, "message", "edited")
	return e, task
}

// TestBoardChangesPagesCommitsOldSide: a change of more files than a page
// is listed a page at a time (More files); a binary file is reported,
// not shown; the commits on the task branch
// show, a hostile subject as text; a deleted line takes a comment on the
// old side; side by side, the deleted line sits beside its replacement
// with its comment under them, and the new side takes a comment too.
func TestBoardChangesPagesCommitsOldSide(t *testing.T) {
	t.Parallel()
	repo := gitRepo(t)
	e := newAgentEnv(t)
	prompt := strings.Join([]string{
		`Rework the repository.`,
		`@write README.md # kandev\n`,
		`@sh git add README.md && git -c user.email=a@example.com -c user.name=a commit -q -m '<b>Rename</b> the readme'`,
		`@sh mkdir -p many && for i in $(seq 1 101); do echo $i > many/f$i.txt; done && printf 'a\000b' > blob.bin`,
		`@say edited`,
	}, "\n")
	task, sid := e.startMock("Paged changes", prompt, map[string]any{"local_path": repo, "executor_profile_id": e.executorProfileNamed("exec-worktree")})
	e.waitState(sid, kanban.SessionIdle)
	e.waitMessage(task.ID, "message", "edited")
	b := newTab(t, e)
	b.signIn()
	b.open("#/task/"+task.ID, "task")
	b.click("#tab-changes")
	b.until("the first page", `document.querySelectorAll('#panel-changes .file').length === 100 && document.querySelector('#panel-changes .more-files')`)
	b.click("#panel-changes .more-files")
	b.until("the second page", `document.querySelectorAll('#panel-changes .file').length === 103 && !document.querySelector('#panel-changes .more-files')`)
	b.js(`document.querySelector('#panel-changes details.commits').open = true`, nil)
	b.until("the commit", `(document.querySelector('#panel-changes .commit') || {}).textContent?.includes('<b>Rename</b> the readme')`)
	if n := b.str(`String(document.querySelectorAll('#panel-changes b, #panel-changes .commit').length)`); n != "1" {
		t.Fatalf("commits and markup elements in the tab: %s, want the one commit and no <b>", n)
	}
	if got := b.str(`document.querySelector('#panel-changes .file[data-path="blob.bin"]').textContent`); !strings.Contains(got, "binary") {
		t.Fatalf("the binary file's row: %q", got)
	}
	b.click(`#panel-changes .file[data-path="blob.bin"] .file-open`)
	b.until("the binary file reported", `document.getElementById('diff-binary') && !document.querySelector('#diff-view tr.line')`)
	b.click(`#panel-changes .file[data-path="README.md"] .file-open`)
	del := `#diff-view tr.line.del[data-side=old][data-line="1"]`
	b.until("the deleted line", fmt.Sprintf(`(document.querySelector(%q) || {}).textContent?.includes('# repo')`, del))
	b.click(del + " .line-comment")
	b.set("#diff-view .comment-form textarea", "Why was the title removed?")
	b.click("#diff-view .comment-form button.primary")
	b.until("the comment at the deleted line", fmt.Sprintf(`(document.querySelector(%q).nextElementSibling || {}).querySelector?.('.review-comment[data-state=open]')`, del))
	var open kanban.List[kanban.ReviewComment]
	e.dispatch(kanban.ActionReviewCommentList, action.ReviewCommentListIn{TaskID: task.ID, State: kanban.CommentOpen}, &open)
	if len(open.Items) != 1 || open.Items[0].Side != kanban.SideOld || open.Items[0].StartLine != 1 || open.Items[0].AnchorText != "# repo" {
		t.Fatalf("open comments: %+v", open.Items)
	}
	sideBySide(t, e, b, task.ID)
}

// sideBySide: README.md's diff side by side, a comment on its new side,
// then unified again.
func sideBySide(t *testing.T, e *env, b *tab, taskID string) {
	t.Helper()
	b.click("#diff-mode")
	pair := `#diff-view table.split tr.line.split`
	b.until("the pair side by side", fmt.Sprintf(`(document.querySelector(%q + ' td.text.del') || {}).textContent?.includes('# repo') && `+
		`document.querySelector(%q + ' td.text.add').textContent.includes('# kandev') && document.querySelector(%q + ' + tr.comment-row .review-comment')`, pair, pair, pair))
	b.click(`#diff-view table.split td.num[data-side=new][data-line="1"] .line-comment`)
	b.set("#diff-view .comment-form textarea", "A better title.")
	b.click("#diff-view .comment-form button.primary")
	b.until("both comments under the pair, still side by side", fmt.Sprintf(`document.querySelectorAll(%q + ' ~ tr.comment-row .review-comment').length === 2`, pair))
	var open kanban.List[kanban.ReviewComment]
	e.dispatch(kanban.ActionReviewCommentList, action.ReviewCommentListIn{TaskID: taskID, State: kanban.CommentOpen}, &open)
	if len(open.Items) != 2 || open.Items[1].Side != kanban.SideNew || open.Items[1].StartLine != 1 || open.Items[1].AnchorText != "# kandev" {
		t.Fatalf("open comments: %+v", open.Items)
	}
	b.click("#diff-mode")
	b.until("unified again", `!document.querySelector('#diff-view table.split') && document.querySelector('#diff-view tr.line.add[data-side=new][data-line="1"]')`)
}
