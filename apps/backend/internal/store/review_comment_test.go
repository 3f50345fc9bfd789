package store

import (
	"context"
	"strings"
	"testing"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

func (f prFixture) comment(path string, line int) kanban.ReviewComment {
	return kanban.ReviewComment{TaskID: f.task.ID, RepositoryID: f.repo.ID, Path: path, StartLine: line, EndLine: line + 1,
		Side: kanban.SideNew, Body: "Rename this.", AnchorCommit: shaA, AnchorText: "func login() {\n\treturn nil", Author: "operator"}
}

func TestReviewComments(t *testing.T) {
	t.Parallel()
	bothEngines(t, func(t *testing.T) {
		t.Parallel()
		s := newTestStore(t)
		ctx := context.Background()
		f := newPRFixture(t, s)
		c := must(s.CreateReviewComment(ctx, f.comment("src/login.go", 10)))(t)
		if c.ID == "" || c.State != kanban.CommentOpen || c.SentAt != nil || c.AnchorText != "func login() {\n\treturn nil" {
			t.Fatalf("created %+v", c)
		}
		if got := must(s.GetReviewComment(ctx, c.ID))(t); got.Path != "src/login.go" || got.EndLine != 11 || got.Side != kanban.SideNew || !got.CreatedAt.Equal(c.CreatedAt) {
			t.Fatalf("read back %+v", got)
		}

		checkReviewCommentRefusals(t, s, f)

		c2 := must(s.CreateReviewComment(ctx, f.comment("src/login.go", 40)))(t)
		c3 := must(s.CreateReviewComment(ctx, f.comment("README.md", 1)))(t)
		page := must(s.ListReviewComments(ctx, kanban.ReviewCommentFilter{TaskID: f.task.ID}, kanban.Page{Limit: 2}))(t)
		rest := must(s.ListReviewComments(ctx, kanban.ReviewCommentFilter{TaskID: f.task.ID}, kanban.Page{Limit: 2, Cursor: page.NextCursor}))(t)
		if len(page.Items) != 2 || page.Items[0].ID != c.ID || len(rest.Items) != 1 || rest.Items[0].ID != c3.ID || rest.NextCursor != "" {
			t.Fatalf("pages: %d then %d", len(page.Items), len(rest.Items))
		}
		if byPath := must(s.ListReviewComments(ctx, kanban.ReviewCommentFilter{TaskID: f.task.ID, Path: "src/login.go"}, kanban.Page{}))(t); len(byPath.Items) != 2 {
			t.Fatalf("by path: %d", len(byPath.Items))
		}
		if _, err := s.ListReviewComments(ctx, kanban.ReviewCommentFilter{TaskID: f.task.ID, State: "closed"}, kanban.Page{}); kanban.ErrorCode(err) != kanban.CodeValidation {
			t.Fatalf("unknown state filter: %v", err)
		}

		checkReviewCommentStates(t, s, f, c, c2, c3)
	})
}

// checkReviewCommentRefusals checks that comments with a bad field, or
// of a missing task, are refused and write nothing (f's task has one).
func checkReviewCommentRefusals(t *testing.T, s *Store, f prFixture) {
	t.Helper()
	ctx := context.Background()
	other := must(s.CreateRepository(ctx, kanban.Repository{WorkspaceID: f.b.ws.ID, Name: "other", LocalPath: "/src/other"}))(t)
	for _, x := range []struct {
		name  string
		edit  func(*kanban.ReviewComment)
		field string
	}{
		{"absolute path", func(c *kanban.ReviewComment) { c.Path = "/etc/passwd" }, "path"},
		{"path with ..", func(c *kanban.ReviewComment) { c.Path = "src/../../secret" }, "path"},
		{"path with .", func(c *kanban.ReviewComment) { c.Path = "./a.go" }, "path"},
		{"path with NUL", func(c *kanban.ReviewComment) { c.Path = "a\x00.go" }, "path"},
		{"path with a newline", func(c *kanban.ReviewComment) { c.Path = "a\n.go" }, "path"},
		{"empty path", func(c *kanban.ReviewComment) { c.Path = "" }, "path"},
		{"line 0", func(c *kanban.ReviewComment) { c.StartLine = 0 }, "start_line"},
		{"end before start", func(c *kanban.ReviewComment) { c.EndLine = c.StartLine - 1 }, "end_line"},
		{"too many lines", func(c *kanban.ReviewComment) { c.EndLine = c.StartLine + kanban.MaxCommentLines }, "end_line"},
		{"line past the bound", func(c *kanban.ReviewComment) { c.StartLine, c.EndLine = kanban.MaxDiffLine+1, kanban.MaxDiffLine+1 }, "start_line"},
		{"unknown side", func(c *kanban.ReviewComment) { c.Side = "RIGHT" }, "side"},
		{"blank body", func(c *kanban.ReviewComment) { c.Body = " \n " }, "body"},
		{"body too long", func(c *kanban.ReviewComment) { c.Body = strings.Repeat("x", kanban.MaxReviewCommentLen+1) }, "body"},
		{"no anchor commit", func(c *kanban.ReviewComment) { c.AnchorCommit = "" }, "anchor_commit"},
		{"anchor text too long", func(c *kanban.ReviewComment) { c.AnchorText = strings.Repeat("x", kanban.MaxAnchorTextLen+1) }, "anchor_text"},
		{"no author", func(c *kanban.ReviewComment) { c.Author = "" }, "author"},
		{"repository not linked", func(c *kanban.ReviewComment) { c.RepositoryID = other.ID }, "repository_id"},
	} {
		in := f.comment("a.go", 3)
		x.edit(&in)
		_, err := s.CreateReviewComment(ctx, in)
		if e, ok := kanban.AsError(err); !ok || e.Code != kanban.CodeValidation || e.Field != x.field {
			t.Errorf("%s: got %v, want VALIDATION_ERROR on %s", x.name, err, x.field)
		}
	}
	if _, err := s.CreateReviewComment(ctx, kanban.ReviewComment{TaskID: kanban.NewID(), RepositoryID: f.repo.ID, Path: "a.go", StartLine: 1, EndLine: 1,
		Side: kanban.SideOld, Body: "x", AnchorCommit: shaA, Author: "operator"}); kanban.ErrorCode(err) != kanban.CodeNotFound {
		t.Errorf("missing task: %v", err)
	}
	if n := countRows(t, s, "task_review_comments"); n != 1 {
		t.Fatalf("refusals wrote comments: %d rows", n)
	}
}

// checkReviewCommentStates: edit while open; send the open ones; a sent
// one cannot be edited; outdated are open and sent ones whose lines
// changed, resolved ones never; another task cannot move them.
func checkReviewCommentStates(t *testing.T, s *Store, f prFixture, c, c2, c3 *kanban.ReviewComment) {
	t.Helper()
	ctx := context.Background()
	body := "Rename this to signIn."
	if got := must(s.UpdateReviewComment(ctx, c.ID, &body, nil))(t); got.Body != body || got.State != kanban.CommentOpen {
		t.Fatalf("edited %+v", got)
	}
	sent := must(s.MarkReviewCommentsSent(ctx, f.task.ID, []string{c.ID, c2.ID, kanban.NewID()}))(t)
	if len(sent) != 2 || sent[0].State != kanban.CommentSent || sent[0].SentAt == nil || sent[0].Body != body {
		t.Fatalf("sent %+v", sent)
	}
	if again := must(s.MarkReviewCommentsSent(ctx, f.task.ID, []string{c.ID}))(t); len(again) != 0 {
		t.Fatalf("sent twice: %+v", again)
	}
	if _, err := s.UpdateReviewComment(ctx, c.ID, &body, nil); kanban.ErrorCode(err) != kanban.CodeConflict {
		t.Fatalf("editing a sent comment: %v", err)
	}
	// Outdated: open and sent ones whose lines changed.
	out := must(s.MarkReviewCommentsOutdated(ctx, f.task.ID, []string{c2.ID, c3.ID}))(t)
	if len(out) != 2 || out[0].State != kanban.CommentOutdated {
		t.Fatalf("outdated %+v", out)
	}
	resolved := kanban.CommentResolved
	if got := must(s.UpdateReviewComment(ctx, c.ID, nil, &resolved))(t); got.State != kanban.CommentResolved || got.ResolvedAt == nil || got.SentAt == nil {
		t.Fatalf("resolved %+v", got)
	}
	if out := must(s.MarkReviewCommentsOutdated(ctx, f.task.ID, []string{c.ID}))(t); len(out) != 0 {
		t.Fatalf("a resolved comment was outdated: %+v", out)
	}
	outdated := kanban.CommentOutdated
	if _, err := s.UpdateReviewComment(ctx, c.ID, nil, &outdated); kanban.ErrorCode(err) != kanban.CodeValidation {
		t.Fatalf("setting outdated by hand: %v", err)
	}
	// Another task cannot move these.
	t2 := mustTask(t, s, f.b, "", "other task")
	if moved := must(s.MarkReviewCommentsSent(ctx, t2.ID, []string{c3.ID}))(t); len(moved) != 0 {
		t.Fatalf("another task's call moved %d comments", len(moved))
	}
	if err := s.DeleteReviewComment(ctx, c3.ID); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteReviewComment(ctx, c3.ID); kanban.ErrorCode(err) != kanban.CodeNotFound {
		t.Fatalf("delete twice: %v", err)
	}
}

// TestSendReview: the prompt and the comments' move to sent are one
// transaction — all of them or nothing, on the task's own session only.
func TestSendReview(t *testing.T) {
	t.Parallel()
	bothEngines(t, func(t *testing.T) {
		t.Parallel()
		s := newTestStore(t)
		ctx := context.Background()
		f := newPRFixture(t, s)
		sess, _, err := s.CreateSession(ctx, kanban.SessionCreate{TaskID: f.task.ID})
		if err != nil {
			t.Fatal(err)
		}
		t2 := mustTask(t, s, f.b, "", "other task")
		other, _, err := s.CreateSession(ctx, kanban.SessionCreate{TaskID: t2.ID})
		if err != nil {
			t.Fatal(err)
		}
		c1 := must(s.CreateReviewComment(ctx, f.comment("a.go", 1)))(t)
		c2 := must(s.CreateReviewComment(ctx, f.comment("b.go", 5)))(t)
		prompt := kanban.Message{SessionID: sess.ID, Author: "operator", Type: "prompt", Content: "Review: a.go, b.go"}
		msgs := countRows(t, s, "session_messages")

		resolved := kanban.CommentResolved
		must(s.UpdateReviewComment(ctx, c2.ID, nil, &resolved))(t)
		if _, _, err := s.SendReview(ctx, f.task.ID, []string{c1.ID, c2.ID}, prompt); kanban.ErrorCode(err) != kanban.CodeConflict {
			t.Fatalf("a resolved comment in the review: %v, want CONFLICT", err)
		}
		wrong := prompt
		wrong.SessionID = other.ID
		if _, _, err := s.SendReview(ctx, f.task.ID, []string{c1.ID}, wrong); kanban.ErrorCode(err) != kanban.CodeValidation {
			t.Fatalf("another task's session: %v, want VALIDATION_ERROR", err)
		}
		if got := must(s.GetReviewComment(ctx, c1.ID))(t); got.State != kanban.CommentOpen || countRows(t, s, "session_messages") != msgs {
			t.Fatalf("a refused send wrote: state %s, %d messages", got.State, countRows(t, s, "session_messages"))
		}
		m, sent, err := s.SendReview(ctx, f.task.ID, []string{c1.ID}, prompt)
		if err != nil || m.Type != "prompt" || m.TaskID != f.task.ID || len(sent) != 1 || sent[0].State != kanban.CommentSent || sent[0].SentAt == nil {
			t.Fatalf("send: %+v %+v %v", m, sent, err)
		}
		if _, _, err := s.SendReview(ctx, f.task.ID, []string{c1.ID}, prompt); kanban.ErrorCode(err) != kanban.CodeConflict {
			t.Fatalf("sent twice: %v", err)
		}
	})
}
