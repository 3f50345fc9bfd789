package store

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/kandev/kandev/apps/backend/internal/action"
	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// TestStartProfilesKept: the profiles a task is created with are kept
// whether or not it waits for blockers, a task created with none has
// none, and deleting a profile forgets it (ON DELETE SET NULL).
func TestStartProfilesKept(t *testing.T) {
	bothEngines(t, func(t *testing.T) {
		s := newTestStore(t)
		ctx := context.Background()
		if err := action.Seed(ctx, s); err != nil {
			t.Fatal(err)
		}
		b := newBoard(t, s, "Profiles")
		def := must(s.DefaultAgentProfile(ctx))(t)
		prof := must(s.CreateAgentProfile(ctx, kanban.AgentProfile{AgentID: def.AgentID, Name: "chosen"}))(t)
		exec := must(s.DefaultExecutorProfile(ctx))(t)
		chosen := must3(s.CreateTask(ctx, kanban.TaskCreate{WorkspaceID: b.ws.ID, Title: "chosen",
			StartAgentProfileID: prof.ID, StartExecutorProfileID: exec.ID}))(t)
		plain := mustTask(t, s, b, "", "plain")
		if a, e, err := s.StartProfiles(ctx, chosen.ID); err != nil || a != prof.ID || e != exec.ID {
			t.Fatalf("chosen: got %q %q %v, want %s %s", a, e, err, prof.ID, exec.ID)
		}
		if a, e, err := s.StartProfiles(ctx, plain.ID); err != nil || a != "" || e != "" {
			t.Fatalf("plain: got %q %q %v, want none", a, e, err)
		}
		if err := s.DeleteAgentProfile(ctx, prof.ID); err != nil {
			t.Fatal(err)
		}
		if a, e, err := s.StartProfiles(ctx, chosen.ID); err != nil || a != "" || e != exec.ID {
			t.Fatalf("after deleting the profile: got %q %q %v, want no agent profile, the executor profile", a, e, err)
		}
	})
}

// TestPullingStepsAndArrivedBy: PullingSteps finds the steps pulling from
// a step; AdmitNext pulls only tasks on the source since arrivedBy.
func TestPullingStepsAndArrivedBy(t *testing.T) {
	bothEngines(t, func(t *testing.T) {
		s := newTestStore(t)
		ctx := context.Background()
		b := newBoard(t, s, "Pulls")
		src, pull := b.steps[0].ID, b.steps[1].ID
		must(s.UpdateStep(ctx, pull, kanban.StepUpdate{WIPLimit: new(5), PullFromStepID: &src}))(t)
		if got := must(s.PullingSteps(ctx, src))(t); !slices.Equal(got, []string{pull}) {
			t.Fatalf("steps pulling from Backlog: got %v, want In Progress", got)
		}
		if got := must(s.PullingSteps(ctx, pull))(t); len(got) != 0 {
			t.Fatalf("steps pulling from In Progress: got %v, want none", got)
		}
		before := kanban.Now().Add(-time.Second)
		task := mustTask(t, s, b, src, "new")
		if a := must(s.AdmitNext(ctx, pull, before))(t); a != nil {
			t.Fatalf("admitted %s, which arrived after arrivedBy", a.Task.Title)
		}
		a := must(s.AdmitNext(ctx, pull, kanban.Now()))(t)
		if a == nil || a.Task.ID != task.ID || !a.Pulled || a.FromStepID != src {
			t.Fatalf("admission: got %+v, want the new task pulled from Backlog", a)
		}
	})
}

// TestReleaseAttachments: a hand-made session is RUNNING while attached
// and CREATED again once detached; attachments held by a backend whose
// lease lapsed (or that never had one) are released, those of a live
// backend and of the caller are kept.
func TestReleaseAttachments(t *testing.T) {
	bothEngines(t, func(t *testing.T) {
		s := newTestStore(t)
		ctx := context.Background()
		b := newBoard(t, s, "Attach")
		task := mustTask(t, s, b, "", "t")
		now := time.Now()
		must0 := func(err error) {
			t.Helper()
			if err != nil {
				t.Fatal(err)
			}
		}
		must0(s.Heartbeat(ctx, "alive", "http://a", now))
		must0(s.Heartbeat(ctx, "lapsed", "http://l", now.Add(-time.Hour)))
		attach := func(backend string) string {
			sess, _, err := s.CreateSession(ctx, kanban.SessionCreate{TaskID: task.ID})
			must0(err)
			got := must(s.AttachSession(ctx, sess.ID, backend))(t)
			if !got.MCPAttached || got.State != kanban.SessionRunning {
				t.Fatalf("attached: %s %v", got.State, got.MCPAttached)
			}
			return sess.ID
		}
		alive, lapsed, self, gone := attach("alive"), attach("lapsed"), attach("self"), attach("")
		released := must(s.ReleaseAttachments(ctx, "self", now.Add(-time.Minute)))(t)
		var ids []string
		for _, r := range released {
			ids = append(ids, r.ID)
			if r.MCPAttached || r.State != kanban.SessionCreated {
				t.Fatalf("released %s: %s %v, want CREATED, detached", r.ID, r.State, r.MCPAttached)
			}
		}
		slices.Sort(ids)
		want := []string{lapsed, gone}
		slices.Sort(want)
		if !slices.Equal(ids, want) {
			t.Fatalf("released %v, want the lapsed backend's and the ownerless one %v", ids, want)
		}
		for _, id := range []string{alive, self} {
			if got := must(s.GetSession(ctx, id))(t); !got.MCPAttached {
				t.Fatalf("session %s of a live backend was released", id)
			}
		}
		got := must(s.DetachSession(ctx, alive))(t)
		if got.MCPAttached || got.State != kanban.SessionCreated {
			t.Fatalf("detached: %s %v, want CREATED", got.State, got.MCPAttached)
		}
	})
}
