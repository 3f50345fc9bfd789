package action

import (
	"context"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// createTask creates a task and, unless start_agent is false, a session
// for it whose first message is the task's prompt. Everything that can be
// refused is checked before the first write. A session that starts at once
// is written in the task's transaction.
func (s *Service) createTask(ctx context.Context, p Principal, in TaskCreateIn) (*TaskCreateOut, error) {
	c, err := s.taskCreateOf(ctx, p, in)
	if err != nil {
		return nil, err
	}
	// A task with blockers never starts at once: start_when_unblocked
	// (its default) defers the start, false means no automatic start.
	start := (in.StartAgent == nil || *in.StartAgent) && (len(c.BlockedBy) == 0 || c.StartWhenUnblocked)
	// The profiles are kept with the task for every later start, so they
	// must exist, and may run a task of its workspace, whether or not an
	// agent starts now.
	if err := s.checkProfiles(ctx, c.WorkspaceID, in.AgentProfileID, in.ExecutorProfileID); err != nil {
		return nil, err
	}
	var (
		t     *kanban.Task
		sess  *kanban.Session
		dedup bool
	)
	if start && !c.StartWhenUnblocked {
		t, sess, dedup, err = s.store.CreateTaskWithSession(ctx, c, s.firstSession(c.Title, c.Description, in.AgentProfileID, in.ExecutorProfileID))
	} else {
		t, dedup, err = s.store.CreateTask(ctx, c)
	}
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
	kanban.EventTaskCreated.PublishContext(ctx, s.pub, WorkspaceTopic(t.WorkspaceID), t)
	defer s.events.Emit(kanban.TaskCreated{Task: t})
	switch {
	case sess != nil:
		kanban.EventSessionCreated.PublishContext(ctx, s.pub, WorkspaceTopic(t.WorkspaceID), sess)
		s.agents.Start(sess)
	case start:
		// Deferred: it starts now only when no blocker is pending, else
		// startUnblocked starts it once every blocker completes.
		ready, err := s.unblocked(ctx, t.ID)
		if err != nil {
			return nil, err
		}
		if !ready {
			return out, nil
		}
		if sess, err = s.startSession(ctx, t, in.AgentProfileID, in.ExecutorProfileID); err != nil {
			return nil, err
		}
	}
	if sess != nil {
		out.SessionID = sess.ID
	}
	return out, nil
}

const parentForbidden = "a task session creates subtasks only under its own task, its subtasks and the tasks it created"

// taskCreateOf resolves and scopes the ids of a task.create payload: the
// workspace, the parent, the workflow (a session's own by default) and the
// blockers ("self" for sessions). A session's bound task is recorded as
// the creator.
func (s *Service) taskCreateOf(ctx context.Context, p Principal, in TaskCreateIn) (kanban.TaskCreate, error) {
	c := kanban.TaskCreate{
		WorkflowID: in.WorkflowID, WorkflowStepID: in.WorkflowStepID, Title: in.Title,
		Description: in.Prompt, ExternalID: in.ExternalID, BlockedBy: in.BlockedBy,
		StartWhenUnblocked:  len(in.BlockedBy) > 0,
		StartAgentProfileID: in.AgentProfileID, StartExecutorProfileID: in.ExecutorProfileID,
		Autopilot: in.Autopilot, WorkspaceMode: in.WorkspaceMode,
	}
	if in.StartWhenUnblocked != nil {
		c.StartWhenUnblocked = *in.StartWhenUnblocked
	}
	var err error
	if c.WorkspaceID, err = s.workspaceFor(ctx, p, in.WorkspaceID); err != nil {
		return c, err
	}
	if in.ParentID != "" {
		// A subtask joins its parent's tree (and may share its working
		// directory): a change to the parent, within the write scope.
		parent, err := s.writableTask(ctx, p, in.ParentID, parentForbidden)
		if err != nil {
			return c, err
		}
		c.ParentID = parent.ID
	}
	if p.Kind == Session {
		c.CreatedByTaskID = p.TaskID
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
		if err := s.taskRepoLocator(ctx, p, c.WorkspaceID, c.Repository); err != nil {
			return c, err
		}
	}
	return c, nil
}

// taskRepoLocator resolves a new task's repository locator before the
// task is written: a repository the workspace has is named by its id; a
// new one (the operator only) keeps its canonical local path or its URL,
// for the store to register in the task's transaction.
func (s *Service) taskRepoLocator(ctx context.Context, p Principal, workspaceID string, in *kanban.TaskRepositoryInput) error {
	if err := in.Check(); err != nil || in.RepositoryID != "" || (in.LocalPath == "" && in.RepositoryURL == "") {
		return err
	}
	repo, reg, err := s.resolveSource(ctx, p, workspaceID, kanban.Repository{LocalPath: in.LocalPath, RemoteURL: in.RepositoryURL}, "local_path")
	switch {
	case err != nil:
		return err
	case repo != nil:
		in.RepositoryID, in.LocalPath, in.RepositoryURL = repo.ID, "", ""
	default:
		in.LocalPath = reg.LocalPath
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
// unblocked. Such a task has no session yet; it starts with the profiles
// launchProfiles gives (the ones named when it was created, unless its
// step names one; the defaults when none were, or were deleted since).
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
	agent, executor, err := s.launchProfiles(ctx, t, "", "")
	if err != nil {
		return err
	}
	_, err = s.startSession(ctx, t, agent, executor)
	return err
}

// startSession creates a session for t whose first conversation message
// is the task's prompt, in one transaction.
func (s *Service) startSession(ctx context.Context, t *kanban.Task, agentProfileID, executorProfileID string) (*kanban.Session, error) {
	sc := s.firstSession(t.Title, launchText(t), agentProfileID, executorProfileID)
	sc.TaskID = t.ID
	sess, _, err := s.store.CreateSession(ctx, sc)
	if err != nil {
		return nil, err
	}
	s.launched(ctx, t)
	kanban.EventSessionCreated.PublishContext(ctx, s.pub, WorkspaceTopic(t.WorkspaceID), sess)
	s.agents.Start(sess)
	return sess, nil
}

// launchText is what a task's next agent starts with: its launch prompt
// (a deferred start's, or a move's hand-off), else its prompt.
func launchText(t *kanban.Task) string {
	if t.LaunchPrompt != "" {
		return t.LaunchPrompt
	}
	return t.Description
}

// launched clears a launch prompt that a new session just used.
func (s *Service) launched(ctx context.Context, t *kanban.Task) {
	if t.LaunchPrompt == "" {
		return
	}
	empty := ""
	if _, err := s.store.UpdateTask(ctx, t.ID, kanban.TaskUpdate{LaunchPrompt: &empty}); err != nil {
		s.log.WarnContext(ctx, "clear a used launch prompt", "err", err)
	}
}

// firstSession is the session a task starts with: the given profiles (empty
// for the defaults) and the task's prompt, its description or else its
// title, as the first message. It is managed (its agent is launched) when
// this backend runs agents, and then owned by this backend from its
// INSERT on (the runtime starts it here).
func (s *Service) firstSession(title, description, agentProfileID, executorProfileID string) kanban.SessionCreate {
	prompt := description
	if prompt == "" {
		prompt = title
	}
	sc := kanban.SessionCreate{AgentProfileID: agentProfileID, ExecutorProfileID: executorProfileID, Managed: s.managed,
		FirstMessage: &kanban.Message{Author: "user", Type: "prompt", Content: prompt}}
	if s.managed {
		sc.Owner = s.backend
	}
	return sc
}
