package flow

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"github.com/kandev/kandev/apps/backend/internal/action"
	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// TestChildrenCompletedConcurrently: subtasks that end at the same time
// (their state set from several goroutines at once) run
// on_children_completed once.
func TestChildrenCompletedConcurrently(t *testing.T) {
	t.Parallel()
	for round := range 5 {
		h := newHarness(t, t.TempDir())
		steps := h.workflow(`[{"name":"A"},{"name":"S","events":` + ev(kanban.EventChildrenCompleted, `{"type":"set_state","config":{"state":"REVIEW"}}`) + `}]`)
		a, s := steps[0], steps[1]
		parent := h.task("P", s)
		children := []*kanban.Task{h.child(parent, a), h.child(parent, a), h.child(parent, a), h.child(parent, a)}
		h.settle()
		var wg sync.WaitGroup
		for _, c := range children {
			wg.Go(func() {
				h.must(kanban.ActionTaskSetState, action.TaskStateIn{TaskID: c.ID, State: kanban.TaskCompleted}, nil)
			})
		}
		wg.Wait()
		h.settle()
		n := 0
		for _, r := range h.records(parent.ID) {
			if strings.Contains(r, "on_children_completed of S") {
				n++
			}
		}
		if n != 1 {
			t.Fatalf("round %d: on_children_completed ran %d times, want 1; records %v", round, n, h.records(parent.ID))
		}
	}
}

// TestQueueRunOncePerTarget: one comment whose step's on_comment queues
// the primary agent three times wakes it once, with the reason and the
// comment; the skipped wakes are recorded.
func TestQueueRunOncePerTarget(t *testing.T) {
	t.Parallel()
	h := newHarness(t, t.TempDir())
	wake := `{"type":"queue_run","config":{"reason":"You have a comment."}}`
	steps := h.workflow(`[{"name":"S","events":{"on_comment":[` + wake + `,` + wake + `,{"type":"queue_run","config":{"target":"primary","reason":"Again."}}]}}]`)
	task := h.task("T", steps[0])
	h.must(kanban.ActionSessionCreate, action.SessionCreateIn{TaskID: task.ID}, nil)
	h.settle()
	var c kanban.Comment
	h.must(kanban.ActionTaskCommentAdd, action.CommentAddIn{TaskID: task.ID, Body: "Is the parser done?"}, &c)
	h.settle()
	l, err := h.st.PendingPrompts(context.Background(), h.sessions(task.ID)[0].ID, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(l) != 1 || !strings.Contains(l[0].Content, "You have a comment.") || !strings.Contains(l[0].Content, "Is the parser done?") {
		t.Fatalf("prompts %+v, want one with the reason and the comment", l)
	}
	if !h.hasRecord(task.ID, "queue_run: skipped: the primary agent was already woken for this event") {
		t.Fatalf("records %v", h.records(task.ID))
	}
	h.must(kanban.ActionTaskCommentAdd, action.CommentAddIn{TaskID: task.ID, Body: "And the tests?"}, nil)
	h.settle()
	if l, _ = h.st.PendingPrompts(context.Background(), h.sessions(task.ID)[0].ID, 10); len(l) != 2 {
		t.Fatalf("after a second comment: %d prompts, want 2", len(l))
	}
}

// TestClearDecisionsKeepsTheNewVisit: on_enter's clear_decisions forgets
// the decisions recorded before the task entered the step, not one made
// after the entry while the automation waited its turn on the task's
// queue (an operator deciding as the card lands).
func TestClearDecisionsKeepsTheNewVisit(t *testing.T) {
	t.Parallel()
	h := newHarness(t, t.TempDir())
	ctx := context.Background()
	steps := h.workflow(`[{"name":"A"},{"name":"S"}]`)
	task := h.task("T", steps[0])
	decide := func() string {
		a, err := h.st.CreateArtifact(ctx, kanban.Artifact{TaskID: task.ID, Kind: kanban.ArtifactDecision,
			Data: []byte(`{"step_id":"` + steps[1].ID + `","participant":"operator","decision":"approved","reason":"fine"}`)})
		if err != nil {
			t.Fatal(err)
		}
		return a.ID
	}
	decide() // on an earlier visit
	if err := h.move(task.ID, steps[1].ID); err != nil {
		t.Fatal(err)
	}
	h.settle()
	kept := decide() // after the entry, before on_enter's automations ran
	var events map[string][]kanban.StepAction
	if err := json.Unmarshal([]byte(ev(kanban.EventEnter, `{"type":"clear_decisions"}`)), &events); err != nil {
		t.Fatal(err)
	}
	h.must(kanban.ActionWorkflowStepUpdate, action.StepUpdateIn{StepID: steps[1].ID, Events: events}, nil)
	h.eng.run(task.ID, steps[1].ID, kanban.EventEnter, cause{}, nil)
	l, err := h.st.ListArtifacts(ctx, task.ID, kanban.ArtifactDecision, kanban.Page{})
	if err != nil || len(l.Items) != 1 || l.Items[0].ID != kept {
		t.Fatalf("decisions left %+v, %v, want only %s", l, err, kept)
	}
	if !h.hasRecord(task.ID, "clear_decisions: cleared 1 decision(s)") {
		t.Fatalf("records %v", h.records(task.ID))
	}
}
