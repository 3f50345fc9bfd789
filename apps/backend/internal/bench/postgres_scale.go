package bench

import (
	"context"
	"fmt"
	"time"

	"github.com/kandev/kandev/apps/backend/internal/action"
	"github.com/kandev/kandev/apps/backend/internal/kanban"
	"github.com/kandev/kandev/apps/backend/internal/pgtest"
	"github.com/kandev/kandev/apps/backend/internal/store"
)

// PostgresScale is section 5's board on PostgreSQL: the same seeded step
// of cfg.StoreTasks tasks, its listings timed in process, and the plan
// PostgreSQL ran for each (EXPLAIN (ANALYZE, BUFFERS), statistics as the
// seed left them).
type PostgresScale struct {
	Tasks       int         `json:"tasks"`
	SeedSeconds float64     `json:"seed_seconds"`
	Lists       []StoreList `json:"lists"` // Store only; Tool is zero
	Plans       []ListPlan  `json:"plans"`
}

// ListPlan is the plan of one listing shape.
type ListPlan struct {
	Name  string   `json:"name"`
	Lines []string `json:"lines"`
}

// measurePostgresScale seeds a fresh database on cl as MeasureStore seeds
// SQLite and times and explains the same listings.
func measurePostgresScale(ctx context.Context, cfg Config, cl *pgtest.Cluster) (*PostgresScale, error) {
	if cfg.StoreTasks <= 1000 {
		return nil, nil
	}
	_, url, err := cl.CreateDatabase(ctx)
	if err != nil {
		return nil, err
	}
	st, err := store.OpenPostgres(ctx, url)
	if err != nil {
		return nil, err
	}
	defer func() { _ = st.Close() }() // read-only from here on
	if err := action.Seed(ctx, st); err != nil {
		return nil, err
	}
	b, err := findBoard(ctx, st)
	if err != nil {
		return nil, err
	}
	res := &PostgresScale{Tasks: cfg.StoreTasks}
	t0 := time.Now()
	if err := seedTasks(ctx, st, b, cfg.StoreTasks); err != nil {
		return nil, err
	}
	res.SeedSeconds = time.Since(t0).Seconds()
	cfg.Logf("postgres: seeded %d tasks in %.1f s", cfg.StoreTasks, res.SeedSeconds)
	shapes := listShapes(b)
	if res.Plans, err = explainShapes(ctx, cfg, st, shapes); err != nil {
		return nil, err
	}
	lat, err := timeStoreLists(ctx, cfg, st, shapes)
	if err != nil {
		return nil, err
	}
	for i, sh := range shapes {
		res.Lists = append(res.Lists, StoreList{Name: sh.name, Args: shownArgs(sh, cfg.StoreTasks-1000), Store: lat[i]})
	}
	return res, nil
}

// explainShapes is the plan of each shape's page, first or deep.
func explainShapes(ctx context.Context, cfg Config, st *store.Store, shapes []listShape) ([]ListPlan, error) {
	cursors, err := deepCursors(ctx, cfg, st, shapes)
	if err != nil {
		return nil, err
	}
	out := make([]ListPlan, len(shapes))
	for i, sh := range shapes {
		lines, err := st.ExplainTaskListing(ctx, sh.filter, kanban.Page{Cursor: cursors[i]})
		if err != nil {
			return nil, fmt.Errorf("explain %s: %w", sh.name, err)
		}
		out[i] = ListPlan{Name: sh.name, Lines: lines}
	}
	return out, nil
}
