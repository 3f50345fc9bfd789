package action

import (
	"context"
	"fmt"
	"strings"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
	"github.com/kandev/kandev/apps/backend/internal/schema"
	"github.com/kandev/kandev/apps/backend/internal/worktree"
)

// maxLiveComments bounds the open and sent comments of a task that one
// outdated check reads (the oldest first).
const maxLiveComments = 1000

// reviewExcerptLines and reviewExcerptBytes bound the quoted lines of one
// comment in a review prompt.
const (
	reviewExcerptLines = 12
	reviewExcerptBytes = 2 << 10
)

// ReviewSendIn is the payload of review.send.
type ReviewSendIn struct {
	TaskID string `json:"task_id,omitzero"`
	// SessionID picks a live session of the task (default: its newest).
	SessionID string `json:"session_id,omitzero"`
}

// ReviewSendOut is the result of review.send.
type ReviewSendOut struct {
	Message   *kanban.Message        `json:"message"`
	SessionID string                 `json:"session_id"`
	Sent      []kanban.ReviewComment `json:"sent"`
	// Outdated counts the open comments found outdated just before
	// sending: their lines changed, so they were not sent.
	Outdated int `json:"outdated"`
	// Remaining counts the open comments left for another review (more
	// than fit in one prompt or one page).
	Remaining int `json:"remaining"`
}

var _ = declare(Def[ReviewSendIn, *ReviewSendOut]{
	Name:   kanban.ActionReviewSend,
	Effect: Writes,
	Allow:  AllowOperator,
	Schema: schema.Obj("", schema.P{
		"task_id":    idProp("The task whose open review comments to send to its agent."),
		"session_id": idProp("A live session of the task; default its newest."),
	}, "task_id"),
	Run: (*Service).sendReview,
})

// sendReview delivers the task's open review comments to its agent as
// one prompt, queued for the session's next turn when one runs, and marks
// them sent; comments whose lines changed are marked outdated first and
// not sent.
func (s *Service) sendReview(ctx context.Context, p Principal, in ReviewSendIn) (*ReviewSendOut, error) {
	t, err := s.changesTask(ctx, p, in.TaskID)
	if err != nil {
		return nil, err
	}
	target, err := s.liveSession(ctx, t.ID, in.SessionID)
	if err != nil {
		return nil, err
	}
	before, err := s.countOpen(ctx, t.ID)
	if err != nil {
		return nil, err
	}
	if err := s.markOutdated(ctx, t, ""); err != nil {
		return nil, err
	}
	open, err := s.store.ListReviewComments(ctx, kanban.ReviewCommentFilter{TaskID: t.ID, State: kanban.CommentOpen}, kanban.Page{Limit: kanban.MaxLimit})
	if err != nil {
		return nil, err
	}
	after, err := s.countOpen(ctx, t.ID)
	if err != nil {
		return nil, err
	}
	if len(open.Items) == 0 {
		return nil, kanban.Errorf(kanban.CodeConflict, "the task has no open review comments to send")
	}
	names, err := s.repoNames(ctx, open.Items)
	if err != nil {
		return nil, err
	}
	prompt, n := reviewPrompt(open.Items, names)
	ids := make([]string, n)
	for i := range n {
		ids[i] = open.Items[i].ID
	}
	m, sent, err := s.store.SendReview(ctx, t.ID, ids, kanban.Message{SessionID: target.ID, Author: sender(p), Type: "prompt", Content: prompt})
	if err != nil {
		return nil, err
	}
	s.publishMessage(m, t.WorkspaceID, kanban.DeliveryQueued)
	s.agents.Deliver(target.ID, false)
	return &ReviewSendOut{Message: m, SessionID: target.ID, Sent: sent, Outdated: before - after, Remaining: after - n}, nil
}

// countOpen counts a task's open comments (up to maxLiveComments).
func (s *Service) countOpen(ctx context.Context, taskID string) (int, error) {
	n := 0
	err := s.eachComment(ctx, kanban.ReviewCommentFilter{TaskID: taskID, State: kanban.CommentOpen}, func(kanban.ReviewComment) { n++ })
	return n, err
}

// eachComment calls fn on the comments matching f, oldest first, at most
// maxLiveComments of them.
func (s *Service) eachComment(ctx context.Context, f kanban.ReviewCommentFilter, fn func(kanban.ReviewComment)) error {
	pg, seen := kanban.Page{Limit: kanban.MaxLimit}, 0
	for seen < maxLiveComments {
		l, err := s.store.ListReviewComments(ctx, f, pg)
		if err != nil {
			return err
		}
		for _, c := range l.Items {
			fn(c)
		}
		seen += len(l.Items)
		if l.NextCursor == "" {
			return nil
		}
		pg.Cursor = l.NextCursor
	}
	return nil
}

// markOutdated marks outdated the task's open and sent comments (on
// repositoryID only, when set) whose anchored lines are no longer what
// they were: one read of each repository's worktree for all of them. A
// repository that cannot be read now (no checkout here) is left as it is.
func (s *Service) markOutdated(ctx context.Context, t *kanban.Task, repositoryID string) error {
	byRepo := map[string][]kanban.ReviewComment{}
	for _, st := range []kanban.ReviewCommentState{kanban.CommentOpen, kanban.CommentSent} {
		err := s.eachComment(ctx, kanban.ReviewCommentFilter{TaskID: t.ID, RepositoryID: repositoryID, State: st}, func(c kanban.ReviewComment) {
			byRepo[c.RepositoryID] = append(byRepo[c.RepositoryID], c)
		})
		if err != nil {
			return err
		}
	}
	for repoID, comments := range byRepo {
		rt, err := s.openTree(ctx, t, repoID)
		if err != nil {
			continue // reported by the changes actions; nothing to compare with here
		}
		ranges := make([]worktree.LineRange, len(comments))
		for i, c := range comments {
			ranges[i] = worktree.LineRange{Path: c.Path, Side: c.Side, Start: c.StartLine, End: c.EndLine}
		}
		a, err := rt.tree.Anchors(ctx, ranges)
		if err != nil {
			return s.gitErr(err)
		}
		var stale []string
		for i, c := range comments {
			if !a.Present[i] || a.Texts[i] != c.AnchorText {
				stale = append(stale, c.ID)
			}
		}
		for len(stale) > 0 {
			n := min(len(stale), kanban.MaxLimit)
			if _, err := s.store.MarkReviewCommentsOutdated(ctx, t.ID, stale[:n]); err != nil {
				return err
			}
			stale = stale[n:]
		}
	}
	return nil
}

// repoNames names the repositories of comments.
func (s *Service) repoNames(ctx context.Context, comments []kanban.ReviewComment) (map[string]string, error) {
	names := map[string]string{}
	for _, c := range comments {
		if _, ok := names[c.RepositoryID]; ok {
			continue
		}
		r, err := s.store.GetRepository(ctx, c.RepositoryID)
		if err != nil {
			return nil, err
		}
		names[c.RepositoryID] = r.Name
	}
	return names, nil
}

// reviewPrompt writes the comments, oldest first, as one prompt within
// kanban.MaxPromptLen, and returns how many it holds (at least one: a
// comment is at most MaxReviewCommentLen and its excerpt is bounded).
// Each comment's lines are quoted ("> ") under its file and line, its
// text follows as the operator wrote it.
func reviewPrompt(comments []kanban.ReviewComment, repoNames map[string]string) (string, int) {
	multi := len(repoNames) > 1
	var b strings.Builder
	head := "The operator reviewed your changes and left comments on lines of the diff. Address each comment, then say what you changed.\n"
	b.WriteString(head)
	n := 0
	for i, c := range comments {
		var e strings.Builder
		where := c.Path
		if multi {
			where = repoNames[c.RepositoryID] + ": " + where
		}
		lines := fmt.Sprintf("line %d", c.StartLine)
		if c.EndLine != c.StartLine {
			lines = fmt.Sprintf("lines %d-%d", c.StartLine, c.EndLine)
		}
		side := ""
		if c.Side == kanban.SideOld {
			side = " of the original file (removed lines)"
		}
		fmt.Fprintf(&e, "\n## Comment %d: %s, %s%s\n\n", i+1, where, lines, side)
		for _, l := range excerpt(c.AnchorText) {
			e.WriteString("> " + l + "\n")
		}
		e.WriteString("\n" + strings.TrimRight(c.Body, "\n") + "\n")
		if b.Len()+e.Len() > kanban.MaxPromptLen {
			break
		}
		b.WriteString(e.String())
		n++
	}
	return b.String(), n
}

// excerpt is the first lines of an anchor, bounded.
func excerpt(text string) []string {
	lines := strings.Split(text, "\n")
	cut := len(lines) > reviewExcerptLines
	if cut {
		lines = lines[:reviewExcerptLines]
	}
	size := 0
	for i, l := range lines {
		if size += len(l); size > reviewExcerptBytes {
			lines, cut = lines[:i], true
			break
		}
	}
	if cut {
		lines = append(lines, "…")
	}
	return lines
}
