package store

import (
	"context"
	"strings"
	"testing"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// TestComments: comments are kept per task, oldest first, in pages; an
// empty or oversized body and a missing task are refused and write
// nothing; a deleted task takes its comments with it.
func TestComments(t *testing.T) {
	t.Parallel()
	bothEngines(t, func(t *testing.T) {
		t.Parallel()
		s := newTestStore(t)
		ctx := context.Background()
		b := newBoard(t, s, "Office")
		task := mustTask(t, s, b, "", "Talk about it")
		var ids []string
		for _, body := range []string{"First", "Second", "Third"} {
			c := must(s.AddComment(ctx, kanban.Comment{TaskID: task.ID, Author: "session:s1", AgentProfileID: "p1", Body: body}))(t)
			ids = append(ids, c.ID)
		}
		page := must(s.ListComments(ctx, task.ID, kanban.Page{Limit: 2}))(t)
		rest := must(s.ListComments(ctx, task.ID, kanban.Page{Limit: 2, Cursor: page.NextCursor}))(t)
		if len(page.Items) != 2 || page.Items[0].ID != ids[0] || page.Items[1].Body != "Second" || page.Items[0].AgentProfileID != "p1" ||
			len(rest.Items) != 1 || rest.Items[0].ID != ids[2] || rest.NextCursor != "" {
			t.Fatalf("pages: %+v then %+v", page.Items, rest.Items)
		}
		before := countRows(t, s, "task_comments")
		for _, c := range []struct {
			c    kanban.Comment
			want string
		}{
			{kanban.Comment{TaskID: task.ID, Author: "operator", Body: "  "}, "body"},
			{kanban.Comment{TaskID: task.ID, Author: "operator", Body: strings.Repeat("x", kanban.MaxCommentLen+1)}, "body"},
			{kanban.Comment{TaskID: task.ID, Author: "", Body: "hi"}, "author"},
			{kanban.Comment{TaskID: "missing", Author: "operator", Body: "hi"}, "task"},
		} {
			_, err := s.AddComment(ctx, c.c)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("add %+v: got %v, want an error about %s", c.c, err, c.want)
			}
		}
		if _, err := s.ListComments(ctx, "missing", kanban.Page{}); kanban.ErrorCode(err) != kanban.CodeNotFound {
			t.Fatalf("list of a missing task: %v", err)
		}
		if n := countRows(t, s, "task_comments"); n != before {
			t.Fatalf("%d rows after refusals, want %d", n, before)
		}
		if err := s.DeleteTask(ctx, task.ID); err != nil {
			t.Fatal(err)
		}
		if n := countRows(t, s, "task_comments"); n != 0 {
			t.Fatalf("%d comments left after the task was deleted", n)
		}
	})
}

// TestStepApproval: a step's approval is stored and read back, its reject
// step given by position becomes an id, and bad approvals are refused.
func TestStepApproval(t *testing.T) {
	t.Parallel()
	bothEngines(t, func(t *testing.T) {
		t.Parallel()
		s := newTestStore(t)
		ctx := context.Background()
		b := newBoard(t, s, "Office")
		pos := 0
		a := &kanban.StepApproval{Quorum: kanban.QuorumCount, Count: 1, RejectStepPosition: &pos, Participants: []kanban.StepParticipant{
			{Role: kanban.RoleReviewer, AgentProfileID: "p1", Instructions: "Be strict."}, {Role: kanban.RoleApprover, Operator: true}}}
		st := must(s.UpdateStep(ctx, b.steps[2].ID, kanban.StepUpdate{Approval: a}))(t)
		got := must(s.GetStep(ctx, st.ID))(t)
		if got.Approval == nil || got.Approval.RejectStepID != b.steps[0].ID || got.Approval.RejectStepPosition != nil ||
			len(got.Approval.Participants) != 2 || got.Approval.Participants[0].Instructions != "Be strict." || got.Approval.Count != 1 {
			t.Fatalf("approval read back %+v", got.Approval)
		}
		self := 2
		for _, bad := range []*kanban.StepApproval{
			{Quorum: kanban.QuorumAll},
			{Quorum: "most", Participants: []kanban.StepParticipant{{Role: kanban.RoleReviewer, Operator: true}}},
			{Quorum: kanban.QuorumCount, Count: 2, Participants: []kanban.StepParticipant{{Role: kanban.RoleReviewer, Operator: true}}},
			{Quorum: kanban.QuorumAll, Participants: []kanban.StepParticipant{{Role: kanban.RoleReviewer, Operator: true}, {Role: kanban.RoleApprover, Operator: true}}},
			{Quorum: kanban.QuorumAll, Participants: []kanban.StepParticipant{{Role: "boss", Operator: true}}},
			{Quorum: kanban.QuorumAll, Participants: []kanban.StepParticipant{{Role: kanban.RoleReviewer, Operator: true, AgentProfileID: "p1"}}},
			{Quorum: kanban.QuorumAll, RejectStepPosition: &self, Participants: []kanban.StepParticipant{{Role: kanban.RoleReviewer, Operator: true}}},
		} {
			if _, err := s.UpdateStep(ctx, b.steps[2].ID, kanban.StepUpdate{Approval: bad}); kanban.ErrorCode(err) != kanban.CodeValidation {
				t.Fatalf("approval %+v: got %v, want VALIDATION_ERROR", bad, err)
			}
		}
		cleared := must(s.UpdateStep(ctx, b.steps[2].ID, kanban.StepUpdate{ClearApproval: true}))(t)
		if must(s.GetStep(ctx, cleared.ID))(t).Approval != nil {
			t.Fatal("approval not cleared")
		}
	})
}
