package action

import (
	"context"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
	"github.com/kandev/kandev/apps/backend/internal/schema"
)

// Routines: schedules that create a task or wake one (operator only).
// Their runs are made by the scheduler (internal/routine), which calls
// RunRoutine.

// RoutineFieldsIn is a routine's settable fields: every one is optional in
// routine.update (omitted: kept), and routine.create requires some.
type RoutineFieldsIn struct {
	Name              *string `json:"name,omitzero"`
	Schedule          *string `json:"schedule,omitzero"`
	TimeZone          *string `json:"time_zone,omitzero"`
	Title             *string `json:"title,omitzero"`
	Prompt            *string `json:"prompt,omitzero"`
	WorkflowID        *string `json:"workflow_id,omitzero"`
	WorkflowStepID    *string `json:"workflow_step_id,omitzero"`
	AgentProfileID    *string `json:"agent_profile_id,omitzero"`
	ExecutorProfileID *string `json:"executor_profile_id,omitzero"`
	StartAgent        *bool   `json:"start_agent,omitzero"`
	TaskID            *string `json:"task_id,omitzero"`
	Missed            *string `json:"missed,omitzero"`
	Enabled           *bool   `json:"enabled,omitzero"`
}

func (f RoutineFieldsIn) fields() kanban.RoutineFields {
	return kanban.RoutineFields{Name: f.Name, Schedule: f.Schedule, TimeZone: f.TimeZone, Title: f.Title, Prompt: f.Prompt,
		WorkflowID: f.WorkflowID, WorkflowStepID: f.WorkflowStepID, AgentProfileID: f.AgentProfileID,
		ExecutorProfileID: f.ExecutorProfileID, TaskID: f.TaskID, Missed: f.Missed, StartAgent: f.StartAgent, Enabled: f.Enabled}
}

// RoutineCreateIn is the payload of routine.create.
type RoutineCreateIn struct {
	WorkspaceID string `json:"workspace_id,omitzero"`
	Target      string `json:"target,omitzero"`
	RoutineFieldsIn
}

// RoutineUpdateIn is the payload of routine.update.
type RoutineUpdateIn struct {
	ID string `json:"id,omitzero"`
	RoutineFieldsIn
}

// RoutineRunsIn is the payload of routine.runs.
type RoutineRunsIn struct {
	ID     string `json:"id,omitzero"`
	Limit  int    `json:"limit,omitzero"`
	Cursor string `json:"cursor,omitzero"`
}

func routineFieldProps() schema.P {
	return schema.P{
		"name": schema.Str("Name shown in lists.").Len(1, kanban.MaxNameLen),
		"schedule": schema.Str("Five-field cron expression (minute hour day-of-month month day-of-week, e.g. \"0 9 * * 1-5\"), "+
			"or @hourly, @daily, @weekly, @monthly, @yearly; read in time_zone.").Len(1, kanban.MaxScheduleLen),
		"time_zone": schema.Str("IANA time zone the schedule is read in, e.g. Europe/Paris; default UTC.").Len(1, kanban.MaxNameLen),
		"title":     schema.Str("create_task: the created task's title.").Len(1, kanban.MaxTitleLen),
		"prompt": schema.Str("create_task: the created task's prompt; wake_task: what the task's agent is told (required).").
			Len(0, kanban.MaxPromptLen),
		"workflow_id":         idProp("create_task: the created task's workflow; default the workspace's first."),
		"workflow_step_id":    idProp("create_task: the created task's step; default the workflow's start step."),
		"agent_profile_id":    idProp("create_task: the created task's agent profile; default the default one."),
		"executor_profile_id": idProp("create_task: the created task's executor profile; default the default one."),
		"start_agent":         schema.Bool("create_task: start the created task's agent; default true."),
		"task_id":             idProp("wake_task: the task whose agent is woken (a live session gets the prompt as its next turn, else one is started)."),
		"missed": schema.Enum("What runs that fell due while no backend was running become: skip (recorded as missed; the default) "+
			"or run_once (one run now stands for all of them).", kanban.RoutineMissedPolicies...),
		"enabled": schema.Bool("Whether it runs; default true. Enabling it again schedules it from now: runs of the disabled time are not made up."),
	}
}

var _ = declare(Def[RoutineCreateIn, *kanban.Routine]{
	Name:   kanban.ActionRoutineCreate,
	Effect: Writes,
	Allow:  AllowOperator,
	Schema: schema.Obj("", func() schema.P {
		p := routineFieldProps()
		p["workspace_id"] = idProp("The routine's workspace.")
		p["target"] = schema.Enum("What a run does: create_task (a new task each run) or wake_task (wake task_id's agent).",
			kanban.RoutineTargets...)
		return p
	}(), "workspace_id", "name", "schedule", "target"),
	Run: func(s *Service, ctx context.Context, _ Principal, in RoutineCreateIn) (*kanban.Routine, error) {
		r, _ := in.fields().Apply(kanban.Routine{WorkspaceID: in.WorkspaceID, Target: in.Target, StartAgent: true, Enabled: true})
		if err := s.checkRoutine(ctx, &r); err != nil {
			return nil, err
		}
		return s.store.CreateRoutine(ctx, r)
	},
})

var _ = declare(Def[RoutineUpdateIn, *kanban.Routine]{
	Name:   kanban.ActionRoutineUpdate,
	Effect: Writes,
	Allow:  AllowOperator,
	Schema: schema.Obj("", func() schema.P {
		p := routineFieldProps()
		p["id"] = idProp("The routine.")
		return p
	}(), "id"),
	Run: func(s *Service, ctx context.Context, _ Principal, in RoutineUpdateIn) (*kanban.Routine, error) {
		cur, err := s.store.GetRoutine(ctx, in.ID)
		if err != nil {
			return nil, err
		}
		r, reschedule := in.fields().Apply(*cur)
		if err := s.checkRoutine(ctx, &r); err != nil {
			return nil, err
		}
		return s.store.ReplaceRoutine(ctx, r, reschedule)
	},
})

var _ = declare(Def[IDIn, *kanban.Routine]{
	Name:   kanban.ActionRoutineGet,
	Effect: Reads,
	Allow:  AllowOperator,
	Schema: schema.Obj("", schema.P{"id": idProp("The routine.")}, "id"),
	Run: func(s *Service, ctx context.Context, _ Principal, in IDIn) (*kanban.Routine, error) {
		return s.store.GetRoutine(ctx, in.ID)
	},
})

var _ = declare(Def[WorkflowListIn, *kanban.List[kanban.Routine]]{
	Name:   kanban.ActionRoutineList,
	Effect: Reads,
	Allow:  AllowOperator,
	Schema: schema.Obj("", pageProps(schema.P{"workspace_id": idProp("The workspace.")}), "workspace_id"),
	Run: func(s *Service, ctx context.Context, _ Principal, in WorkflowListIn) (*kanban.List[kanban.Routine], error) {
		return s.store.ListRoutines(ctx, in.WorkspaceID, kanban.Page{Limit: in.Limit, Cursor: in.Cursor})
	},
})

var _ = declare(Def[IDIn, *Deleted]{
	Name:   kanban.ActionRoutineDelete,
	Effect: Writes,
	Allow:  AllowOperator,
	Schema: schema.Obj("", schema.P{"id": idProp("The routine; its runs are deleted with it.")}, "id"),
	Run: func(s *Service, ctx context.Context, _ Principal, in IDIn) (*Deleted, error) {
		if err := s.store.DeleteRoutine(ctx, in.ID); err != nil {
			return nil, err
		}
		return &Deleted{ID: in.ID, Deleted: true}, nil
	},
})

var _ = declare(Def[RoutineRunsIn, *kanban.List[kanban.RoutineRun]]{
	Name:   kanban.ActionRoutineRuns,
	Effect: Reads,
	Allow:  AllowOperator,
	Schema: schema.Obj("", pageProps(schema.P{"id": idProp("The routine.")}), "id"),
	Run: func(s *Service, ctx context.Context, _ Principal, in RoutineRunsIn) (*kanban.List[kanban.RoutineRun], error) {
		return s.store.ListRoutineRuns(ctx, in.ID, kanban.Page{Limit: in.Limit, Cursor: in.Cursor})
	},
})

// checkRoutine validates r and what it names, before anything is
// written, and sets its next run from now: a create_task routine's task
// is resolved as task.create would resolve it (its workflow and step in
// the workspace, its profiles usable there); a wake_task routine's task
// must be an unarchived task of the workspace.
func (s *Service) checkRoutine(ctx context.Context, r *kanban.Routine) error {
	sched, err := r.Check()
	if err != nil {
		return err
	}
	if r.Target == kanban.RoutineCreateTask {
		if _, err := s.taskCreateOf(ctx, Principal{Kind: Operator}, routineTaskIn(r, r.NextRunAt)); err != nil {
			return err
		}
		if err := s.checkProfiles(ctx, r.WorkspaceID, r.AgentProfileID, r.ExecutorProfileID); err != nil {
			return err
		}
		if err := s.routinePlace(ctx, r); err != nil {
			return err
		}
	} else {
		t, err := s.store.GetTask(ctx, r.TaskID)
		if err != nil || t.WorkspaceID != r.WorkspaceID {
			return kanban.Errorf(kanban.CodeNotFound, "task_id: no such task in the routine's workspace")
		}
		if t.ArchivedAt != nil {
			return kanban.FieldError("task_id", "the task is archived")
		}
	}
	r.NextRunAt = sched.Next(kanban.Now())
	return nil
}

// routinePlace checks that a create_task routine's workflow and step are
// the workspace's, and the step its workflow's.
func (s *Service) routinePlace(ctx context.Context, r *kanban.Routine) error {
	wf := r.WorkflowID
	if r.WorkflowStepID != "" {
		st, err := s.store.GetStep(ctx, r.WorkflowStepID)
		if err != nil || (wf != "" && st.WorkflowID != wf) {
			return kanban.Errorf(kanban.CodeNotFound, "workflow_step_id: no such step in the routine's workflow")
		}
		wf = st.WorkflowID
	}
	if wf == "" {
		return nil
	}
	w, err := s.store.GetWorkflow(ctx, wf)
	if err != nil || w.WorkspaceID != r.WorkspaceID {
		return kanban.Errorf(kanban.CodeNotFound, "workflow_id: no such workflow in the routine's workspace")
	}
	return nil
}
