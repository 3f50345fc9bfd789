package action

import (
	"context"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
	"github.com/kandev/kandev/apps/backend/internal/schema"
)

var _ = declare(Def[TaskRefIn, *kanban.Task]{
	Name:   kanban.ActionTaskArchive,
	Effect: Writes,
	Tool:   "archive_task_kandev",
	Allow:  all,
	Schema: schema.Obj("", schema.P{
		"task_id": taskRef(`Task to archive; "self" is yours.`),
	}, "task_id"),
	Run: func(s *Service, ctx context.Context, p Principal, in TaskRefIn) (*kanban.Task, error) {
		return s.changeTask(ctx, p, in.TaskID, kanban.EventTaskUpdated, func(id string) (*kanban.Task, error) {
			t, err := s.store.ArchiveTask(ctx, id)
			if err != nil {
				return nil, err
			}
			defer s.events.Emit(kanban.StepFreed{StepID: t.WorkflowStepID})
			return t, s.releaseTask(ctx, t.ID, "Stopped: the task was archived")
		})
	},
})

// task.unarchive is the operator's: an archived task comes back last on
// its step (refused while that step's wip_limit is reached); no agent is
// started, the task waits for a move, an automation or a start by hand.
var _ = declare(Def[TaskRefIn, *kanban.Task]{
	Name:   kanban.ActionTaskUnarchive,
	Effect: Writes,
	Allow:  AllowOperator,
	Schema: schema.Obj("", schema.P{
		"task_id": idProp("Task to bring back to the board."),
	}, "task_id"),
	Run: func(s *Service, ctx context.Context, p Principal, in TaskRefIn) (*kanban.Task, error) {
		return s.changeTask(ctx, p, in.TaskID, kanban.EventTaskUpdated, func(id string) (*kanban.Task, error) {
			return s.store.UnarchiveTask(ctx, id)
		})
	},
})
