package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/kandev/kandev/apps/backend/internal/action"
	"github.com/kandev/kandev/apps/backend/internal/kanban"
	"github.com/kandev/kandev/apps/backend/internal/store"
)

// callsPerListRep is how many sequential listings one repetition times.
const callsPerListRep = 100

// bigBoard is the seeded workflow.
type bigBoard struct{ workspace, workflow, step string }

// listShape is one listing of the big board, with the cursor of a page
// near its end (found by walking every page before it).
type listShape struct {
	name   string
	filter kanban.TaskFilter
	deep   bool
}

// MeasureStore runs section 5: it seeds a workflow with cfg.StoreTasks
// tasks in one transaction, times first and deep pages in process
// (Store.ListTaskSummaries) and through list_tasks_kandev on a `kandev serve` of
// that database, then the sustained create_task_kandev rate with
// cfg.StoreWriters writers.
func MeasureStore(ctx context.Context, cfg Config) (StoreScale, error) {
	res := StoreScale{Tasks: cfg.StoreTasks, Writers: cfg.StoreWriters}
	dir, err := mkdir(cfg, "store-data")
	if err != nil {
		return res, err
	}
	st, err := store.Open(ctx, dir)
	if err != nil {
		return res, err
	}
	closed := false
	defer func() {
		if !closed {
			_ = st.Close() // an error return is already on its way
		}
	}()
	if err := action.Seed(ctx, st); err != nil {
		return res, err
	}
	b, err := findBoard(ctx, st)
	if err != nil {
		return res, err
	}
	t0 := time.Now()
	if err := seedTasks(ctx, st, b, cfg.StoreTasks); err != nil {
		return res, err
	}
	res.SeedSeconds = time.Since(t0).Seconds()
	cfg.Logf("store: seeded %d tasks in %.1f s", cfg.StoreTasks, res.SeedSeconds)
	shapes := listShapes(b)
	storeLat, err := timeStoreLists(ctx, cfg, st, shapes)
	if err != nil {
		return res, err
	}
	closed = true
	if err := st.Close(); err != nil {
		return res, err
	}
	be, err := startBackend(ctx, cfg, "serve-store", dir)
	if err != nil {
		return res, err
	}
	defer be.stop()
	ep, err := newEndpoint(ctx, "kandev /mcp (big board)", be.base+"/mcp", be.token, newHTTPClient(2*cfg.StoreWriters), cfg.StoreWriters)
	if err != nil {
		return res, err
	}
	toolLat, err := timeToolLists(ctx, cfg, ep, b, shapes)
	if err != nil {
		return res, err
	}
	for i, sh := range shapes {
		res.Lists = append(res.Lists, StoreList{Name: sh.name, Args: shownArgs(sh, cfg.StoreTasks-1000), Tool: toolLat[i], Store: storeLat[i]})
	}
	runs, err := timeCreates(ctx, cfg, ep)
	if err != nil {
		return res, err
	}
	res.Create = loadStat(runs)
	return res, be.alive()
}

// listShapes is the pages section 5 times on the big board b.
func listShapes(b bigBoard) []listShape {
	return []listShape{
		{name: "step, first page", filter: kanban.TaskFilter{WorkspaceID: b.workspace, WorkflowStepID: b.step}},
		{name: "step, deep page", filter: kanban.TaskFilter{WorkspaceID: b.workspace, WorkflowStepID: b.step}, deep: true},
		{name: "workflow, first page", filter: kanban.TaskFilter{WorkspaceID: b.workspace, WorkflowID: b.workflow}},
		{name: "workflow, deep page", filter: kanban.TaskFilter{WorkspaceID: b.workspace, WorkflowID: b.workflow}, deep: true},
	}
}

// timeCreates is cfg.Reps runs of the sustained create_task_kandev load
// with cfg.StoreWriters writers.
func timeCreates(ctx context.Context, cfg Config, ep *endpoint) ([]loadRun, error) {
	point := time.Duration(cfg.Point * float64(time.Second))
	var runs []loadRun
	for rep := range cfg.Reps {
		cfg.Logf("store: create_task with %d writers, repetition %d/%d", cfg.StoreWriters, rep+1, cfg.Reps)
		r, err := runLoad(ctx, ep, createCall, cfg.StoreWriters, point)
		if err != nil {
			return nil, err
		}
		runs = append(runs, r)
	}
	return runs, nil
}

// findBoard returns the seeded default workflow and its start step.
func findBoard(ctx context.Context, st *store.Store) (bigBoard, error) {
	var b bigBoard
	err := st.DB().QueryRowContext(ctx, `SELECT w.workspace_id, w.id, s.id FROM workflows w
		JOIN workflow_steps s ON s.workflow_id = w.id AND s.is_start_step = 1 ORDER BY w.sort_order LIMIT 1`).
		Scan(&b.workspace, &b.workflow, &b.step)
	if err != nil {
		return b, fmt.Errorf("find the seeded workflow: %w", err)
	}
	return b, nil
}

// seedTimeLayout is the store's fixed-width UTC timestamp layout (text
// order is time order).
const seedTimeLayout = "2006-01-02T15:04:05.000000Z"

// seedTasks inserts n tasks on the board's start step with raw inserts in
// one transaction: minutes faster than n CreateTask calls, and the rows are
// the same shape CreateTask writes.
func seedTasks(ctx context.Context, st *store.Store, b bigBoard, n int) (err error) {
	tx, err := st.DB().BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("seed: %w", err)
	}
	defer func() {
		if err != nil {
			_ = tx.Rollback() // the error being returned matters more
		}
	}()
	ins, err := tx.PrepareContext(ctx, st.Rebind(`INSERT INTO tasks (id, workspace_id, workflow_id, workflow_step_id, parent_id,
		title, description, state, position, external_id, start_when_unblocked, launch_prompt, archived_at, created_at, updated_at,
		step_entered_at) VALUES (?, ?, ?, ?, NULL, ?, ?, 'TODO', ?, NULL, 0, '', NULL, ?, ?, ?)`))
	if err != nil {
		return fmt.Errorf("seed: %w", err)
	}
	defer func() { _ = ins.Close() }()
	base := kanban.Now().Add(-time.Duration(n) * time.Millisecond)
	for i := range n {
		ts := base.Add(time.Duration(i) * time.Millisecond).UTC().Format(seedTimeLayout)
		if _, err := ins.ExecContext(ctx, kanban.NewID(), b.workspace, b.workflow, b.step,
			fmt.Sprintf("Seeded task %d", i), "Seeded by kandev-bench for the 100k-task listing.", store.TaskKey(i), ts, ts, ts); err != nil {
			return fmt.Errorf("seed: %w", err)
		}
	}
	return tx.Commit()
}

// timeStoreLists times each shape through Store.ListTaskSummaries, the
// listing list_tasks_kandev makes.
func timeStoreLists(ctx context.Context, cfg Config, st *store.Store, shapes []listShape) ([]LatencyStat, error) {
	cursors, err := deepCursors(ctx, cfg, st, shapes)
	if err != nil {
		return nil, err
	}
	return timeLists(cfg, "store", shapes, func(i int) error {
		l, err := st.ListTaskSummaries(ctx, shapes[i].filter, kanban.Page{Cursor: cursors[i]})
		if err == nil && len(l.Items) != kanban.DefaultLimit {
			err = fmt.Errorf("got %d items, want %d", len(l.Items), kanban.DefaultLimit)
		}
		return err
	})
}

// deepCursors is each shape's cursor: "" for a first page, else the
// cursor after cfg.StoreTasks-1000 tasks, found by walking the pages.
func deepCursors(ctx context.Context, cfg Config, st *store.Store, shapes []listShape) ([]string, error) {
	cursors := make([]string, len(shapes))
	for i, sh := range shapes {
		if !sh.deep {
			continue
		}
		p := kanban.Page{Limit: kanban.MaxLimit}
		for walked := 0; walked < cfg.StoreTasks-1000; walked += kanban.MaxLimit {
			l, err := st.ListTasks(ctx, sh.filter, p)
			if err != nil {
				return nil, fmt.Errorf("store walk %s: %w", sh.name, err)
			}
			p.Cursor = l.NextCursor
		}
		cursors[i] = p.Cursor
	}
	return cursors, nil
}

// timeToolLists times each shape through list_tasks_kandev at one client.
func timeToolLists(ctx context.Context, cfg Config, ep *endpoint, b bigBoard, shapes []listShape) ([]LatencyStat, error) {
	s := ep.sessions[0]
	calls := make([]json.RawMessage, len(shapes))
	for i, sh := range shapes {
		cursor := ""
		if sh.deep {
			for walked := 0; walked < cfg.StoreTasks-1000; walked += kanban.MaxLimit {
				args := toolArgs(b, sh, cursor)
				args["limit"] = kanban.MaxLimit
				l, err := listPage(ctx, s, args)
				if err != nil {
					return nil, fmt.Errorf("tool walk %s: %w", sh.name, err)
				}
				cursor = l.NextCursor
			}
		}
		raw, err := json.Marshal(toolArgs(b, sh, cursor))
		if err != nil {
			return nil, err
		}
		calls[i] = raw
	}
	for i, sh := range shapes {
		var args map[string]any
		if err := json.Unmarshal(calls[i], &args); err != nil {
			return nil, err
		}
		l, err := listPage(ctx, s, args)
		if err != nil {
			return nil, fmt.Errorf("list_tasks_kandev %s: %w", sh.name, err)
		}
		if len(l.Items) != kanban.DefaultLimit {
			return nil, fmt.Errorf("list_tasks_kandev %s: got %d items, want a full page of %d", sh.name, len(l.Items), kanban.DefaultLimit)
		}
	}
	return timeLists(cfg, "list_tasks_kandev", shapes, func(i int) error {
		_, err := s.call(ctx, listCall.tool, calls[i])
		return err
	})
}

// shownArgs is a shape's list_tasks_kandev arguments with placeholders,
// for the docs.
func shownArgs(sh listShape, deepAfter int) string {
	args := `{"workflow_id":"<workflow id>"`
	if sh.filter.WorkflowStepID != "" {
		args = `{"workflow_step_id":"<step id>"`
	}
	if sh.deep {
		args += fmt.Sprintf(`,"cursor":"<cursor after %d tasks>"`, deepAfter)
	}
	return args + "}"
}

func toolArgs(b bigBoard, sh listShape, cursor string) map[string]any {
	args := map[string]any{}
	if sh.filter.WorkflowStepID != "" {
		args["workflow_step_id"] = b.step
	} else {
		args["workflow_id"] = b.workflow
	}
	if cursor != "" {
		args["cursor"] = cursor
	}
	return args
}

func listPage(ctx context.Context, s *session, args map[string]any) (*kanban.List[json.RawMessage], error) {
	raw, err := json.Marshal(args)
	if err != nil {
		return nil, err
	}
	body, err := s.call(ctx, listCall.tool, raw)
	if err != nil {
		return nil, err
	}
	sc, err := structured(body)
	if err != nil {
		return nil, err
	}
	var l kanban.List[json.RawMessage]
	if err := json.Unmarshal(sc, &l); err != nil {
		return nil, err
	}
	if l.NextCursor == "" {
		return nil, fmt.Errorf("page of %d items has no next_cursor", len(l.Items))
	}
	return &l, nil
}

// timeLists runs callsPerListRep sequential calls of each shape per
// repetition, shapes interleaved, and returns the median p50/p99.
func timeLists(cfg Config, what string, shapes []listShape, do func(i int) error) ([]LatencyStat, error) {
	p50s, p99s := make([][]float64, len(shapes)), make([][]float64, len(shapes))
	for rep := range cfg.Reps {
		cfg.Logf("store: %s listings, repetition %d/%d", what, rep+1, cfg.Reps)
		for i := range shapes {
			lat := make([]time.Duration, 0, callsPerListRep)
			for range callsPerListRep {
				t0 := time.Now()
				if err := do(i); err != nil {
					return nil, fmt.Errorf("%s %s: %w", what, shapes[i].name, err)
				}
				lat = append(lat, time.Since(t0))
			}
			slices.Sort(lat)
			p50s[i] = append(p50s[i], ms(Percentile(lat, 50)))
			p99s[i] = append(p99s[i], ms(Percentile(lat, 99)))
		}
	}
	out := make([]LatencyStat, len(shapes))
	for i := range shapes {
		out[i] = LatencyStat{P50Ms: Median(p50s[i]), P99Ms: Median(p99s[i]), Samples: cfg.Reps * callsPerListRep}
	}
	return out, nil
}
