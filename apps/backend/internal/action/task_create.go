package action

import (
	"context"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// createTask creates a task and, unless start_agent is false, a session
// for it whose first message is the task's prompt. Everything that can be
// refused is checked before the first write.
func (s *Service) createTask(ctx context.Context, p Principal, in TaskCreateIn) (*TaskCreateOut, error) {
	c, err := s.taskCreateOf(ctx, p, in)
	if err != nil {
		return nil, err
	}
	start := in.StartAgent == nil || *in.StartAgent
	if start {
		if err := s.checkProfiles(ctx, in.AgentProfileID, in.ExecutorProfileID); err != nil {
			return nil, err
		}
	}
	t, dedup, err := s.store.CreateTask(ctx, c)
	if err != nil {
		return nil, err
	}
	out := &TaskCreateOut{Task: t, Deduplicated: dedup}
	if dedup {
		if l, err := s.store.ListSessions(ctx, t.ID, kanban.Page{Limit: 1}); err == nil && len(l.Items) > 0 {
			out.SessionID = l.Items[0].ID
		}
		return out, nil
	}
	s.pub.Publish(WorkspaceTopic(t.WorkspaceID), "task.created", t)
	if start && t.StartWhenUnblocked {
		// Deferred: startUnblocked starts it once every blocker completes.
		if start, err = s.unblocked(ctx, t.ID); err != nil {
			return nil, err
		}
	}
	if start {
		sess, err := s.startSession(ctx, t, in.AgentProfileID, in.ExecutorProfileID)
		if err != nil {
			return nil, err
		}
		out.SessionID = sess.ID
	}
	return out, nil
}

// taskCreateOf resolves and scopes the ids of a task.create payload: the
// workspace, the parent, the workflow (a session's own by default) and the
// blockers ("self" for sessions).
func (s *Service) taskCreateOf(ctx context.Context, p Principal, in TaskCreateIn) (kanban.TaskCreate, error) {
	c := kanban.TaskCreate{
		WorkflowID: in.WorkflowID, WorkflowStepID: in.WorkflowStepID, Title: in.Title,
		Description: in.Description, ExternalID: in.ExternalID, BlockedBy: in.BlockedBy,
		StartWhenUnblocked: in.StartWhenUnblocked,
	}
	var err error
	if c.WorkspaceID, err = s.workspaceFor(ctx, p, in.WorkspaceID); err != nil {
		return c, err
	}
	if in.ParentID != "" {
		parent, err := s.taskInScope(ctx, p, in.ParentID)
		if err != nil {
			return c, err
		}
		c.ParentID = parent.ID
	}
	if p.Kind == Session && c.WorkflowID == "" && c.WorkflowStepID == "" {
		bound, err := s.store.GetTask(ctx, p.TaskID)
		if err != nil {
			return c, err
		}
		c.WorkflowID = bound.WorkflowID
	}
	if c.WorkflowID != "" {
		if _, err := s.workflowInScope(ctx, p, c.WorkflowID); err != nil {
			return c, err
		}
	}
	for i, id := range c.BlockedBy {
		if c.BlockedBy[i], err = resolveTaskID(p, id); err != nil {
			return c, err
		}
	}
	if in.RepositoryID != "" || in.LocalPath != "" || in.RepositoryURL != "" || in.BaseBranch != "" {
		c.Repository = &kanban.TaskRepositoryInput{RepositoryID: in.RepositoryID, LocalPath: in.LocalPath,
			RepositoryURL: in.RepositoryURL, BaseBranch: in.BaseBranch}
	}
	return c, nil
}

// checkProfiles verifies optional profile ids exist.
func (s *Service) checkProfiles(ctx context.Context, agentProfileID, executorProfileID string) error {
	if agentProfileID != "" {
		if _, err := s.store.GetAgentProfile(ctx, agentProfileID); err != nil {
			return err
		}
	}
	if executorProfileID != "" {
		if _, err := s.store.GetExecutorProfile(ctx, executorProfileID); err != nil {
			return err
		}
	}
	return nil
}

// unblocked reports whether every task that taskID depends on is completed.
func (s *Service) unblocked(ctx context.Context, taskID string) (bool, error) {
	page := kanban.Page{Limit: kanban.MaxLimit}
	for {
		l, err := s.store.ListBlockers(ctx, taskID, page)
		if err != nil {
			return false, err
		}
		for _, b := range l.Items {
			if b.State != kanban.TaskCompleted {
				return false, nil
			}
		}
		if l.NextCursor == "" {
			return true, nil
		}
		page.Cursor = l.NextCursor
	}
}

// startUnblocked starts the deferred agent session of every task that
// waited (start_when_unblocked) on the just-completed task done and is now
// unblocked. Such a task has no session yet; it gets the default profiles.
func (s *Service) startUnblocked(ctx context.Context, done *kanban.Task) error {
	page := kanban.Page{Limit: kanban.MaxLimit}
	for {
		l, err := s.store.ListBlocked(ctx, done.ID, page)
		if err != nil {
			return err
		}
		for i := range l.Items {
			t := &l.Items[i]
			if !t.StartWhenUnblocked || t.ArchivedAt != nil {
				continue
			}
			if err := s.startIfReady(ctx, t); err != nil {
				return err
			}
		}
		if l.NextCursor == "" {
			return nil
		}
		page.Cursor = l.NextCursor
	}
}

func (s *Service) startIfReady(ctx context.Context, t *kanban.Task) error {
	ready, err := s.unblocked(ctx, t.ID)
	if err != nil || !ready {
		return err
	}
	sessions, err := s.store.ListSessions(ctx, t.ID, kanban.Page{Limit: 1})
	if err != nil || len(sessions.Items) > 0 {
		return err
	}
	_, err = s.startSession(ctx, t, "", "")
	return err
}

// startSession creates a session for t and delivers the task's prompt as
// its first conversation message.
func (s *Service) startSession(ctx context.Context, t *kanban.Task, agentProfileID, executorProfileID string) (*kanban.Session, error) {
	sess, _, err := s.store.CreateSession(ctx, kanban.SessionCreate{TaskID: t.ID, AgentProfileID: agentProfileID, ExecutorProfileID: executorProfileID})
	if err != nil {
		return nil, err
	}
	prompt := t.Description
	if prompt == "" {
		prompt = t.Title
	}
	if _, err := s.store.AppendMessage(ctx, kanban.Message{SessionID: sess.ID, Author: "user", Type: "prompt", Content: prompt}); err != nil {
		return nil, err
	}
	s.pub.Publish(WorkspaceTopic(t.WorkspaceID), "session.created", sess)
	return sess, nil
}
