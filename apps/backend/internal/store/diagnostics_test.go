package store

import (
	"context"
	"testing"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

func TestReport(t *testing.T) {
	ctx := context.Background()
	s := newTestStore(t)
	b := newBoard(t, s, "W")
	a := mustTask(t, s, b, "", "a")
	inProgress := kanban.TaskInProgress
	mustTask(t, s, b, "", "b")
	if _, err := s.UpdateTask(ctx, a.ID, kanban.TaskUpdate{State: &inProgress}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.ArchiveTask(ctx, a.ID); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.CreateSession(ctx, kanban.SessionCreate{TaskID: a.ID}); err != nil {
		t.Fatal(err)
	}
	r, err := s.Report(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// Versions may skip numbers (ones reserved for changes not merged yet).
	if r.Engine != "sqlite" || r.EngineVersion == "" || r.SchemaVersion != LatestVersion() || len(r.Migrations) != MigrationCount() {
		t.Fatalf("got engine %s %q schema %d/%d with %d migrations, want sqlite, a version, every migration applied",
			r.Engine, r.EngineVersion, r.SchemaVersion, r.SchemaLatest, len(r.Migrations))
	}
	c := r.Counts
	if c.Workspaces != 1 || c.Workflows != 1 || c.Tasks != 2 || c.TasksArchived != 1 ||
		c.TasksByState["IN_PROGRESS"] != 1 || c.TasksByState["TODO"] != 1 || c.Sessions != 1 || c.SessionsByState["CREATED"] != 1 {
		t.Fatalf("got counts %+v, want 1 workspace, 1 workflow, 2 tasks (1 TODO, 1 IN_PROGRESS archived), 1 CREATED session", c)
	}
}
