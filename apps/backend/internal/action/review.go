package action

import (
	"context"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
	"github.com/kandev/kandev/apps/backend/internal/schema"
	"github.com/kandev/kandev/apps/backend/internal/worktree"
)

// ReviewCommentCreateIn is the payload of review.comment.create.
type ReviewCommentCreateIn struct {
	TaskID       string          `json:"task_id,omitzero"`
	RepositoryID string          `json:"repository_id,omitzero"`
	Path         string          `json:"path,omitzero"`
	OldPath      string          `json:"old_path,omitzero"`
	StartLine    int             `json:"start_line,omitzero"`
	EndLine      int             `json:"end_line,omitzero"`
	Side         kanban.DiffSide `json:"side,omitzero"`
	Body         string          `json:"body,omitzero"`
}

// ReviewCommentListIn is the payload of review.comment.list.
type ReviewCommentListIn struct {
	TaskID       string                    `json:"task_id,omitzero"`
	RepositoryID string                    `json:"repository_id,omitzero"`
	Path         string                    `json:"path,omitzero"`
	State        kanban.ReviewCommentState `json:"state,omitzero"`
	Limit        int                       `json:"limit,omitzero"`
	Cursor       string                    `json:"cursor,omitzero"`
}

// ReviewCommentUpdateIn is the payload of review.comment.update.
type ReviewCommentUpdateIn struct {
	ID    string                     `json:"id,omitzero"`
	Body  *string                    `json:"body,omitzero"`
	State *kanban.ReviewCommentState `json:"state,omitzero"`
}

var sideProp = schema.Enum("The side of the diff: new (the file now: added and unchanged lines; the default) or old (the file at the base: deleted lines).",
	strs(kanban.DiffSides)...)

var _ = declare(Def[ReviewCommentCreateIn, *kanban.ReviewComment]{
	Name:   kanban.ActionReviewCommentCreate,
	Effect: Writes,
	Allow:  AllowOperator,
	Schema: schema.Obj("", taskChangesProps(schema.P{
		"path":       schema.Str("The changed file, relative to the repository's root.").Len(1, kanban.MaxPathLen),
		"old_path":   schema.Str("For a renamed file, its path before the rename.").Len(1, kanban.MaxPathLen),
		"start_line": schema.Int("First line commented on, numbered on side.").Range(1, kanban.MaxDiffLine),
		"end_line":   schema.Int("Last line (default start_line); the lines must be in one hunk of the current diff.").Range(1, kanban.MaxDiffLine),
		"side":       sideProp,
		"body":       schema.Str("The comment.").Len(1, kanban.MaxReviewCommentLen),
	}), "path", "start_line", "body"),
	Run: (*Service).createReviewComment,
})

var _ = declare(Def[ReviewCommentListIn, *kanban.List[kanban.ReviewComment]]{
	Name:   kanban.ActionReviewCommentList,
	Effect: Reads,
	Allow:  all,
	Schema: schema.Obj("", pageProps(schema.P{
		"task_id":       ownTaskRef("The task"),
		"repository_id": idProp("Only the comments on this repository."),
		"path":          schema.Str("Only the comments on this file.").Len(1, kanban.MaxPathLen),
		"state":         schema.Enum("Only the comments in this state.", strs(kanban.ReviewCommentStates)...),
	})),
	Run: (*Service).listReviewComments,
})

var _ = declare(Def[ReviewCommentUpdateIn, *kanban.ReviewComment]{
	Name:   kanban.ActionReviewCommentUpdate,
	Effect: Writes,
	Allow:  AllowOperator,
	Schema: schema.Obj("", schema.P{
		"id":    idProp("The comment."),
		"body":  schema.Str("The new text (only while the comment is open).").Len(1, kanban.MaxReviewCommentLen),
		"state": schema.Enum("resolved closes the comment; open reopens it.", string(kanban.CommentOpen), string(kanban.CommentResolved)),
	}, "id"),
	Run: (*Service).updateReviewComment,
})

var _ = declare(Def[IDIn, *Deleted]{
	Name:   kanban.ActionReviewCommentDelete,
	Effect: Writes,
	Allow:  AllowOperator,
	Schema: idOnly("The comment."),
	Run: func(s *Service, ctx context.Context, _ Principal, in IDIn) (*Deleted, error) {
		if err := s.store.DeleteReviewComment(ctx, in.ID); err != nil {
			return nil, err
		}
		return &Deleted{ID: in.ID, Deleted: true}, nil
	},
})

// createReviewComment anchors a comment to lines of the file's current
// diff: the lines must be in one hunk on that side; their text and the
// worktree's HEAD are stored with it, so it is found outdated when they
// change.
func (s *Service) createReviewComment(ctx context.Context, p Principal, in ReviewCommentCreateIn) (*kanban.ReviewComment, error) {
	if in.EndLine == 0 {
		in.EndLine = in.StartLine
	}
	if in.Side == "" {
		in.Side = kanban.SideNew
	}
	if in.EndLine < in.StartLine || in.EndLine-in.StartLine >= kanban.MaxCommentLines {
		return nil, kanban.FieldError("end_line", "must be from start_line to start_line+%d", kanban.MaxCommentLines-1)
	}
	t, rt, err := s.changesTree(ctx, p, in.TaskID, in.RepositoryID)
	if err != nil {
		return nil, err
	}
	d, err := rt.tree.Diff(ctx, worktree.DiffRequest{Path: in.Path, OldPath: in.OldPath})
	if err != nil {
		return nil, s.gitErr(err)
	}
	if d.Binary || d.TooLarge {
		return nil, kanban.FieldError("path", "is a binary or too large file: its diff has no lines to comment on")
	}
	text, ok := worktree.DiffLines(d.Patch, in.Side, in.StartLine, in.EndLine)
	if !ok {
		return nil, kanban.FieldError("start_line", "the lines are not in one hunk of the file's current diff on that side")
	}
	if len(text) > kanban.MaxAnchorTextLen {
		return nil, kanban.FieldError("end_line", "the lines commented on are longer than %d KiB", kanban.MaxAnchorTextLen>>10)
	}
	c, err := s.store.CreateReviewComment(ctx, kanban.ReviewComment{TaskID: t.ID, RepositoryID: rt.repo.ID, Path: in.Path,
		StartLine: in.StartLine, EndLine: in.EndLine, Side: in.Side, Body: in.Body, AnchorCommit: d.Head, AnchorText: text,
		Author: sender(p)})
	if err != nil {
		return nil, err
	}
	return c, nil
}

// listReviewComments marks outdated the comments whose lines changed,
// then lists a page of them.
func (s *Service) listReviewComments(ctx context.Context, p Principal, in ReviewCommentListIn) (*kanban.List[kanban.ReviewComment], error) {
	page, err := kanban.Page{Limit: in.Limit, Cursor: in.Cursor}.Normalize()
	if err != nil {
		return nil, err
	}
	t, err := s.changesTask(ctx, p, in.TaskID)
	if err != nil {
		return nil, err
	}
	if err := s.markOutdated(ctx, t, in.RepositoryID); err != nil {
		return nil, err
	}
	return s.store.ListReviewComments(ctx, kanban.ReviewCommentFilter{TaskID: t.ID, RepositoryID: in.RepositoryID, Path: in.Path,
		State: in.State}, page)
}

func (s *Service) updateReviewComment(ctx context.Context, _ Principal, in ReviewCommentUpdateIn) (*kanban.ReviewComment, error) {
	if in.Body == nil && in.State == nil {
		return nil, kanban.FieldError("body", "give body, state or both")
	}
	return s.store.UpdateReviewComment(ctx, in.ID, in.Body, in.State)
}
