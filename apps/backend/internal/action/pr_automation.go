package action

import (
	"context"
	"strings"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
	"github.com/kandev/kandev/apps/backend/internal/schema"
)

// The PR (GitHub) and MR (GitLab) automation settings of a task, as the
// reference product's get_/update_task_pr_automation_kandev and
// get_/update_task_mr_automation_kandev read and change them: per linked
// pull request, five switches (auto-fix, auto-merge and three lifecycle
// prompts), and task-wide the auto-fix prompt override. A session reaches
// only its own task; the operator names one.

// PRAutomationGetIn is the payload of task.pr_automation.get and
// task.mr_automation.get.
type PRAutomationGetIn struct {
	TaskID string `json:"task_id,omitzero"`
}

// PRAutomationSwitches are the changes both updates take.
type PRAutomationSwitches struct {
	TaskID                  string  `json:"task_id,omitzero"`
	RepositoryID            *string `json:"repository_id,omitzero"`
	AutoFixEnabled          *bool   `json:"auto_fix_enabled,omitzero"`
	AutoMergeEnabled        *bool   `json:"auto_merge_enabled,omitzero"`
	AutoFixPromptOverride   *string `json:"auto_fix_prompt_override,omitzero"`
	PromptOnReviewRequested *bool   `json:"prompt_on_review_requested,omitzero"`
	PromptOnMerged          *bool   `json:"prompt_on_merged,omitzero"`
	PromptOnClosed          *bool   `json:"prompt_on_closed,omitzero"`
}

// PRAutomationUpdateIn is the payload of task.pr_automation.update.
type PRAutomationUpdateIn struct {
	PRAutomationSwitches
	PRNumber *int `json:"pr_number,omitzero"`
}

// MRAutomationUpdateIn is the payload of task.mr_automation.update.
type MRAutomationUpdateIn struct {
	PRAutomationSwitches
	ProjectPath *string `json:"project_path,omitzero"`
	MRIID       *int    `json:"mr_iid,omitzero"`
}

// automationTask is the task_id of the automation actions: the session's
// own task (omitted or "self"; another task is FORBIDDEN), or the
// operator's choice (required).
func automationTask(desc string) schema.S {
	return taskRef(desc + ` Sessions: omit it (or "self"); only their own task is reachable.`)
}

// switchProps are the properties both updates take.
func switchProps(what, forgeName string) schema.P {
	return schema.P{
		"task_id":       automationTask("The task whose settings change."),
		"repository_id": idProp("Repository of the one linked " + what + " to change (with its number); omit to change every linked " + what + "."),
		"auto_fix_enabled": schema.Bool("Turn auto-fix on or off: when the " + what + "'s checks fail, the task's agent gets a prompt with the " +
			"failing check's name and the end of its log (at most 10 rounds; turning it on again starts over)."),
		"auto_merge_enabled": schema.Bool("Turn auto-merge on or off: the " + what + " is merged on " + forgeName +
			" once its checks pass and it is approved and mergeable (the head that was checked)."),
		"auto_fix_prompt_override": schema.Str("The auto-fix prompt for this task ({{pr.feedback}} marks where the failing check goes); "+
			"task-wide, not scoped by the "+what+"; an empty string goes back to the default prompt.").Len(0, kanban.MaxPromptLen),
		"prompt_on_review_requested": schema.Bool("Prompt the task's agent when a review is requested on the " + what + "."),
		"prompt_on_merged":           schema.Bool("Prompt the task's agent once when the " + what + " is merged."),
		"prompt_on_closed":           schema.Bool("Prompt the task's agent once when the " + what + " is closed without merging."),
	}
}

var _ = declare(Def[PRAutomationGetIn, *kanban.PRAutomation]{
	Name:   kanban.ActionTaskPRAutomationGet,
	Effect: Reads,
	Allow:  all,
	Schema: schema.Obj("", schema.P{"task_id": automationTask("The task.")}),
	Run: func(s *Service, ctx context.Context, p Principal, in PRAutomationGetIn) (*kanban.PRAutomation, error) {
		return s.prAutomation(ctx, p, in.TaskID, kanban.ForgeGitHub)
	},
})

var _ = declare(Def[PRAutomationUpdateIn, *kanban.PRAutomation]{
	Name:   kanban.ActionTaskPRAutomationUpdate,
	Effect: Writes,
	Allow:  all,
	Schema: schema.Obj("", with(switchProps("pull request", "GitHub"), schema.P{
		"pr_number": schema.Int("Number of the one linked pull request to change (with repository_id); omit both to change every linked pull request.").
			Range(1, kanban.MaxPRNumber),
	})),
	Run: func(s *Service, ctx context.Context, p Principal, in PRAutomationUpdateIn) (*kanban.PRAutomation, error) {
		return s.updatePRAutomation(ctx, p, kanban.ForgeGitHub, in.PRAutomationSwitches, in.PRNumber, nil)
	},
})

var _ = declare(Def[PRAutomationGetIn, *kanban.PRAutomation]{
	Name:   kanban.ActionTaskMRAutomationGet,
	Effect: Reads,
	Allow:  all,
	Schema: schema.Obj("", schema.P{"task_id": automationTask("The task.")}),
	Run: func(s *Service, ctx context.Context, p Principal, in PRAutomationGetIn) (*kanban.PRAutomation, error) {
		return s.prAutomation(ctx, p, in.TaskID, kanban.ForgeGitLab)
	},
})

var _ = declare(Def[MRAutomationUpdateIn, *kanban.PRAutomation]{
	Name:   kanban.ActionTaskMRAutomationUpdate,
	Effect: Writes,
	Allow:  all,
	Schema: schema.Obj("", with(switchProps("merge request", "GitLab"), schema.P{
		"project_path": schema.Str("GitLab project path of the one linked merge request to change, e.g. group/project (with repository_id and mr_iid).").
			Len(1, kanban.MaxForgeRepoLen),
		"mr_iid": schema.Int("IID of the one linked merge request to change (with repository_id and project_path); omit all three to change every linked merge request.").
			Range(1, kanban.MaxPRNumber),
	})),
	Run: func(s *Service, ctx context.Context, p Principal, in MRAutomationUpdateIn) (*kanban.PRAutomation, error) {
		return s.updatePRAutomation(ctx, p, kanban.ForgeGitLab, in.PRAutomationSwitches, in.MRIID, in.ProjectPath)
	},
})

// with returns p with q's properties added.
func with(p, q schema.P) schema.P {
	for k, v := range q {
		p[k] = v
	}
	return p
}

// automationTaskID resolves the task an automation action acts on: a
// session's own task only (FORBIDDEN for another), the operator's named
// one (required).
func (s *Service) automationTaskID(ctx context.Context, p Principal, id string) (string, error) {
	if p.Kind == Session {
		if id != "" && id != "self" && id != p.TaskID {
			return "", kanban.Errorf(kanban.CodeForbidden, "a session reaches only its own task's PR automation")
		}
		return p.TaskID, nil
	}
	if id == "" {
		return "", kanban.FieldError("task_id", "is required")
	}
	t, err := s.taskInScope(ctx, p, id)
	if err != nil {
		return "", err
	}
	return t.ID, nil
}

func (s *Service) prAutomation(ctx context.Context, p Principal, taskID string, f kanban.ForgeKind) (*kanban.PRAutomation, error) {
	id, err := s.automationTaskID(ctx, p, taskID)
	if err != nil {
		return nil, err
	}
	return s.store.PRAutomation(ctx, id, f)
}

// updatePRAutomation applies a change to the task's automation on forge
// f. number (with sw.RepositoryID, and for GitLab project) names one
// linked pull request; a change naming no switch and no override is
// refused, as a pull request named by part of its identity is.
func (s *Service) updatePRAutomation(ctx context.Context, p Principal, f kanban.ForgeKind, sw PRAutomationSwitches, number *int, project *string) (*kanban.PRAutomation, error) {
	id, err := s.automationTaskID(ctx, p, sw.TaskID)
	if err != nil {
		return nil, err
	}
	u := kanban.PRAutomationUpdate{RepositoryID: sw.RepositoryID, PRNumber: number, AutoFixEnabled: sw.AutoFixEnabled,
		AutoMergeEnabled: sw.AutoMergeEnabled, PromptOnReviewRequested: sw.PromptOnReviewRequested, PromptOnMerged: sw.PromptOnMerged,
		PromptOnClosed: sw.PromptOnClosed, AutoFixPromptOverride: sw.AutoFixPromptOverride}
	if u.AutoFixEnabled == nil && u.AutoMergeEnabled == nil && u.PromptOnReviewRequested == nil && u.PromptOnMerged == nil &&
		u.PromptOnClosed == nil && u.AutoFixPromptOverride == nil {
		return nil, kanban.Errorf(kanban.CodeValidation, "give at least one switch or auto_fix_prompt_override to change")
	}
	if f == kanban.ForgeGitLab {
		if (project == nil) != (number == nil) || (project == nil) != (sw.RepositoryID == nil) {
			return nil, kanban.FieldError("mr_iid", "repository_id, project_path and mr_iid name a merge request together: give all three or none")
		}
		if project != nil {
			pr, err := s.store.FindPullRequest(ctx, id, *sw.RepositoryID, *number)
			if err != nil || pr.Forge != kanban.ForgeGitLab || !strings.EqualFold(pr.ForgeRepo, *project) {
				return nil, kanban.FieldError("mr_iid", "must name a merge request linked to the task (with repository_id and project_path)")
			}
		}
	}
	out, err := s.store.UpdatePRAutomation(ctx, id, f, u)
	if err != nil {
		return nil, err
	}
	s.events.Emit(kanban.PullRequestsChanged{TaskID: id})
	return out, nil
}
