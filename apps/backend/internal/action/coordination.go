package action

import (
	"context"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
	"github.com/kandev/kandev/apps/backend/internal/schema"
)

// TaskMessageIn is the payload of task.message.
type TaskMessageIn struct {
	TaskID string `json:"task_id,omitzero"`
	// SessionID picks one live session of the task (default: its newest).
	SessionID string `json:"session_id,omitzero"`
	Prompt    string `json:"prompt,omitzero"`
	// DeliveryMode is queued (default: delivered at the session's next
	// turn) or interrupt (only the target's direct parent or the operator).
	DeliveryMode string `json:"delivery_mode,omitzero"`
	// ReplyToQuestionID answers a question the target (an autopilot
	// subtask) asked its parent: recorded once, delivered once.
	ReplyToQuestionID string `json:"reply_to_question_id,omitzero"`
}

// TaskMessageOut is the result of task.message.
type TaskMessageOut struct {
	// Message is absent when nothing was delivered (AlreadyAnswered).
	Message      *kanban.Message `json:"message,omitempty"`
	SessionID    string          `json:"session_id"`
	DeliveryMode string          `json:"delivery_mode"`
	// AlreadyAnswered: reply_to_question_id named a question answered
	// before; this call delivered nothing.
	AlreadyAnswered bool `json:"already_answered,omitempty"`
}

// TaskStopIn is the payload of task.stop.
type TaskStopIn struct {
	TaskID string `json:"task_id,omitzero"`
	Reason string `json:"reason,omitzero"`
}

// TaskStopOut is the result of task.stop: the sessions it cancelled (none
// when every session had already ended).
type TaskStopOut struct {
	TaskID            string   `json:"task_id"`
	StoppedSessionIDs []string `json:"stopped_session_ids"`
}

// SessionSpawnIn is the payload of session.spawn.
type SessionSpawnIn struct {
	// TaskID is the task ("self" for a session; default self).
	TaskID string `json:"task_id,omitzero"`
	// Name labels the session (e.g. "reviewer").
	Name              string `json:"name,omitzero"`
	AgentProfileID    string `json:"agent_profile_id,omitzero"`
	ExecutorProfileID string `json:"executor_profile_id,omitzero"`
	// Prompt is the new session's first message; empty: the task's prompt.
	Prompt string `json:"prompt,omitzero"`
}

// SessionSpawnOut is the result of session.spawn.
type SessionSpawnOut struct {
	Session *kanban.Session `json:"session"`
	// AgentProfile is the profile the session runs with (the default one
	// when none was named); absent when no agent profile exists.
	AgentProfile *kanban.AgentProfile `json:"agent_profile,omitempty"`
}

var _ = declare(Def[TaskMessageIn, *TaskMessageOut]{
	Name:   kanban.ActionTaskMessage,
	Effect: Writes,
	Tool:   "message_task_kandev",
	Allow:  all,
	Schema: schema.Obj("", schema.P{
		"task_id":              idProp("Task to message (not your own)."),
		"prompt":               schema.Str("The message for the task's agent.").Len(1, kanban.MaxPromptLen),
		"session_id":           idProp("A live session of the task; default its newest."),
		"delivery_mode":        schema.Enum("queued: at the next turn; interrupt: cancel the current turn and deliver now.", kanban.DeliveryModes...).Default(kanban.DeliveryQueued),
		"reply_to_question_id": idProp("A question subtask task_id asked you; prompt is your answer."),
	}, "task_id", "prompt"),
	Run: (*Service).messageTask,
})

var _ = declare(Def[TaskStopIn, *TaskStopOut]{
	Name:   kanban.ActionTaskStop,
	Effect: Writes,
	Tool:   "stop_task_kandev",
	Allow:  all,
	Schema: schema.Obj("", schema.P{
		"task_id": idProp("Direct subtask whose sessions to stop."),
		"reason":  stopReason(),
	}, "task_id"),
	Run: (*Service).stopTask,
})

var _ = declare(Def[SessionSpawnIn, *SessionSpawnOut]{
	Name:   kanban.ActionSessionSpawn,
	Effect: Writes,
	Tool:   "spawn_session_kandev",
	Allow:  all,
	Schema: schema.Obj("", schema.P{
		"task_id":             selfTaskRef(`Task to start a session on; default "self".`),
		"name":                schema.Str(`Session name shown to people, e.g. "reviewer".`).Len(1, kanban.MaxNameLen),
		"agent_profile_id":    idProp("Agent profile; default the task's step's, else the task's, else its workflow's, else the default one."),
		"executor_profile_id": idProp("Executor profile; default the task's, else the default one."),
		"prompt":              schema.Str("First message; default the task's prompt.").Len(1, kanban.MaxPromptLen),
	}),
	Run: (*Service).spawnSession,
})

var _ = declare(Def[RelatedIn, *RelatedOut]{
	Name:   kanban.ActionTaskRelated,
	Effect: Reads,
	Tool:   "list_related_tasks_kandev",
	Allow:  all,
	Schema: schema.Obj("", schema.P{
		"task_id": selfTaskRef(`Task to look around; default "self" (sessions only).`),
		"verbose": schema.Bool("Include descriptions (cut at 2000 characters).").Default(false),
		"limit": schema.Int("Maximum tasks per list.").
			Range(1, kanban.MaxRelatedLimit).Default(kanban.DefaultRelatedLimit),
	}),
	Run: (*Service).related,
})

var _ = declare(Def[StepCompleteIn, *StepCompleteOut]{
	Name:   kanban.ActionStepComplete,
	Effect: Writes,
	Tool:   "step_complete_kandev",
	Allow:  AllowSession,
	Schema: schema.Obj("", schema.P{
		"summary": schema.Str("What was done in this step.").Len(1, kanban.MaxStepSummaryLen),
		"handoff": schema.Str("Notes for whoever works on the next step.").Len(1, kanban.MaxStepHandoffLen),
		"blockers": schema.Str("Problems left open that others should know about (free text; omit when none).").
			Len(1, kanban.MaxStepBlockersLen),
	}, "summary"),
	Run: (*Service).completeStep,
})

var _ = declare(Def[StepDecideIn, *StepDecideOut]{
	Name:   kanban.ActionStepDecide,
	Effect: Writes,
	Tool:   "record_step_decision_kandev",
	Allow:  all,
	Schema: schema.Obj("", schema.P{
		"task_id":  selfTaskRef(`Task decided on: yours ("self", default) or a subtask.`),
		"decision": schema.Enum("The decision.", kanban.Decisions...),
		"reason":   schema.Str("Why, in a few sentences.").Len(1, kanban.MaxDecisionReasonLen),
	}, "decision", "reason"),
	Run: (*Service).decideStep,
})

var _ = declare(Def[SetTitleIn, *SetTitleOut]{
	Name:   kanban.ActionTaskSetTitle,
	Effect: Writes,
	Tool:   "set_task_title_kandev",
	Allow:  AllowSession,
	Schema: schema.Obj("", schema.P{
		"title": schema.Str("The task's title, at most 60 characters.").Len(1, kanban.MaxTitleLen),
	}, "title"),
	Run: (*Service).setTitle,
})

// sender names who wrote a coordination message: "task:<id>" for a
// session (its bound task), "operator" otherwise.
func sender(p Principal) string {
	if p.Kind == Session {
		return "task:" + p.TaskID
	}
	return "operator"
}

// messageTask appends a prompt to the target task's newest live session
// and notifies that session. Only the target's direct parent (or the
// operator) may interrupt.
func (s *Service) messageTask(ctx context.Context, p Principal, in TaskMessageIn) (*TaskMessageOut, error) {
	// The payload passed message_task_kandev's schema (its contract, on
	// every transport): delivery_mode is one of kanban.DeliveryModes and
	// prompt is within its bounds.
	mode := in.DeliveryMode
	if mode == "" {
		mode = kanban.DeliveryQueued
	}
	t, err := s.taskFor(ctx, p, in.TaskID)
	if err != nil {
		return nil, err
	}
	if p.Kind == Session && t.ID == p.TaskID {
		return nil, kanban.FieldError("task_id", "must be another task than this session's own")
	}
	if mode == kanban.DeliveryInterrupt && p.Kind == Session && t.ParentID != p.TaskID {
		return nil, kanban.Errorf(kanban.CodeForbidden, "only the task's direct parent may interrupt it; use delivery_mode queued")
	}
	if in.ReplyToQuestionID != "" {
		return s.replyToParentQuestion(ctx, p, t, in, mode)
	}
	target, err := s.liveSession(ctx, t.ID, in.SessionID)
	if err != nil {
		return nil, err
	}
	if err := s.budgetAllows(ctx, target); err != nil {
		return nil, err
	}
	m, err := s.store.AppendMessage(ctx, kanban.Message{SessionID: target.ID, Author: sender(p), Type: "prompt", Content: in.Prompt})
	if err != nil {
		return nil, err
	}
	s.publishMessage(m, t.WorkspaceID, mode)
	s.agents.Deliver(target.ID, mode == kanban.DeliveryInterrupt)
	return &TaskMessageOut{Message: m, SessionID: target.ID, DeliveryMode: mode}, nil
}

// publishMessage tells the message's session and workspace about a
// prompt delivered to it.
func (s *Service) publishMessage(m *kanban.Message, workspaceID, mode string) {
	ev := kanban.SessionMessage{DeliveryMode: mode, Message: m}
	kanban.EventSessionMessage.Publish(s.pub, SessionTopic(m.SessionID), ev)
	kanban.EventSessionMessage.Publish(s.pub, WorkspaceTopic(workspaceID), ev)
}

// liveSession returns the task's newest session that has not ended, or
// the one named by sessionID (CONFLICT when there is none or it ended).
func (s *Service) liveSession(ctx context.Context, taskID, sessionID string) (*kanban.Session, error) {
	if sessionID != "" {
		sess, err := s.store.GetSession(ctx, sessionID)
		if err != nil || sess.TaskID != taskID {
			return nil, kanban.Errorf(kanban.CodeNotFound, "session_id: no such session on this task")
		}
		if sess.State.Ended() {
			return nil, kanban.Errorf(kanban.CodeConflict, "the session has ended; message the task or spawn a new session")
		}
		return sess, nil
	}
	var found *kanban.Session
	err := s.eachSession(ctx, taskID, func(sess *kanban.Session) bool {
		// A step participant's session (a reviewer's) is no target of
		// what is said to "the task": that is its primary agent.
		if !sess.State.Ended() && !kanban.IsParticipantSession(sess.Name) {
			found = sess
			return false
		}
		return true
	})
	if err != nil {
		return nil, err
	}
	if found == nil {
		return nil, kanban.Errorf(kanban.CodeConflict, "the task has no running session; spawn a new session on it first")
	}
	return found, nil
}

// eachSession calls fn on the task's sessions, newest first, until fn
// returns false.
func (s *Service) eachSession(ctx context.Context, taskID string, fn func(*kanban.Session) bool) error {
	pg := kanban.Page{Limit: kanban.MaxLimit}
	for {
		l, err := s.store.ListSessions(ctx, taskID, pg)
		if err != nil {
			return err
		}
		for i := range l.Items {
			if !fn(&l.Items[i]) {
				return nil
			}
		}
		if l.NextCursor == "" {
			return nil
		}
		pg.Cursor = l.NextCursor
	}
}

// stopTask cancels every live session of a task. A session may stop only
// its direct children. Stopping a task whose sessions have all ended
// succeeds and stops nothing.
func (s *Service) stopTask(ctx context.Context, p Principal, in TaskStopIn) (*TaskStopOut, error) {
	t, err := s.taskFor(ctx, p, in.TaskID)
	if err != nil {
		return nil, err
	}
	if p.Kind == Session && t.ParentID != p.TaskID {
		return nil, kanban.Errorf(kanban.CodeForbidden, "a session may only stop its direct child tasks")
	}
	note := "Stopped by " + sender(p)
	if in.Reason != "" {
		note += ": " + in.Reason
	}
	stopped, err := s.endSessions(ctx, t.ID, "", kanban.Message{Author: sender(p), Type: "status", Content: note})
	if err != nil {
		return nil, err
	}
	return &TaskStopOut{TaskID: t.ID, StoppedSessionIDs: stopped}, nil
}

// endSessions cancels the live sessions of a task (only sessionID when
// set) with note, announces them and stops their agents; it returns the
// ids of the sessions it cancelled.
func (s *Service) endSessions(ctx context.Context, taskID, sessionID string, note kanban.Message) ([]string, error) {
	var (
		stopped []kanban.Session
		err     error
	)
	if sessionID != "" {
		stopped, err = s.store.CancelSession(ctx, sessionID, note)
	} else {
		stopped, err = s.store.CancelSessions(ctx, taskID, note)
	}
	if err != nil {
		return nil, err
	}
	if sessionID == "" {
		s.events.Emit(kanban.TaskReleased{TaskID: taskID})
	}
	ids := make([]string, 0, len(stopped))
	managed := false
	for i := range stopped {
		sess := &stopped[i]
		ids = append(ids, sess.ID)
		managed = managed || sess.Managed
		kanban.EventSessionStopped.PublishContext(ctx, s.pub, SessionTopic(sess.ID), sess)
		kanban.EventSessionUpdated.PublishContext(ctx, s.pub, WorkspaceTopic(sess.WorkspaceID), sess)
	}
	s.agents.Stopped(ids)
	if managed {
		if t, err := s.store.GetTask(ctx, taskID); err == nil {
			kanban.EventTaskUpdated.PublishContext(ctx, s.pub, WorkspaceTopic(t.WorkspaceID), t)
		}
	}
	return ids, nil
}

// spawnSession starts a new session on an existing task the caller may
// change; its first message is the given prompt, else the task's prompt.
func (s *Service) spawnSession(ctx context.Context, p Principal, in SessionSpawnIn) (*SessionSpawnOut, error) {
	if err := kanban.SingleLine("name", in.Name); err != nil {
		return nil, err
	}
	if in.TaskID == "" && p.Kind == Session {
		in.TaskID = "self"
	}
	// A new session acts on its task with the prompt given here: a write,
	// within the caller's write scope (mutableTask).
	t, err := s.mutableTask(ctx, p, in.TaskID)
	if err != nil {
		return nil, err
	}
	agent, executor, err := s.launchProfiles(ctx, t, in.AgentProfileID, in.ExecutorProfileID)
	if err != nil {
		return nil, err
	}
	if err := s.checkProfiles(ctx, t.WorkspaceID, agent, executor); err != nil {
		return nil, err
	}
	sc := s.firstSession(t.Title, launchText(t), agent, executor)
	sc.TaskID, sc.Name = t.ID, in.Name
	if in.Prompt != "" {
		sc.FirstMessage.Author, sc.FirstMessage.Content = sender(p), in.Prompt
	}
	sess, _, err := s.store.CreateSession(ctx, sc)
	if err != nil {
		return nil, err
	}
	if in.Prompt == "" {
		s.launched(ctx, t)
	}
	kanban.EventSessionCreated.PublishContext(ctx, s.pub, WorkspaceTopic(t.WorkspaceID), sess)
	s.agents.Start(sess)
	out := &SessionSpawnOut{Session: sess}
	if sess.AgentProfileID != "" {
		if out.AgentProfile, err = s.store.GetAgentProfile(ctx, sess.AgentProfileID); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// stopReason is why agents are stopped, recorded in their conversations
// (task.stop, session.stop).
func stopReason() schema.S {
	return schema.Str("Why, recorded in the stopped sessions' conversations.").Len(1, kanban.MaxStopReasonLen)
}
