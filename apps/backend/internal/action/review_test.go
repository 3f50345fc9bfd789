package action

import (
	"context"
	"strings"
	"testing"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

func (f *changesFixture) comment(in map[string]any) *kanban.ReviewComment {
	f.t.Helper()
	in["task_id"] = f.task.ID
	c := call[kanban.ReviewComment](f.harness, operator, kanban.ActionReviewCommentCreate, in)
	return &c
}

func (f *changesFixture) comments(state kanban.ReviewCommentState) map[string]kanban.ReviewComment {
	f.t.Helper()
	in := map[string]any{"task_id": f.task.ID}
	if state != "" {
		in["state"] = string(state)
	}
	l := call[kanban.List[kanban.ReviewComment]](f.harness, operator, kanban.ActionReviewCommentList, in)
	out := map[string]kanban.ReviewComment{}
	for _, c := range l.Items {
		out[c.ID] = c
	}
	return out
}

// reviewed is agentEdits with four comments: on a changed line, on the
// old side of a range, on a renamed file and on a deleted file.
func reviewed(t *testing.T) (f *changesFixture, onHello, onOld, onRename, onDeleted *kanban.ReviewComment) {
	f = agentEdits(t)
	onHello = f.comment(map[string]any{"path": "main.go", "start_line": 4, "body": "@say got the review\nSay hello to the world."})
	if onHello.State != kanban.CommentOpen || onHello.AnchorText != "\tprintln(\"hello\")" || len(onHello.AnchorCommit) != 40 || onHello.Side != kanban.SideNew || onHello.EndLine != 4 {
		t.Fatalf("comment %+v", onHello)
	}
	onOld = f.comment(map[string]any{"path": "main.go", "start_line": 3, "end_line": 4, "side": "old", "body": "Why was this removed?"})
	if onOld.AnchorText != "func main() {\n\tprintln(\"hi\")" {
		t.Fatalf("old-side anchor %q", onOld.AnchorText)
	}
	onRename = f.comment(map[string]any{"path": "new.txt", "start_line": 1, "body": "Keep the old name."})
	onDeleted = f.comment(map[string]any{"path": "gone.txt", "start_line": 1, "side": "old", "body": "Still needed."})
	return f, onHello, onOld, onRename, onDeleted
}

// TestReviewCommentRefusals: lines off the diff, a deleted file's new
// side, a binary or too-large file, a bad side or body, a file without
// changes: refused, nothing stored.
func TestReviewCommentRefusals(t *testing.T) {
	t.Parallel()
	f, _, _, _, _ := reviewed(t)
	for _, bad := range []map[string]any{
		{"path": "main.go", "start_line": 40, "body": "past the end"},
		{"path": "main.go", "start_line": 4, "end_line": 3, "body": "backwards"},
		{"path": "gone.txt", "start_line": 1, "body": "a deleted file has no new side"},
		{"path": "logo.png", "start_line": 1, "body": "binary"},
		{"path": "dump.bin", "start_line": 1, "body": "too large"},
		{"path": "main.go", "start_line": 4, "side": "RIGHT", "body": "unknown side"},
		{"path": "main.go", "start_line": 4, "body": ""},
	} {
		bad["task_id"] = f.task.ID
		f.refuse(operator, kanban.ActionReviewCommentCreate, bad, kanban.CodeValidation)
	}
	f.refuse(operator, kanban.ActionReviewCommentCreate, map[string]any{"task_id": f.task.ID, "path": "README.md", "start_line": 1, "body": "no change"}, kanban.CodeNotFound)
	if n := f.count("task_review_comments"); n != 4 {
		t.Fatalf("refusals stored comments: %d rows, want 4", n)
	}
}

// TestReviewThroughRegistry: comments outdated when their lines change;
// resolved by the operator; "send review" delivers the open ones as one
// prompt on the task's live session and marks them sent, in one write.
func TestReviewThroughRegistry(t *testing.T) {
	t.Parallel()
	f, onHello, onOld, onRename, onDeleted := reviewed(t)
	// The agent rewrites the line the first comment is on: it is outdated
	// when listed; the others are not.
	f.write("main.go", "package main\n\nfunc main() {\n\tprintln(\"hello, world\")\n}\n")
	all := f.comments("")
	if all[onHello.ID].State != kanban.CommentOutdated || all[onOld.ID].State != kanban.CommentOpen || all[onRename.ID].State != kanban.CommentOpen {
		t.Fatalf("after the edit: %+v", all)
	}
	// A new comment on the new line; the operator resolves another.
	onWorld := f.comment(map[string]any{"path": "main.go", "start_line": 4, "body": "@say got the review\nUse a constant."})
	resolved := call[kanban.ReviewComment](f.harness, operator, kanban.ActionReviewCommentUpdate, map[string]any{"id": onDeleted.ID, "state": "resolved"})
	if resolved.State != kanban.CommentResolved || resolved.ResolvedAt == nil {
		t.Fatalf("resolved %+v", resolved)
	}
	// No live session: refused, nothing sent.
	f.refuse(operator, kanban.ActionReviewSend, map[string]any{"task_id": f.task.ID}, kanban.CodeConflict)
	if open := f.comments(kanban.CommentOpen); len(open) != 3 {
		t.Fatalf("open after a refused send: %d, want 3", len(open))
	}
	sess := f.session(f.task, kanban.ModeTask)
	msgsBefore := f.count("session_messages")
	out := call[ReviewSendOut](f.harness, operator, kanban.ActionReviewSend, map[string]any{"task_id": f.task.ID})
	if len(out.Sent) != 3 || out.SessionID != sess.SessionID || out.Remaining != 0 || out.Outdated != 0 || out.Message == nil || out.Message.Type != "prompt" {
		t.Fatalf("send: %+v", out)
	}
	if n := f.count("session_messages"); n != msgsBefore+1 {
		t.Fatalf("send wrote %d messages, want one prompt", n-msgsBefore)
	}
	checkReviewPrompt(t, out.Message.Content)
	if got := f.comments(kanban.CommentSent); len(got) != 3 || got[onWorld.ID].SentAt == nil {
		t.Fatalf("sent comments %+v", got)
	}
	if !f.pub.has(SessionTopic(sess.SessionID), kanban.EventSessionMessage.Name()) {
		t.Fatal("the session was not told about its new prompt")
	}
	afterSend(t, f, onRename, onWorld)
}

// checkReviewPrompt: the prompt holds the open comments with their
// places and lines, and not the outdated or resolved ones.
func checkReviewPrompt(t *testing.T, p string) {
	t.Helper()
	for _, s := range []string{"main.go, line 4", "Use a constant.", "> \tprintln(\"hello, world\")", "main.go, lines 3-4 of the original file",
		"Why was this removed?", "new.txt, line 1", "Keep the old name."} {
		if !strings.Contains(p, s) {
			t.Errorf("the prompt lacks %q:\n%s", s, p)
		}
	}
	for _, s := range []string{"Say hello to the world.", "Still needed."} {
		if strings.Contains(p, s) {
			t.Errorf("the prompt holds an outdated or resolved comment (%q)", s)
		}
	}
}

// afterSend: nothing open, so a second send is refused; a sent comment
// whose lines change becomes outdated too; a comment is deleted.
func afterSend(t *testing.T, f *changesFixture, onRename, onWorld *kanban.ReviewComment) {
	t.Helper()
	f.refuse(operator, kanban.ActionReviewSend, map[string]any{"task_id": f.task.ID}, kanban.CodeConflict)
	f.write("new.txt", "renamed and edited\n")
	if got := f.comments(""); got[onRename.ID].State != kanban.CommentOutdated || got[onWorld.ID].State != kanban.CommentSent {
		t.Fatalf("after editing new.txt: %+v", got)
	}
	call[Deleted](f.harness, operator, kanban.ActionReviewCommentDelete, map[string]any{"id": onRename.ID})
	f.refuse(operator, kanban.ActionReviewCommentDelete, map[string]any{"id": onRename.ID}, kanban.CodeNotFound)
	if _, err := f.st.GetReviewComment(context.Background(), onRename.ID); kanban.ErrorCode(err) != kanban.CodeNotFound {
		t.Fatalf("deleted comment: %v", err)
	}
}

// TestReviewPromptBounds: a review longer than one prompt sends what fits,
// oldest first, and leaves the rest open (Remaining); a comment's quoted
// lines are bounded.
func TestReviewPromptBounds(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("x", kanban.MaxReviewCommentLen)
	var cs []kanban.ReviewComment
	for i := range 30 {
		cs = append(cs, kanban.ReviewComment{ID: string(rune('a' + i)), Path: "a.go", StartLine: 1, EndLine: 40, Side: kanban.SideNew,
			Body: long, AnchorText: strings.Repeat("line\n", 39) + "line", RepositoryID: "r"})
	}
	p, n := reviewPrompt(cs, map[string]string{"r": "app"})
	if n < 1 || n >= len(cs) || len(p) > kanban.MaxPromptLen {
		t.Fatalf("got %d comments in %d bytes, want some but not all within %d", n, len(p), kanban.MaxPromptLen)
	}
	if strings.Count(p, "> line\n") != n*reviewExcerptLines || !strings.Contains(p, "> …\n") {
		t.Fatalf("excerpts are not bounded to %d lines", reviewExcerptLines)
	}
}
