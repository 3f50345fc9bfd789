package flow

import (
	"context"
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
