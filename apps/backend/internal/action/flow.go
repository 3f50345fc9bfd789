package action

import (
	"context"
	"slices"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// The workflow engine reacts to the domain events the actions emit
// (kanban.TaskCreated, TaskMoved, StepFreed); it never reaches back into
// the actions but through the exported Service methods below, which are
// what automations do. Each publishes what changed, as the actions do,
// and returns domain errors for the engine to record.

// StartAgent starts an agent session on a task unless one is live (then it
// returns that session and started=false). prompt, when set, is the first
// message instead of the task's prompt. origin, when set, is the session
// whose turn led to the start: once it has ended (stopped meanwhile) no
// agent starts (CONFLICT).
func (s *Service) StartAgent(ctx context.Context, taskID, agentProfileID, executorProfileID, prompt, origin string) (sess *kanban.Session, started bool, err error) {
	t, err := s.store.GetTask(ctx, taskID)
	if err != nil {
		return nil, false, err
	}
	if live, err := s.liveSession(ctx, t.ID, ""); err == nil {
		return live, false, nil
	}
	if agentProfileID, executorProfileID, err = s.launchProfiles(ctx, t, agentProfileID, executorProfileID); err != nil {
		return nil, false, err
	}
	if err := s.checkProfiles(ctx, t.WorkspaceID, agentProfileID, executorProfileID); err != nil {
		return nil, false, err
	}
	sc := s.firstSession(t.Title, launchText(t), agentProfileID, executorProfileID)
	sc.TaskID, sc.UnlessEnded = t.ID, origin
	if prompt != "" {
		sc.FirstMessage.Author, sc.FirstMessage.Content = "workflow", prompt
	}
	sess, _, err = s.store.CreateSession(ctx, sc)
	if err != nil {
		return nil, false, err
	}
	if prompt == "" {
		s.launched(ctx, t)
	}
	kanban.EventSessionCreated.PublishContext(ctx, s.pub, WorkspaceTopic(t.WorkspaceID), sess)
	s.agents.Start(sess)
	return sess, true, nil
}

// launchProfiles returns the profiles a start of an agent on task t runs
// with, given the ones the start itself names (an automation's config, a
// spawn's payload; empty when it names none). The agent profile: the one
// named, else the task's step's, else the one the task was created with,
// else its workflow's; the executor profile: the one named, else the
// task's. Empty means the default profile. A step's profile is a setting
// of that step, as if its automations named it, so it outranks the task's;
// a workflow's is the default for its tasks that name none.
func (s *Service) launchProfiles(ctx context.Context, t *kanban.Task, agent, executor string) (string, string, error) {
	if agent != "" && executor != "" {
		return agent, executor, nil
	}
	if agent == "" {
		if st, err := s.store.GetStep(ctx, t.WorkflowStepID); err == nil && st.AgentProfileID != "" {
			agent = st.AgentProfileID
		}
	}
	taskAgent, taskExecutor, err := s.store.StartProfiles(ctx, t.ID)
	if err != nil {
		return "", "", err
	}
	if agent == "" {
		agent = taskAgent
	}
	if executor == "" {
		executor = taskExecutor
	}
	if agent == "" {
		if w, err := s.store.GetWorkflow(ctx, t.WorkflowID); err == nil {
			agent = w.AgentProfileID
		}
	}
	return agent, executor, nil
}

// SendPrompt queues a prompt from author to the task's live session
// (CONFLICT when it has none, BUDGET_EXCEEDED when a budget covering it
// is spent).
func (s *Service) SendPrompt(ctx context.Context, taskID, author, text string) (*kanban.Message, error) {
	target, err := s.liveSession(ctx, taskID, "")
	if err != nil {
		return nil, err
	}
	if err := s.budgetAllows(ctx, target); err != nil {
		return nil, err
	}
	m, err := s.store.AppendMessage(ctx, kanban.Message{SessionID: target.ID, Author: author, Type: "prompt", Content: text})
	if err != nil {
		return nil, err
	}
	ev := kanban.SessionMessage{DeliveryMode: kanban.DeliveryQueued, Message: m}
	kanban.EventSessionMessage.PublishContext(ctx, s.pub, SessionTopic(target.ID), ev)
	kanban.EventSessionMessage.PublishContext(ctx, s.pub, WorkspaceTopic(target.WorkspaceID), ev)
	s.agents.Deliver(target.ID, false)
	return m, nil
}

// UpdateAgentMode applies u to the task's agent mode and tells the
// task's agents (wherever they run) to apply it. It returns the mode
// before and after.
func (s *Service) UpdateAgentMode(ctx context.Context, taskID string, u kanban.AgentModeUpdate) (before, after *kanban.AgentMode, err error) {
	if before, after, err = s.store.UpdateAgentMode(ctx, taskID, u); err != nil {
		return nil, nil, err
	}
	s.agents.ModeChanged(taskID)
	return before, after, nil
}

// LiveSession returns the task's newest session that has not ended
// (CONFLICT when none).
func (s *Service) LiveSession(ctx context.Context, taskID string) (*kanban.Session, error) {
	return s.liveSession(ctx, taskID, "")
}

// FlowMove moves a task to a step of its workflow for the engine: into a
// full step it waits in that step's admission queue (queued=true) instead
// of failing. The engine runs the exit and enter automations itself.
func (s *Service) FlowMove(ctx context.Context, taskID, stepID string) (t *kanban.Task, queued bool, err error) {
	t, err = s.store.MoveTask(ctx, taskID, stepID, -1)
	if kanban.ErrorCode(err) == kanban.CodeConflict {
		if t, err = s.store.QueueTask(ctx, taskID, stepID); err != nil {
			return nil, false, err
		}
		kanban.EventTaskUpdated.PublishContext(ctx, s.pub, WorkspaceTopic(t.WorkspaceID), t)
		return t, true, nil
	}
	if err != nil {
		return nil, false, err
	}
	kanban.EventTaskMoved.PublishContext(ctx, s.pub, WorkspaceTopic(t.WorkspaceID), t)
	return t, false, nil
}

// Admitted announces a task that a step's admission moved onto it.
func (s *Service) Admitted(t *kanban.Task) {
	kanban.EventTaskMoved.Publish(s.pub, WorkspaceTopic(t.WorkspaceID), t)
}

// SetTaskState sets a task's state, starting the tasks that waited for it
// when it is now COMPLETED.
func (s *Service) SetTaskState(ctx context.Context, taskID string, st kanban.TaskState) (*kanban.Task, error) {
	t, err := s.updateCompleting(ctx, taskID, kanban.TaskUpdate{State: &st})
	if err != nil {
		return nil, err
	}
	kanban.EventTaskUpdated.PublishContext(ctx, s.pub, WorkspaceTopic(t.WorkspaceID), t)
	return t, nil
}

// StopAgents cancels a task's live sessions with a note by author and
// stops their agents; it returns the ids it stopped.
func (s *Service) StopAgents(ctx context.Context, taskID, author, note string) ([]string, error) {
	return s.endSessions(ctx, taskID, "", kanban.Message{Author: author, Type: "status", Content: note})
}

// ArchiveTask archives a task, stops its agents and frees its worktree.
func (s *Service) ArchiveTask(ctx context.Context, taskID, why string) (*kanban.Task, error) {
	t, err := s.store.ArchiveTask(ctx, taskID)
	if err != nil {
		return nil, err
	}
	if err := s.releaseTask(ctx, t.ID, why); err != nil {
		return nil, err
	}
	kanban.EventTaskUpdated.PublishContext(ctx, s.pub, WorkspaceTopic(t.WorkspaceID), t)
	s.events.Emit(kanban.StepFreed{StepID: t.WorkflowStepID})
	return t, nil
}

// Record appends a message about what the workflow did to the task's
// conversation (no session's) and publishes it.
func (s *Service) Record(ctx context.Context, taskID, typ, content string) {
	m, err := s.store.AppendTaskMessage(ctx, taskID, kanban.Message{Author: "workflow", Type: typ, Content: content})
	if err != nil {
		if kanban.ErrorCode(err) != kanban.CodeNotFound && ctx.Err() == nil { // the task was deleted meanwhile, or the backend stops
			s.log.WarnContext(ctx, "record workflow message", "err", err)
		}
		return
	}
	if t, err := s.store.GetTask(ctx, taskID); err == nil {
		kanban.EventSessionMessage.PublishContext(ctx, s.pub, WorkspaceTopic(t.WorkspaceID), kanban.SessionMessage{Message: m})
	}
}

// Neighbour returns the step before (dir -1) or after (dir +1) cur by
// position, or nil at the workflow's end.
func (s *Service) Neighbour(ctx context.Context, cur *kanban.WorkflowStep, dir int) (*kanban.WorkflowStep, error) {
	if dir > 0 {
		return s.nextStep(ctx, cur)
	}
	l, err := s.store.ListSteps(ctx, cur.WorkflowID, kanban.Page{Limit: stepsPageLimit})
	if err != nil {
		return nil, err
	}
	i := slices.IndexFunc(l.Items, func(st kanban.WorkflowStep) bool { return st.ID == cur.ID })
	if i <= 0 {
		return nil, nil
	}
	return &l.Items[i-1], nil
}
