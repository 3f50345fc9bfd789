package reliability

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/kandev/kandev/apps/backend/internal/action"
	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// Env is where scenarios run: the binary under test and a scratch
// directory (one subdirectory per scenario, logs included).
type Env struct {
	KandevBin string
	WorkDir   string
	// Logf reports progress (may be nil).
	Logf func(format string, a ...any)
}

func (e *Env) logf(format string, a ...any) {
	if e.Logf != nil {
		e.Logf(format, a...)
	}
}

// dir makes the scenario's scratch directory.
func (e *Env) dir(name string) (string, error) {
	d := filepath.Join(e.WorkDir, name)
	if err := os.MkdirAll(d, 0o700); err != nil {
		return "", err
	}
	return d, nil
}

// board is the seeded workspace's default workflow.
type board struct {
	workspaceID string
	workflowID  string
	steps       []kanban.WorkflowStep // in board order
}

func (b *board) step(name string) kanban.WorkflowStep {
	for _, s := range b.steps {
		if s.Name == name {
			return s
		}
	}
	return kanban.WorkflowStep{}
}

// loadBoard reads the seeded board.
func loadBoard(ctx context.Context, o *ops) (*board, error) {
	var wss kanban.List[kanban.Workspace]
	if err := o.call(ctx, kanban.ActionWorkspaceList, action.ListIn{}, &wss); err != nil {
		return nil, fmt.Errorf("workspace.list: %w", err)
	}
	if len(wss.Items) == 0 {
		return nil, errors.New("workspace.list: no workspace")
	}
	b := &board{workspaceID: wss.Items[0].ID}
	var wfs kanban.List[kanban.Workflow]
	if err := o.call(ctx, kanban.ActionWorkflowList, action.WorkflowListIn{WorkspaceID: b.workspaceID}, &wfs); err != nil {
		return nil, fmt.Errorf("workflow.list: %w", err)
	}
	if len(wfs.Items) == 0 {
		return nil, errors.New("workflow.list: no workflow")
	}
	b.workflowID = wfs.Items[0].ID
	var steps kanban.List[kanban.WorkflowStep]
	if err := o.call(ctx, kanban.ActionWorkflowStepList, action.StepListIn{WorkflowID: b.workflowID}, &steps); err != nil {
		return nil, fmt.Errorf("workflow.step.list: %w", err)
	}
	if len(steps.Items) == 0 {
		return nil, errors.New("workflow.step.list: no step")
	}
	b.steps = steps.Items
	return b, nil
}

// setWIP sets a step's wip_limit.
func setWIP(ctx context.Context, o *ops, stepID string, limit int) error {
	return o.call(ctx, kanban.ActionWorkflowStepUpdate, action.StepUpdateIn{StepID: stepID, WIPLimit: &limit}, nil)
}

// handSession creates a task and a hand-made session on it (no agent is
// launched for it) and returns the session and its token.
func handSession(ctx context.Context, o *ops, b *board, title string) (*kanban.Session, string, error) {
	no := false
	var t action.TaskCreateOut
	if err := o.call(ctx, kanban.ActionTaskCreate, action.TaskCreateIn{WorkspaceID: b.workspaceID, Title: title, StartAgent: &no}, &t); err != nil {
		return nil, "", fmt.Errorf("task.create: %w", err)
	}
	var s action.SessionCreateOut
	if err := o.call(ctx, kanban.ActionSessionCreate, action.SessionCreateIn{TaskID: t.Task.ID, Mode: kanban.ModeTask}, &s); err != nil {
		return nil, "", fmt.Errorf("session.create: %w", err)
	}
	return s.Session, s.Token, nil
}

// answerer answers every pending question of the workspace until ctx
// ends, and counts its calls in tl.
func answerer(ctx context.Context, o *ops, workspaceID string, tl *tally) {
	for ctx.Err() == nil {
		t0 := time.Now()
		var qs kanban.List[kanban.Question]
		err := o.call(ctx, kanban.ActionQuestionList, action.QuestionListIn{WorkspaceID: workspaceID, State: kanban.QuestionPending, Limit: 50}, &qs)
		if ctx.Err() != nil {
			return
		}
		oc, d := classifyErr(err)
		tl.add(time.Since(t0), oc, d)
		for _, q := range qs.Items {
			answerQuestion(ctx, o, q, tl)
		}
		if len(qs.Items) == 0 {
			sleepCtx(ctx, 20*time.Millisecond)
		}
	}
}

// answerQuestion answers q with each question's first option.
func answerQuestion(ctx context.Context, o *ops, q kanban.Question, tl *tally) {
	in := action.QuestionAnswerIn{PendingID: q.ID}
	for _, item := range q.Questions {
		a := kanban.Answer{QuestionID: item.ID}
		if len(item.Options) > 0 {
			a.SelectedOptions = []string{item.Options[0].OptionID}
		}
		in.Answers = append(in.Answers, a)
	}
	t0 := time.Now()
	err := o.call(ctx, kanban.ActionQuestionAnswer, in, nil)
	if ctx.Err() != nil {
		return
	}
	oc, d := classifyErr(err)
	tl.add(time.Since(t0), oc, d)
}

func sleepCtx(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}
