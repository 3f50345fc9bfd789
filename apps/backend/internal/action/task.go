package action

import (
	"context"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
	"github.com/kandev/kandev/apps/backend/internal/schema"
)

// TaskListIn is the payload of task.list.
type TaskListIn struct {
	WorkspaceID     string           `json:"workspace_id,omitzero"`
	WorkflowID      string           `json:"workflow_id,omitzero"`
	WorkflowStepID  string           `json:"workflow_step_id,omitzero"`
	ParentID        string           `json:"parent_id,omitzero"`
	State           kanban.TaskState `json:"state,omitzero"`
	IncludeArchived bool             `json:"include_archived,omitzero"`
	// Verbose lists every field of each task (kanban.TaskDetail) instead of
	// a summary with a preview of its prompt (kanban.TaskSummary).
	Verbose bool   `json:"verbose,omitzero"`
	Limit   int    `json:"limit,omitzero"`
	Cursor  string `json:"cursor,omitzero"`
}

// TaskCreateIn is the payload of task.create.
type TaskCreateIn struct {
	WorkspaceID       string   `json:"workspace_id,omitzero"`
	WorkflowID        string   `json:"workflow_id,omitzero"`
	WorkflowStepID    string   `json:"workflow_step_id,omitzero"`
	ParentID          string   `json:"parent_id,omitzero"`
	Title             string   `json:"title,omitzero"`
	Prompt            string   `json:"prompt,omitzero"`
	AgentProfileID    string   `json:"agent_profile_id,omitzero"`
	ExecutorProfileID string   `json:"executor_profile_id,omitzero"`
	StartAgent        *bool    `json:"start_agent,omitzero"`
	RepositoryID      string   `json:"repository_id,omitzero"`
	LocalPath         string   `json:"local_path,omitzero"`
	RepositoryURL     string   `json:"repository_url,omitzero"`
	BaseBranch        string   `json:"base_branch,omitzero"`
	ExternalID        string   `json:"external_id,omitzero"`
	BlockedBy         []string `json:"blocked_by,omitzero"`
	// StartWhenUnblocked defaults to true when BlockedBy is non-empty.
	StartWhenUnblocked *bool `json:"start_when_unblocked,omitzero"`
	// Autopilot and WorkspaceMode: see kanban.Task.
	Autopilot     bool   `json:"autopilot,omitzero"`
	WorkspaceMode string `json:"workspace_mode,omitzero"`
}

// TaskCreateOut is the result of task.create.
type TaskCreateOut struct {
	Task         *kanban.Task `json:"task"`
	Deduplicated bool         `json:"deduplicated"`
	// SessionID is the session started for the task (start_agent), if any.
	SessionID string `json:"session_id,omitempty"`
}

// TaskUpdateIn is the payload of task.update.
type TaskUpdateIn struct {
	TaskID       string            `json:"task_id,omitzero"`
	Title        *string           `json:"title,omitzero"`
	Description  *string           `json:"description,omitzero"`
	State        *kanban.TaskState `json:"state,omitzero"`
	LaunchPrompt *string           `json:"deferred_launch_prompt,omitzero"`
	// AgentProfileID and ExecutorProfileID replace the profiles kept with
	// the task; "" clears one.
	AgentProfileID    *string `json:"agent_profile_id,omitzero"`
	ExecutorProfileID *string `json:"executor_profile_id,omitzero"`
}

// TaskMoveIn is the payload of task.move. WorkflowID, when set, names the
// target step's workflow, which may be another one of the task's
// workspace; Prompt is a hand-off message for the agent at the new step.
type TaskMoveIn struct {
	TaskID         string `json:"task_id,omitzero"`
	WorkflowID     string `json:"workflow_id,omitzero"`
	WorkflowStepID string `json:"workflow_step_id,omitzero"`
	Position       *int   `json:"position,omitzero"`
	Prompt         string `json:"prompt,omitzero"`
}

// TaskStateIn is the payload of task.set_state.
type TaskStateIn struct {
	TaskID string           `json:"task_id,omitzero"`
	State  kanban.TaskState `json:"state,omitzero"`
}

// DependencyIn is the payload of task.dependency.add/remove.
type DependencyIn struct {
	TaskID          string `json:"task_id,omitzero"`
	DependsOnTaskID string `json:"depends_on_task_id,omitzero"`
}

// TaskListRelIn is the payload of task.dependency.list.
type TaskListRelIn struct {
	TaskID string `json:"task_id,omitzero"`
	// Direction is "blockers" (tasks this one depends on) or "blocked".
	Direction string `json:"direction,omitzero"`
	Limit     int    `json:"limit,omitzero"`
	Cursor    string `json:"cursor,omitzero"`
}

// Deleted is the result of delete actions.
type Deleted struct {
	ID      string `json:"id"`
	Deleted bool   `json:"deleted"`
}

// updateCompleting updates a task, then starts the tasks that waited for
// it when it is now COMPLETED. When this update ended it (it was not
// ended before: an edit or a state set again on an ended task is not an
// end), its parent's on_children_completed is considered, once.
func (s *Service) updateCompleting(ctx context.Context, id string, u kanban.TaskUpdate) (*kanban.Task, error) {
	t, was, err := s.store.UpdateTaskFrom(ctx, id, u)
	if err != nil {
		return nil, err
	}
	if t.State.Ended() && !was.Ended() {
		defer s.events.Emit(kanban.TaskEnded{Task: t}) // on_children_completed of its parent
	}
	if t.State != kanban.TaskCompleted {
		return t, nil
	}
	if err := s.startUnblocked(ctx, t); err != nil {
		return nil, err
	}
	return t, nil
}

var _ = declare(Def[TaskListIn, any]{
	Name:   kanban.ActionTaskList,
	Effect: Reads,
	Allow:  all,
	Schema: schema.Obj("", pageProps(schema.P{
		"workflow_id":      idProp("Only tasks of this workflow."),
		"workflow_step_id": idProp("Only tasks on this step, in board order."),
		"state":            schema.Enum("Only tasks in this state.", taskStates...),
		"include_archived": schema.Bool("Include archived tasks.").Default(false),
		"verbose":          schema.Bool("Every field and the whole prompt instead of a summary.").Default(false),
		"workspace_id":     idProp("The workspace; default the session's, else the first."),
		"parent_id":        idProp("Only subtasks of this task."),
	})),
	Run: (*Service).listTasks,
})

var _ = declare(Def[IDIn, *kanban.Task]{
	Name:   kanban.ActionTaskGet,
	Effect: Reads,
	Allow:  all,
	Schema: schema.Obj("", schema.P{"id": ownTaskRef("The task")}, "id"),
	Run: func(s *Service, ctx context.Context, p Principal, in IDIn) (*kanban.Task, error) {
		return s.taskInScope(ctx, p, in.ID)
	},
})

var _ = declare(Def[TaskCreateIn, *TaskCreateOut]{
	Name:   kanban.ActionTaskCreate,
	Effect: Writes,
	Tool:   "create_task_kandev",
	Allow:  all,
	Schema: schema.Obj("", schema.P{
		"title":  schema.Str("Short title shown on the board.").Len(1, kanban.MaxTitleLen),
		"prompt": schema.Str("Instructions for the task's agent, stored as its description.").Len(0, kanban.MaxPromptLen),
		"parent_id": taskRef(`Parent task; "self" makes it a subtask of yours. From task mode: your task, a subtask or a ` +
			`task you created.`),
		"workspace_id":        idProp("Workspace; default yours, else the first."),
		"workflow_id":         idProp("Workflow; default yours, else the workspace's first."),
		"workflow_step_id":    idProp("Step; default the workflow's start step."),
		"agent_profile_id":    idProp("Agent profile of the task's agents, kept for later starts too; default the default one."),
		"executor_profile_id": idProp("Executor profile of the task's agents, kept for later starts too; default the default one."),
		"start_agent":         schema.Bool("Start an agent session (its id is returned).").Default(true),
		"repository_id":       idProp("Repository to work in; at most one of repository_id, local_path, repository_url."),
		"local_path":          schema.Str("Local checkout to work in (new ones: operator only).").Len(1, kanban.MaxPathLen),
		"repository_url":      schema.Str("Remote repository URL (new ones: operator only).").Len(1, kanban.MaxURLLen),
		"base_branch":         schema.Str("Branch to start from; default the repository's.").Len(1, kanban.MaxBranchLen),
		"external_id":         schema.Str("Idempotency key, unique per workspace.").Len(1, kanban.MaxExternalIDLen),
		"blocked_by": schema.Arr(`Tasks of the workspace this one depends on ("self" allowed).`,
			taskRef("A blocking task id.")).Items(0, kanban.MaxBlockedBy).Unique(),
		"start_when_unblocked": schema.Bool("Start the agent only once every blocker is completed. Default: true with blocked_by; false " +
			"creates the dependencies with no automatic start."),
		"autopilot": schema.Bool("Autopilot: its agent never asks the operator; a subtask asks its parent " +
			"(ask_parent_question_kandev). Fixed at creation.").Default(false),
		"workspace_mode": schema.Enum("Where a subtask works: inherit_parent shares the parent's directory (default without "+
			"a repository of its own); new_workspace gets its own.", kanban.WorkspaceInheritParent, kanban.WorkspaceNew),
	}, "title"),
	Aliases: Aliases{Names: []Alias{{From: "description", To: "prompt"}}},
	Run:     (*Service).createTask,
})

var _ = declare(Def[TaskUpdateIn, *kanban.Task]{
	Name:   kanban.ActionTaskUpdate,
	Effect: Writes,
	Allow:  all,
	Schema: schema.Obj("", schema.P{
		"task_id":     taskRef(`Task to update; "self" is yours.`),
		"title":       schema.Str("New title.").Len(1, kanban.MaxTitleLen),
		"description": schema.Str("New description: the prompt its agents get.").Len(0, kanban.MaxPromptLen),
		"state":       schema.Enum("New state (lowercase and aliases such as done are accepted).", taskStates...),
		"deferred_launch_prompt": schema.Str("New prompt for the agent a task waiting on its blockers will start; CONFLICT once "+
			"it started (use message_task_kandev).").Len(1, kanban.MaxPromptLen),
		"agent_profile_id": optIDProp("Agent profile its later agents start with (a step's own profile still " +
			`outranks it); "" clears it: its step's or workflow's, else the default.`),
		"executor_profile_id": optIDProp(`Executor profile its later agents start with; "" clears it: the default.`),
	}, "task_id"),
	Aliases: Aliases{Names: []Alias{{From: "prompt", To: "description"}}, Values: stateAliases},
	Run:     (*Service).updateTask,
})

// updateTask answers task.update: every check (the deferred prompt's
// task still waiting, the profiles usable in the task's workspace)
// before the one write.
func (s *Service) updateTask(ctx context.Context, p Principal, in TaskUpdateIn) (*kanban.Task, error) {
	return s.changeTask(ctx, p, in.TaskID, kanban.EventTaskUpdated, func(id string) (*kanban.Task, error) {
		if in.LaunchPrompt != nil {
			if err := s.awaitingStart(ctx, id); err != nil {
				return nil, err
			}
		}
		if in.AgentProfileID != nil || in.ExecutorProfileID != nil {
			if p.Kind != Operator { // an agent must not pick what its own task's next agent may do
				return nil, kanban.Errorf(kanban.CodeForbidden, "only the operator changes the profiles a task's agents start with")
			}
			t, err := s.store.GetTask(ctx, id)
			if err != nil {
				return nil, err
			}
			if err := s.checkProfiles(ctx, t.WorkspaceID, deref(in.AgentProfileID), deref(in.ExecutorProfileID)); err != nil {
				return nil, err
			}
		}
		return s.updateCompleting(ctx, id, kanban.TaskUpdate{Title: in.Title, Description: in.Description,
			State: in.State, LaunchPrompt: in.LaunchPrompt, AgentProfileID: in.AgentProfileID, ExecutorProfileID: in.ExecutorProfileID})
	})
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

var _ = declare(Def[TaskStateIn, *kanban.Task]{
	Name:   kanban.ActionTaskSetState,
	Effect: Writes,
	Tool:   "update_task_state_kandev",
	Allow:  AllowOperator | AllowConfigSession,
	Schema: schema.Obj("", schema.P{
		"task_id": taskRef(`Task to change; "self" is your own task (sessions only).`),
		"state":   schema.Enum("The new state (lowercase and the reference product's aliases such as done or in_progress are accepted).", taskStates...),
	}, "task_id", "state"),
	Aliases: Aliases{Values: stateAliases},
	Run: func(s *Service, ctx context.Context, p Principal, in TaskStateIn) (*kanban.Task, error) {
		return s.changeTask(ctx, p, in.TaskID, kanban.EventTaskUpdated, func(id string) (*kanban.Task, error) {
			return s.updateCompleting(ctx, id, kanban.TaskUpdate{State: &in.State})
		})
	},
})

var _ = declare(Def[TaskMoveIn, *kanban.Task]{
	Name:   kanban.ActionTaskMove,
	Effect: Writes,
	Tool:   "move_task_kandev",
	Allow:  all,
	Schema: schema.Obj("", schema.P{
		"task_id":          taskRef(`Task to move; "self" is yours.`),
		"workflow_id":      idProp("Workflow of the target step; default the task's."),
		"workflow_step_id": idProp("Target step, of workflow_id."),
		"position": schema.Int("0-based position in the step; default last.").
			Range(0, kanban.MaxTaskPosition),
		"prompt": schema.Str("Hand-off message for the agent at the new step.").Len(1, kanban.MaxPromptLen),
	}, "task_id", "workflow_step_id"),
	Run: (*Service).moveTask,
})

var _ = declare(Def[TaskRefIn, *Deleted]{
	Name:   kanban.ActionTaskDelete,
	Effect: Writes,
	Tool:   "delete_task_kandev",
	Allow:  all,
	Schema: schema.Obj("", schema.P{
		"task_id": idProp("Task to delete."),
	}, "task_id"),
	Run: func(s *Service, ctx context.Context, p Principal, in TaskRefIn) (*Deleted, error) {
		t, err := s.mutableTask(ctx, p, in.TaskID)
		if err != nil {
			return nil, err
		}
		if p.Kind == Session && t.ID == p.TaskID {
			return nil, kanban.Errorf(kanban.CodeForbidden, "a session cannot delete its own task")
		}
		if err := s.releaseTask(ctx, t.ID, "Stopped: the task is being deleted"); err != nil {
			return nil, err
		}
		if err := s.store.DeleteTask(ctx, t.ID); err != nil {
			return nil, err
		}
		kanban.EventTaskDeleted.PublishContext(ctx, s.pub, WorkspaceTopic(t.WorkspaceID), kanban.DeletedTask{ID: t.ID, WorkspaceID: t.WorkspaceID})
		s.events.Emit(kanban.StepFreed{StepID: t.WorkflowStepID})
		return &Deleted{ID: t.ID, Deleted: true}, nil
	},
})

// releaseTask stops a task's agents (noting why) and frees what the
// runtime holds for it (its git worktree; the branch is kept).
func (s *Service) releaseTask(ctx context.Context, taskID, why string) error {
	if _, err := s.endSessions(ctx, taskID, "", kanban.Message{Author: "kandev", Type: "status", Content: why}); err != nil {
		return err
	}
	return s.agents.ReleaseTask(ctx, taskID)
}

// changeTask applies change to a task the principal may change (id may be
// "self") and announces the changed task to its workspace as event.
func (s *Service) changeTask(ctx context.Context, p Principal, id string, event kanban.Event[*kanban.Task], change func(id string) (*kanban.Task, error)) (*kanban.Task, error) {
	t, err := s.mutableTask(ctx, p, id)
	if err != nil {
		return nil, err
	}
	out, err := change(t.ID)
	if err != nil {
		return nil, err
	}
	event.PublishContext(ctx, s.pub, WorkspaceTopic(out.WorkspaceID), out)
	return out, nil
}

// mutableTask resolves "self" and checks the principal may change the
// task: every write on a task a session names goes through here. Under
// --session-scope tree (the default) a task session changes only the
// tasks of writeReach; the operator, a config-mode session (the
// workspace's delegate) and, under --session-scope workspace, every
// session change any task of their workspace.
func (s *Service) mutableTask(ctx context.Context, p Principal, id string) (*kanban.Task, error) {
	if id == "" {
		return nil, kanban.FieldError("task_id", "is required")
	}
	return s.writableTask(ctx, p, id, writeForbidden)
}

// writableTask is mutableTask for a non-empty id, refusing a task outside
// the write scope with the message forbidden.
func (s *Service) writableTask(ctx context.Context, p Principal, id, forbidden string) (*kanban.Task, error) {
	if !s.treeScoped(p) {
		return s.taskInScope(ctx, p, id)
	}
	return s.taskInTree(ctx, p, id, writeReach, forbidden)
}

// treeScoped reports whether p's writes are limited to writeReach: a
// session that is not in config mode, unless the operator chose
// --session-scope workspace.
func (s *Service) treeScoped(p Principal) bool {
	return p.Kind == Session && p.Mode != kanban.ModeConfig && s.scope != kanban.ScopeWorkspace
}

// listTasks answers task.list: a page of *kanban.List[kanban.TaskSummary],
// or of kanban.TaskDetail when verbose.
func (s *Service) listTasks(ctx context.Context, p Principal, in TaskListIn) (any, error) {
	ws, err := s.workspaceFor(ctx, p, in.WorkspaceID)
	if err != nil {
		return nil, err
	}
	if in.State != "" && !in.State.Valid() {
		return nil, kanban.FieldError("state", "is not a valid task state")
	}
	f := kanban.TaskFilter{WorkspaceID: ws, WorkflowID: in.WorkflowID, WorkflowStepID: in.WorkflowStepID,
		ParentID: in.ParentID, State: in.State, IncludeArchived: in.IncludeArchived}
	if f.ParentID != "" {
		if f.ParentID, err = resolveTaskID(p, f.ParentID); err != nil {
			return nil, err
		}
	}
	page := kanban.Page{Limit: in.Limit, Cursor: in.Cursor}
	if in.Verbose {
		return s.store.ListTaskDetails(ctx, f, page)
	}
	return s.store.ListTaskSummaries(ctx, f, page)
}

// moveTask moves a task to a step (of another workflow of its workspace
// when workflow_id names it) and hands the optional prompt to the agent at
// the new step: queued to the task's live session, else kept as the
// launch prompt of the next session started on it.
func (s *Service) moveTask(ctx context.Context, p Principal, in TaskMoveIn) (*kanban.Task, error) {
	pos := -1
	if in.Position != nil {
		pos = *in.Position
	}
	var from string
	moved, err := s.changeTask(ctx, p, in.TaskID, kanban.EventTaskMoved, func(id string) (*kanban.Task, error) {
		before, err := s.store.GetTask(ctx, id)
		if err != nil {
			return nil, err
		}
		from = before.WorkflowStepID
		if in.WorkflowID == "" || in.WorkflowID == before.WorkflowID {
			return s.store.MoveTask(ctx, id, in.WorkflowStepID, pos)
		}
		st, err := s.store.GetStep(ctx, in.WorkflowStepID)
		if err != nil {
			return nil, err
		}
		if st.WorkflowID != in.WorkflowID {
			return nil, kanban.FieldError("workflow_step_id", "must be a step of workflow_id")
		}
		return s.store.MoveTaskAcross(ctx, id, in.WorkflowStepID, pos)
	})
	if err != nil {
		return nil, err
	}
	if moved.WorkflowStepID != from {
		s.events.Emit(kanban.TaskMoved{Task: moved, FromStepID: from})
	}
	if in.Prompt != "" {
		if err := s.handOff(ctx, p, moved, in.Prompt); err != nil {
			return nil, err
		}
	}
	return moved, nil
}

// handOff gives a moved task's prompt to its agent: queued to its live
// session (an older hand-off still kept for a next session is then
// superseded and cleared), else kept as the first message of the next
// session started.
func (s *Service) handOff(ctx context.Context, p Principal, t *kanban.Task, prompt string) error {
	_, err := s.SendPrompt(ctx, t.ID, sender(p), prompt)
	if err == nil {
		if cur, gerr := s.store.GetTask(ctx, t.ID); gerr == nil {
			s.launched(ctx, cur)
		}
		return nil
	}
	if kanban.ErrorCode(err) != kanban.CodeConflict {
		return err
	}
	_, err = s.store.UpdateTask(ctx, t.ID, kanban.TaskUpdate{LaunchPrompt: &prompt})
	return err
}

// awaitingStart refuses (CONFLICT) a deferred launch prompt for a task that
// does not wait for its blockers to start its agent.
func (s *Service) awaitingStart(ctx context.Context, taskID string) error {
	t, err := s.store.GetTask(ctx, taskID)
	if err != nil {
		return err
	}
	sessions, err := s.store.ListSessions(ctx, taskID, kanban.Page{Limit: 1})
	if err != nil {
		return err
	}
	if !t.StartWhenUnblocked || len(sessions.Items) > 0 {
		return kanban.Errorf(kanban.CodeConflict, "deferred_launch_prompt applies only to a task still waiting on its blockers to start its agent; send new context with message_task_kandev instead")
	}
	return nil
}
