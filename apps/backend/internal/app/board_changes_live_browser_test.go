package app

import (
	"fmt"
	"strings"
	"testing"

	"github.com/kandev/kandev/apps/backend/internal/action"
	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// TestBoardChangesLiveRefresh: with the Changes tab open on a long diff,
// scrolled down and a comment being written, the agent's next turn edits
// another file; when the turn ends the tab reads the changes again by
// itself (once, not a poll), listing the new file with the scroll
// position and the comment form as they were; the diff is read again
// once the form is cancelled.
func TestBoardChangesLiveRefresh(t *testing.T) {
	t.Parallel()
	repo := gitRepo(t)
	e := newAgentEnv(t)
	var long strings.Builder
	for i := range 150 {
		fmt.Fprintf(&long, `// line %d\n`, i)
	}
	task, sid := e.startMock("Live changes", "Write.\n@write src/long.go package long\\n"+long.String()+"\n@say edited",
		map[string]any{"local_path": repo, "executor_profile_id": e.executorProfileNamed("exec-worktree")})
	e.waitState(sid, kanban.SessionIdle)
	e.waitMessage(task.ID, "message", "edited")
	b := newTab(t, e)
	b.signIn()
	b.open("#/task/"+task.ID, "task")
	b.click("#tab-changes")
	b.until("the changed file", `document.querySelector('#panel-changes .file[data-path="src/long.go"]')`)
	b.click(`#panel-changes .file[data-path="src/long.go"] .file-open`)
	line := `#diff-view tr.line.add[data-side=new][data-line="120"]`
	b.until("the diff", fmt.Sprintf(`document.querySelector(%q)`, line))
	b.click(line + " .line-comment")
	b.set("#diff-view .comment-form textarea", "half-written comment")
	b.js(`(() => { const f = document.querySelector('#diff-view .comment-form'); f.scrollIntoView({block: 'center'});
		window.__y = window.scrollY; window.__top = f.getBoundingClientRect().top;
		window.__reads = 0; const send = WebSocket.prototype.send;
		WebSocket.prototype.send = function (d) { if (String(d).includes('"task.changes.summary"')) window.__reads += 1; return send.call(this, d); };
		return window.__y; })()`, nil)
	if y := b.str(`String(window.__y)`); y == "0" {
		t.Fatal("the page did not scroll: the test would not see a jump")
	}

	e.dispatch(kanban.ActionTaskMessage, action.TaskMessageIn{TaskID: task.ID, Prompt: "@write src/more.go package more\n@say more"}, nil)
	e.waitMessage(task.ID, "message", "more")
	b.until("the new file listed without a Refresh", `document.querySelector('#panel-changes .file[data-path="src/more.go"]')`)
	b.until("the diff marked for a read after the form", `document.getElementById('diff-stale')`)
	var kept struct {
		Text          string
		Top, Top0, DY float64
		Reads         int
	}
	b.js(`(() => { const f = document.querySelector('#diff-view .comment-form');
		return {Text: f.querySelector('textarea').value, Top: f.getBoundingClientRect().top, Top0: window.__top, DY: window.scrollY - window.__y, Reads: window.__reads}; })()`, &kept)
	// The list above grew by a file: the page scrolled by as much, so the
	// form stays where it was on screen.
	if kept.Text != "half-written comment" || kept.Top != kept.Top0 || kept.DY <= 0 || kept.Reads != 1 {
		t.Fatalf("after the live refresh: %+v, want the comment kept at the same place on screen and one read", kept)
	}
	b.click("#diff-view .comment-form button[type=button]")
	b.until("the diff read again", `!document.getElementById('diff-stale') && !document.querySelector('#diff-view .comment-form') && document.querySelector('#diff-view tr.line[data-line="120"]')`)
}
