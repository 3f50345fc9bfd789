package action

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// RunRoutine makes a claimed run of r: unless its previous run is still
// in flight, it creates r's task or wakes r's task's agent, and records
// what came of it. It returns the run as finished.
func (s *Service) RunRoutine(ctx context.Context, r *kanban.Routine, run kanban.RoutineRun) kanban.RoutineRun {
	busy, why, err := s.routineInFlight(ctx, r)
	switch {
	case err != nil: // recorded as failed below
	case busy:
		run.Outcome, run.Detail = kanban.RunSkipped, joinDetail(run.Detail, why)
	case r.Target == kanban.RoutineCreateTask:
		var out *TaskCreateOut
		in := routineTaskIn(r, run.ScheduledFor)
		in.StartAgent = &r.StartAgent
		if out, err = s.createTask(ctx, Principal{Kind: Operator}, in); err == nil {
			run.Outcome, run.TaskID = kanban.RunCreated, out.Task.ID
		}
	default:
		if t, gerr := s.store.GetTask(ctx, r.TaskID); gerr == nil && t.ArchivedAt != nil {
			err = kanban.Errorf(kanban.CodeConflict, "the routine's task is archived; unarchive it or point the routine at another task")
		} else if _, err = s.WakeAgent(ctx, r.TaskID, Wake{Reason: r.Prompt}); err == nil {
			run.Outcome, run.TaskID = kanban.RunWoken, r.TaskID
		}
	}
	if err != nil {
		run.Outcome, run.Detail = kanban.RunFailed, joinDetail(run.Detail, s.failureText(err))
	}
	if err := s.store.FinishRoutineRun(ctx, run); err != nil && ctx.Err() == nil {
		s.log.Warn("routine: record run", "routine", r.ID, "err", err)
	}
	return run
}

// routineTaskIn is the task a create_task run of r creates; its external
// id names the run, so a run retried (or made twice) creates one task.
func routineTaskIn(r *kanban.Routine, scheduledFor time.Time) TaskCreateIn {
	return TaskCreateIn{WorkspaceID: r.WorkspaceID, WorkflowID: r.WorkflowID, WorkflowStepID: r.WorkflowStepID,
		Title: r.Title, Prompt: r.Prompt, AgentProfileID: r.AgentProfileID, ExecutorProfileID: r.ExecutorProfileID,
		ExternalID: "routine:" + r.ID + ":" + strconv.FormatInt(scheduledFor.Unix(), 10)}
}

// routineInFlight says whether r's previous run is still in flight, and
// why: the task a create_task run created is open (not completed, failed,
// cancelled or archived), or the agent a wake_task run woke is still in
// its turn.
func (s *Service) routineInFlight(ctx context.Context, r *kanban.Routine) (bool, string, error) {
	if r.Target == kanban.RoutineCreateTask {
		if r.LastTaskID == "" {
			return false, "", nil
		}
		t, err := s.store.GetTask(ctx, r.LastTaskID)
		if kanban.ErrorCode(err) == kanban.CodeNotFound {
			return false, "", nil
		}
		if err != nil {
			return false, "", err
		}
		if t.ArchivedAt != nil || t.State.Ended() {
			return false, "", nil
		}
		return true, fmt.Sprintf("the task the previous run created (%s) is still open (%s)", t.ID, t.State), nil
	}
	busy := false
	err := s.eachSession(ctx, r.TaskID, func(sess *kanban.Session) bool {
		switch sess.State {
		case kanban.SessionCreated, kanban.SessionQueued, kanban.SessionStarting, kanban.SessionRunning:
			busy = !kanban.IsParticipantSession(sess.Name)
		}
		return !busy
	})
	if kanban.ErrorCode(err) == kanban.CodeNotFound {
		return false, "", nil // WakeAgent says the task is gone
	}
	if busy {
		return true, "the task's agent is still in a turn", err
	}
	return false, "", err
}

// failureText is what a failed run records: a refusal's own text (it
// names no caller value), else a generic one (the error is logged).
func (s *Service) failureText(err error) string {
	if e, ok := kanban.AsError(err); ok && e.Code != kanban.CodeInternal {
		return string(e.Code) + ": " + e.Message
	}
	s.log.Warn("routine: run failed", "err", err)
	return "internal error (see the backend's log)"
}

func joinDetail(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}
