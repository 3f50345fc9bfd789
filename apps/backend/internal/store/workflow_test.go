package store

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// stepNames returns the workflow's step names in board order and the name
// of its start step(s).
func stepNames(t *testing.T, s *Store, workflowID string) (names []string, starts []string) {
	t.Helper()
	l, err := s.ListSteps(context.Background(), workflowID, kanban.Page{Limit: kanban.MaxLimit})
	if err != nil {
		t.Fatalf("list steps: %v", err)
	}
	for i, st := range l.Items {
		if st.Position != i {
			t.Fatalf("got step %s at position %d, want %d", st.Name, st.Position, i)
		}
		names = append(names, st.Name)
		if st.IsStartStep {
			starts = append(starts, st.Name)
		}
	}
	return names, starts
}

func TestWorkflowCreateListUpdate(t *testing.T) {
	t.Parallel()
	bothEngines(t, testWorkflowCreateListUpdate)
}

func testWorkflowCreateListUpdate(t *testing.T) {
	t.Parallel()
	s, ctx := newTestStore(t), context.Background()
	ws, _ := s.CreateWorkspace(ctx, "W", "")
	var ids []string
	for i, n := range []string{"one", "two", "three"} {
		wf, err := s.CreateWorkflow(ctx, kanban.Workflow{WorkspaceID: ws.ID, Name: n})
		if err != nil {
			t.Fatalf("create: %v", err)
		}
		if wf.SortOrder != i {
			t.Fatalf("got sort_order %d, want %d", wf.SortOrder, i)
		}
		ids = append(ids, wf.ID)
	}
	p1, err := s.ListWorkflows(ctx, ws.ID, kanban.Page{Limit: 2})
	if err != nil || len(p1.Items) != 2 || p1.NextCursor == "" {
		t.Fatalf("got %v, %d items, cursor %q; want 2 items and a cursor", err, len(p1.Items), p1.NextCursor)
	}
	p2, err := s.ListWorkflows(ctx, ws.ID, kanban.Page{Limit: 2, Cursor: p1.NextCursor})
	if err != nil || len(p2.Items) != 1 || p2.NextCursor != "" {
		t.Fatalf("got %v, %d items, cursor %q; want 1 item and no cursor", err, len(p2.Items), p2.NextCursor)
	}
	got := []string{p1.Items[0].ID, p1.Items[1].ID, p2.Items[0].ID}
	if strings.Join(got, ",") != strings.Join(ids, ",") {
		t.Fatalf("got order %v, want %v", got, ids)
	}
	desc := "d"
	up, err := s.UpdateWorkflow(ctx, ids[0], nil, &desc)
	if err != nil || up.Name != "one" || up.Description != "d" {
		t.Fatalf("got %+v, %v; want name one, description d", up, err)
	}
	// Name bounds are the contracts' (workflow.create, workflow.update);
	// the store holds the single-line rule.
	twoLines := "two\nlines"
	_, err = s.UpdateWorkflow(ctx, ids[0], &twoLines, nil)
	wantCode(t, err, kanban.CodeValidation)
	_, err = s.CreateWorkflow(ctx, kanban.Workflow{WorkspaceID: "missing", Name: "x"})
	wantCode(t, err, kanban.CodeNotFound)
	_, err = s.CreateWorkflow(ctx, kanban.Workflow{WorkspaceID: ws.ID, Name: twoLines})
	wantCode(t, err, kanban.CodeValidation)
	_, err = s.ListWorkflows(ctx, "missing", kanban.Page{})
	wantCode(t, err, kanban.CodeNotFound)
}

func TestCreateStepStartFlagAndNames(t *testing.T) {
	t.Parallel()
	bothEngines(t, testCreateStepStartFlagAndNames)
}

func testCreateStepStartFlagAndNames(t *testing.T) {
	t.Parallel()
	s, ctx := newTestStore(t), context.Background()
	b := newBoard(t, s, "W")
	names, starts := stepNames(t, s, b.wf.ID)
	if strings.Join(names, ",") != "Backlog,In Progress,Review,Done" || strings.Join(starts, ",") != "Backlog" {
		t.Fatalf("got steps %v start %v, want Backlog..Done with start Backlog", names, starts)
	}
	if _, err := s.CreateStep(ctx, kanban.WorkflowStep{WorkflowID: b.wf.ID, Name: "Triage", IsStartStep: true}); err != nil {
		t.Fatalf("create start step: %v", err)
	}
	if _, starts = stepNames(t, s, b.wf.ID); strings.Join(starts, ",") != "Triage" {
		t.Fatalf("got start steps %v, want [Triage]", starts)
	}
	before := snapshot(t, s)
	_, err := s.CreateStep(ctx, kanban.WorkflowStep{WorkflowID: b.wf.ID, Name: "Review"})
	wantCode(t, err, kanban.CodeConflict)
	_, err = s.CreateStep(ctx, kanban.WorkflowStep{WorkflowID: "missing", Name: "X"})
	wantCode(t, err, kanban.CodeNotFound)
	checkSnapshot(t, s, before)
}

func TestStepValidation(t *testing.T) {
	t.Parallel()
	bothEngines(t, testStepValidation)
}

func testStepValidation(t *testing.T) {
	t.Parallel()
	s, ctx := newTestStore(t), context.Background()
	b := newBoard(t, s, "W")
	ok := kanban.WorkflowStep{WorkflowID: b.wf.ID, Name: "New"}
	cases := map[string]func(st *kanban.WorkflowStep){
		"events": func(st *kanban.WorkflowStep) {
			st.Events = map[string][]kanban.StepAction{"on_enterr": {{Type: "x"}}}
		},
		"events.on_enter[0].type": func(st *kanban.WorkflowStep) { st.Events = map[string][]kanban.StepAction{"on_enter": {{}}} },
		"events.on_exit[0].config": func(st *kanban.WorkflowStep) {
			st.Events = map[string][]kanban.StepAction{"on_exit": {{Type: "archive", Config: map[string]json.RawMessage{"x": json.RawMessage(`1`)}}}}
		},
		"events.on_turn_complete[0].config.state": func(st *kanban.WorkflowStep) {
			st.Events = map[string][]kanban.StepAction{"on_turn_complete": {{Type: "set_state", Config: map[string]json.RawMessage{"state": json.RawMessage(`"done"`)}}}}
		},
		"events.on_enter[0].config.step_id": func(st *kanban.WorkflowStep) {
			st.Events = map[string][]kanban.StepAction{"on_enter": {{Type: "move_to_step", Config: map[string]json.RawMessage{"step_id": json.RawMessage(`"` + kanban.NewID() + `"`)}}}}
		},
	}
	before := snapshot(t, s)
	for field, mutate := range cases {
		st := ok
		mutate(&st)
		_, err := s.CreateStep(ctx, st)
		wantCode(t, err, kanban.CodeValidation)
		if e, _ := kanban.AsError(err); e.Field != field {
			t.Errorf("got field %q, want %q", e.Field, field)
		}
	}
	checkSnapshot(t, s, before)
	// Bounds of a step are its payload contract's (and kanban's
	// WorkflowStep.Check for documents); automations are checked as stored.
	_, err := s.UpdateStep(ctx, b.steps[1].ID, kanban.StepUpdate{Events: map[string][]kanban.StepAction{"whenever": nil}})
	wantCode(t, err, kanban.CodeValidation)
}

func TestUpdateStep(t *testing.T) {
	t.Parallel()
	bothEngines(t, testUpdateStep)
}

func testUpdateStep(t *testing.T) {
	t.Parallel()
	s, ctx := newTestStore(t), context.Background()
	b := newBoard(t, s, "W")
	name, wip, yes, no := "Doing", 3, true, false
	ev := map[string][]kanban.StepAction{"on_enter": {{Type: "send_prompt", Config: map[string]json.RawMessage{"prompt": json.RawMessage(`"1"`)}}}}
	st, err := s.UpdateStep(ctx, b.steps[1].ID, kanban.StepUpdate{Name: &name, WIPLimit: &wip, IsStartStep: &yes, Events: ev})
	if err != nil {
		t.Fatalf("update: %v", err)
	}
	got, _ := s.GetStep(ctx, st.ID)
	if got.Name != "Doing" || got.WIPLimit != 3 || !got.IsStartStep || string(got.Events["on_enter"][0].Config["prompt"]) != `"1"` {
		t.Fatalf("got %+v, want name Doing, wip 3, start step, on_enter event kept", got)
	}
	if _, starts := stepNames(t, s, b.wf.ID); strings.Join(starts, ",") != "Doing" {
		t.Fatalf("got start steps %v, want [Doing]", starts)
	}
	_, err = s.UpdateStep(ctx, st.ID, kanban.StepUpdate{IsStartStep: &no})
	wantCode(t, err, kanban.CodeValidation)
	dup := "Review"
	_, err = s.UpdateStep(ctx, st.ID, kanban.StepUpdate{Name: &dup})
	wantCode(t, err, kanban.CodeConflict)
	_, err = s.UpdateStep(ctx, "missing", kanban.StepUpdate{Name: &name})
	wantCode(t, err, kanban.CodeNotFound)
}

func TestReorderSteps(t *testing.T) {
	t.Parallel()
	bothEngines(t, testReorderSteps)
}

func testReorderSteps(t *testing.T) {
	t.Parallel()
	s, ctx := newTestStore(t), context.Background()
	b := newBoard(t, s, "W")
	other := newBoard(t, s, "Other")
	id := func(i int) string { return b.steps[i].ID }
	bad := map[string][]string{
		"missing one":   {id(0), id(1), id(2)},
		"duplicate":     {id(0), id(1), id(2), id(2)},
		"foreign":       {id(0), id(1), id(2), other.steps[0].ID},
		"extra":         {id(0), id(1), id(2), id(3), other.steps[0].ID},
		"unknown":       {id(0), id(1), id(2), "nope"},
		"empty":         nil,
		"dup for extra": {id(0), id(1), id(2), id(3), id(3)},
	}
	for name, ids := range bad {
		_, err := s.ReorderSteps(ctx, b.wf.ID, ids)
		wantCode(t, err, kanban.CodeValidation)
		if e, _ := kanban.AsError(err); e.Field != "step_ids" {
			t.Errorf("%s: got field %q, want step_ids", name, e.Field)
		}
	}
	if names, _ := stepNames(t, s, b.wf.ID); strings.Join(names, ",") != "Backlog,In Progress,Review,Done" {
		t.Fatalf("got %v after failed reorders, want the original order", names)
	}
	out, err := s.ReorderSteps(ctx, b.wf.ID, []string{id(3), id(1), id(0), id(2)})
	if err != nil {
		t.Fatalf("reorder: %v", err)
	}
	for i, st := range out {
		if st.Position != i {
			t.Fatalf("got returned position %d at %d, want %d", st.Position, i, i)
		}
	}
	if names, _ := stepNames(t, s, b.wf.ID); strings.Join(names, ",") != "Done,In Progress,Backlog,Review" {
		t.Fatalf("got %v, want Done,In Progress,Backlog,Review", names)
	}
	_, err = s.ReorderSteps(ctx, "missing", nil)
	wantCode(t, err, kanban.CodeNotFound)
}

func TestDeleteStep(t *testing.T) {
	t.Parallel()
	bothEngines(t, testDeleteStep)
}

func testDeleteStep(t *testing.T) {
	t.Parallel()
	s, ctx := newTestStore(t), context.Background()
	b := newBoard(t, s, "W")
	task := mustTask(t, s, b, b.steps[2].ID, "on review")
	if _, err := s.ArchiveTask(ctx, task.ID); err != nil {
		t.Fatalf("archive: %v", err)
	}
	err := s.DeleteStep(ctx, b.steps[2].ID)
	wantCode(t, err, kanban.CodeConflict)
	if n := countRows(t, s, "workflow_steps"); n != 4 {
		t.Fatalf("got %d steps, want 4", n)
	}
	if err := s.DeleteTask(ctx, task.ID); err != nil {
		t.Fatalf("delete task: %v", err)
	}
	if err := s.DeleteStep(ctx, b.steps[2].ID); err != nil {
		t.Fatalf("delete empty step: %v", err)
	}
	if err := s.DeleteStep(ctx, b.steps[0].ID); err != nil {
		t.Fatalf("delete start step: %v", err)
	}
	names, starts := stepNames(t, s, b.wf.ID) // checks dense positions too
	if strings.Join(names, ",") != "In Progress,Done" || strings.Join(starts, ",") != "In Progress" {
		t.Fatalf("got steps %v start %v, want In Progress,Done with start In Progress", names, starts)
	}
	wantCode(t, s.DeleteStep(ctx, "missing"), kanban.CodeNotFound)
}

func TestDeleteWorkflow(t *testing.T) {
	t.Parallel()
	bothEngines(t, testDeleteWorkflow)
}

func testDeleteWorkflow(t *testing.T) {
	t.Parallel()
	s, ctx := newTestStore(t), context.Background()
	b := newBoard(t, s, "W")
	parent := mustTask(t, s, b, "", "parent")
	// A task in another workflow of the workspace, child of a doomed task.
	wf2, _ := s.CreateWorkflow(ctx, kanban.Workflow{WorkspaceID: b.ws.ID, Name: "Other"})
	st2, _ := s.CreateStep(ctx, kanban.WorkflowStep{WorkflowID: wf2.ID, Name: "Todo"})
	child, _, err := s.CreateTask(ctx, kanban.TaskCreate{WorkspaceID: b.ws.ID, WorkflowStepID: st2.ID, Title: "child",
		ParentID: parent.ID, BlockedBy: []string{parent.ID}})
	if err != nil {
		t.Fatalf("create child: %v", err)
	}
	before := snapshot(t, s)
	wantCode(t, s.DeleteWorkflow(ctx, b.wf.ID, false), kanban.CodeConflict)
	checkSnapshot(t, s, before)
	if err := s.DeleteWorkflow(ctx, b.wf.ID, true); err != nil {
		t.Fatalf("cascade delete: %v", err)
	}
	_, err = s.GetTask(ctx, parent.ID)
	wantCode(t, err, kanban.CodeNotFound)
	_, err = s.GetStep(ctx, b.steps[0].ID)
	wantCode(t, err, kanban.CodeNotFound)
	got, err := s.GetTask(ctx, child.ID)
	if err != nil || got.ParentID != "" {
		t.Fatalf("got %+v, %v; want the child kept with no parent", got, err)
	}
	if n := countRows(t, s, "task_dependencies"); n != 0 {
		t.Fatalf("got %d dependency rows, want 0", n)
	}
	if err := s.DeleteWorkflow(ctx, wf2.ID, false); kanban.ErrorCode(err) != kanban.CodeConflict {
		t.Fatalf("got %v, want CONFLICT for the other workflow", err)
	}
	wantCode(t, s.DeleteWorkflow(ctx, "missing", true), kanban.CodeNotFound)
	empty, _ := s.CreateWorkflow(ctx, kanban.Workflow{WorkspaceID: b.ws.ID, Name: "Empty"})
	if err := s.DeleteWorkflow(ctx, empty.ID, false); err != nil {
		t.Fatalf("delete empty workflow: %v", err)
	}
}

func TestImportWorkflow(t *testing.T) {
	t.Parallel()
	bothEngines(t, testImportWorkflow)
}

func testImportWorkflow(t *testing.T) {
	t.Parallel()
	s, ctx := newTestStore(t), context.Background()
	ws, _ := s.CreateWorkspace(ctx, "W", "")
	wf, steps, err := s.ImportWorkflow(ctx, kanban.Workflow{WorkspaceID: ws.ID, Name: "Imp"},
		[]kanban.WorkflowStep{{Name: "A", Position: 7}, {Name: "B", IsStartStep: true}, {Name: "C", WIPLimit: 2}})
	if err != nil {
		t.Fatalf("import: %v", err)
	}
	names, starts := stepNames(t, s, wf.ID)
	if strings.Join(names, ",") != "A,B,C" || strings.Join(starts, ",") != "B" || len(steps) != 3 || steps[2].WIPLimit != 2 {
		t.Fatalf("got steps %v start %v, want A,B,C with start B", names, starts)
	}
	wf2, _, err := s.ImportWorkflow(ctx, kanban.Workflow{WorkspaceID: ws.ID, Name: "Imp2"},
		[]kanban.WorkflowStep{{Name: "X"}, {Name: "Y"}})
	if err != nil {
		t.Fatalf("import: %v", err)
	}
	if _, starts := stepNames(t, s, wf2.ID); strings.Join(starts, ",") != "X" || wf2.SortOrder != 1 {
		t.Fatalf("got start %v sort_order %d, want [X] and 1", starts, wf2.SortOrder)
	}
	before := snapshot(t, s)
	// The list rules and each step's bounds are kanban.CheckSteps', run by
	// the action layer before the store; the store still refuses a step
	// name taken twice (its insert's name check), a two-line workflow name
	// and steps whose automations CheckEvents refuses.
	bad := []struct {
		name  string
		steps []kanban.WorkflowStep
		code  kanban.Code
	}{
		{"Bad", []kanban.WorkflowStep{{Name: "A"}, {Name: "A"}}, kanban.CodeConflict},
		{"Bad\n", []kanban.WorkflowStep{{Name: "A"}}, kanban.CodeValidation},
		{"Bad", []kanban.WorkflowStep{{Name: "A", Events: map[string][]kanban.StepAction{"whenever": nil}}}, kanban.CodeValidation},
	}
	for i, c := range bad {
		_, _, err := s.ImportWorkflow(ctx, kanban.Workflow{WorkspaceID: ws.ID, Name: c.name}, c.steps)
		if got := kanban.ErrorCode(err); got != c.code {
			t.Errorf("case %d: got %v, want %s", i, err, c.code)
		}
	}
	_, _, err = s.ImportWorkflow(ctx, kanban.Workflow{WorkspaceID: "missing", Name: "Bad"}, []kanban.WorkflowStep{{Name: "A"}})
	wantCode(t, err, kanban.CodeNotFound)
	checkSnapshot(t, s, before)
}
