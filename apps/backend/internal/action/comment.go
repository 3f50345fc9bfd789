package action

import (
	"context"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
	"github.com/kandev/kandev/apps/backend/internal/schema"
)

// Task comments (Office): the operator and agents talk on a task. A
// comment is shown in the task's conversation and fires the on_comment
// automations of the task's step (who is woken is the workflow's to say).

// Reach of comments for sessions: the bound task, its ancestors and its
// descendants, to read and to write (a worker tells its coordinator, a
// coordinator its workers).
const (
	commentReach     = reachAncestors | reachDescendants
	commentForbidden = "a session comments on its task, the task's ancestors and its descendants only"
)

// CommentAddIn is the payload of task.comment.add.
type CommentAddIn struct {
	TaskID string `json:"task_id,omitzero"`
	Body   string `json:"body,omitzero"`
}

var _ = declare(Def[CommentAddIn, *kanban.Comment]{
	Name:   kanban.ActionTaskCommentAdd,
	Tool:   "add_task_comment_kandev",
	Effect: Writes,
	Allow:  all,
	Schema: schema.Obj("", schema.P{
		"task_id": selfTaskRef(`Task to comment on: yours ("self", default), an ancestor or a descendant.`),
		"body":    schema.Str("The comment (markdown).").Len(1, kanban.MaxCommentLen),
	}, "body"),
	Run: (*Service).addComment,
})

var _ = declare(Def[TaskPageIn, *kanban.List[kanban.Comment]]{
	Name:   kanban.ActionTaskCommentList,
	Tool:   "list_task_comments_kandev",
	Effect: Reads,
	Allow:  all,
	Schema: schema.Obj("", pageProps(schema.P{
		"task_id": selfTaskRef(`Task whose comments to read: yours ("self", default), an ancestor or a descendant.`),
	})),
	Run: func(s *Service, ctx context.Context, p Principal, in TaskPageIn) (*kanban.List[kanban.Comment], error) {
		t, err := s.taskInTree(ctx, p, in.TaskID, commentReach, commentForbidden)
		if err != nil {
			return nil, err
		}
		return s.store.ListComments(ctx, t.ID, kanban.Page{Limit: in.Limit, Cursor: in.Cursor})
	},
})

// addComment records a comment, shows it in the task's conversation,
// announces it and lets the workflow react (on_comment).
func (s *Service) addComment(ctx context.Context, p Principal, in CommentAddIn) (*kanban.Comment, error) {
	t, err := s.taskInTree(ctx, p, in.TaskID, commentReach, commentForbidden)
	if err != nil {
		return nil, err
	}
	c := kanban.Comment{TaskID: t.ID, Author: kanban.CommentAuthorOperator, Body: in.Body}
	if p.Kind == Session {
		c.Author = "session:" + p.SessionID
		if sess, err := s.store.GetSession(ctx, p.SessionID); err == nil {
			c.AgentProfileID = sess.AgentProfileID
		}
	}
	out, err := s.store.AddComment(ctx, c)
	if err != nil {
		return nil, err
	}
	kanban.EventCommentCreated.PublishContext(ctx, s.pub, WorkspaceTopic(t.WorkspaceID), out)
	s.recordAs(ctx, t, out.Author, "comment", out.Body)
	s.events.Emit(kanban.TaskCommented{Comment: out})
	return out, nil
}

// recordAs appends a message by author to the task's conversation and
// announces it; a task without a session has no conversation yet, and a
// failure only costs the echo (the comment itself is stored).
func (s *Service) recordAs(ctx context.Context, t *kanban.Task, author, typ, content string) {
	m, err := s.store.AppendTaskMessage(ctx, t.ID, kanban.Message{Author: author, Type: typ, Content: content})
	if err != nil {
		if kanban.ErrorCode(err) != kanban.CodeNotFound && ctx.Err() == nil {
			s.log.WarnContext(ctx, "record comment in the conversation", "err", err)
		}
		return
	}
	kanban.EventSessionMessage.PublishContext(ctx, s.pub, WorkspaceTopic(t.WorkspaceID), kanban.SessionMessage{Message: m})
}
