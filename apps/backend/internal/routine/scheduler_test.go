package routine

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kandev/kandev/apps/backend/internal/action"
	"github.com/kandev/kandev/apps/backend/internal/kanban"
	"github.com/kandev/kandev/apps/backend/internal/pgtest"
	"github.com/kandev/kandev/apps/backend/internal/store"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// backend is one backend's store, action layer and scheduler.
type backend struct {
	st    *store.Store
	reg   *action.Registry
	sched *Scheduler
}

// launching is a runtime that launches nothing but says it does: the
// sessions started are managed, so a test can move them through their
// states as the runtime would.
type launching struct{ action.NoAgents }

func (launching) Launches() bool { return true }

func newBackend(t *testing.T, st *store.Store) *backend {
	t.Helper()
	reg, svc, err := action.New(action.Deps{Store: st, Agents: launching{}})
	if err != nil {
		t.Fatal(err)
	}
	return &backend{st: st, reg: reg, sched: &Scheduler{Store: st, Run: svc.RunRoutine}}
}

// sqliteBackend is a backend on a fresh SQLite store, seeded.
func sqliteBackend(t *testing.T) *backend {
	t.Helper()
	st, err := store.Open(t.Context(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	if err := action.Seed(t.Context(), st); err != nil {
		t.Fatal(err)
	}
	return newBackend(t, st)
}

func (b *backend) workspace(t *testing.T) string {
	t.Helper()
	l, err := b.st.ListWorkspaces(t.Context(), kanban.Page{})
	if err != nil || len(l.Items) == 0 {
		t.Fatalf("workspaces: %v, %v", l, err)
	}
	return l.Items[0].ID
}

// create makes a routine through routine.create.
func (b *backend) create(t *testing.T, fields map[string]any) *kanban.Routine {
	t.Helper()
	fields["workspace_id"] = b.workspace(t)
	raw, _ := json.Marshal(fields)
	out, err := b.reg.Dispatch(t.Context(), action.Principal{Kind: action.Operator}, kanban.ActionRoutineCreate, raw)
	if err != nil {
		t.Fatalf("routine.create: %v", err)
	}
	return out.(*kanban.Routine)
}

func (b *backend) tick(t *testing.T, now time.Time) int {
	t.Helper()
	n, err := b.sched.Tick(t.Context(), now)
	if err != nil {
		t.Fatalf("tick at %v: %v", now, err)
	}
	return n
}

// runs are a routine's runs, oldest first.
func (b *backend) runs(t *testing.T, id string) []kanban.RoutineRun {
	t.Helper()
	var out []kanban.RoutineRun
	p := kanban.Page{Limit: kanban.MaxLimit}
	for {
		l, err := b.st.ListRoutineRuns(t.Context(), id, p)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, l.Items...)
		if l.NextCursor == "" {
			break
		}
		p.Cursor = l.NextCursor
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out
}

// archiveLast archives the task the routine's last run created.
func (b *backend) archiveLast(t *testing.T, id string) {
	t.Helper()
	r, err := b.st.GetRoutine(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.st.ArchiveTask(t.Context(), r.LastTaskID); err != nil {
		t.Fatalf("archive %s: %v", r.LastTaskID, err)
	}
}

func minuteRoutine() map[string]any {
	return map[string]any{"name": "Every minute", "schedule": "* * * * *", "target": "create_task", "title": "Tick",
		"prompt": "Look around", "start_agent": false}
}

// TestMinuteRoutineOverAnHour: a minute routine ticked (injected clock)
// over an hour, at several ticks a minute, runs 60 times; the run that
// falls due while its previous task is still open is skipped, saying
// why; each other run creates one task.
func TestMinuteRoutineOverAnHour(t *testing.T) {
	t.Parallel()
	b := sqliteBackend(t)
	r := b.create(t, minuteRoutine())
	start := r.NextRunAt
	for m := range 60 {
		for _, s := range []int{0, 7, 31} { // three ticks a minute: two find nothing due
			b.tick(t, start.Add(time.Duration(m)*time.Minute+time.Duration(s)*time.Second))
		}
		if m != 29 { // minute 29's task stays open over minute 30
			b.archiveLast(t, r.ID)
		}
	}
	runs := b.runs(t, r.ID)
	if len(runs) != 60 {
		t.Fatalf("%d runs, want 60", len(runs))
	}
	tasks := map[string]bool{}
	for i, run := range runs {
		if want := start.Add(time.Duration(i) * time.Minute); !run.ScheduledFor.Equal(want) {
			t.Fatalf("run %d is for %v, want %v", i, run.ScheduledFor, want)
		}
		switch {
		case i == 30:
			if run.Outcome != kanban.RunSkipped || !strings.Contains(run.Detail, "is still open") {
				t.Fatalf("run 30 = %+v, want skipped: the previous task is open", run)
			}
		case run.Outcome != kanban.RunCreated || run.TaskID == "" || tasks[run.TaskID]:
			t.Fatalf("run %d = %+v", i, run)
		}
		tasks[run.TaskID] = true
	}
	l, err := b.st.ListTasks(t.Context(), kanban.TaskFilter{WorkspaceID: b.workspace(t), IncludeArchived: true}, kanban.Page{Limit: kanban.MaxLimit})
	if err != nil || len(l.Items) != 59 {
		t.Fatalf("%d tasks (%v), want 59", len(l.Items), err)
	}
}

// TestRoutineOnceAcrossBackendsPostgres: two backends on one PostgreSQL
// database tick together (no advisory lock: the claims alone) over an
// hour; each of the 60 runs is made once, and creates one task.
func TestRoutineOnceAcrossBackendsPostgres(t *testing.T) {
	t.Parallel()
	url := pgtest.Database(t)
	open := func() *store.Store {
		st, err := store.OpenPostgres(t.Context(), url)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = st.Close() })
		return st
	}
	st1 := open()
	if err := action.Seed(t.Context(), st1); err != nil {
		t.Fatal(err)
	}
	a, b := newBackend(t, st1), newBackend(t, open())
	r := a.create(t, minuteRoutine())
	start := r.NextRunAt
	claims := 0
	for m := range 60 {
		now := start.Add(time.Duration(m)*time.Minute + time.Second)
		var wg sync.WaitGroup
		got := make([]int, 2)
		for i, be := range []*backend{a, b} {
			wg.Go(func() { got[i] = be.tick(t, now) })
		}
		wg.Wait()
		claims += got[0] + got[1]
		a.archiveLast(t, r.ID)
	}
	runs := a.runs(t, r.ID)
	if claims != 60 || len(runs) != 60 {
		t.Fatalf("%d claims, %d runs; want 60 of each", claims, len(runs))
	}
	for i, run := range runs {
		if run.Outcome != kanban.RunCreated {
			t.Fatalf("run %d = %+v", i, run)
		}
	}
	l, err := a.st.ListTasks(t.Context(), kanban.TaskFilter{WorkspaceID: a.workspace(t), IncludeArchived: true}, kanban.Page{Limit: kanban.MaxLimit})
	if err != nil || len(l.Items) != 60 {
		t.Fatalf("%d tasks (%v), want 60", len(l.Items), err)
	}
}

// TestRoutineMissedRuns: after 3.5 hours with no tick, an hourly
// routine's missed runs become one run: missed (skip: no task) or run
// once (run_once: a task), saying how many fell due; a tick that finds
// an on-time run after an unseen one folds the unseen one into it.
func TestRoutineMissedRuns(t *testing.T) {
	t.Parallel()
	b := sqliteBackend(t)
	hourly := func(missed string) *kanban.Routine {
		return b.create(t, map[string]any{"name": "Hourly " + missed, "schedule": "0 * * * *", "target": "create_task",
			"title": "Hourly", "start_agent": false, "missed": missed})
	}
	skip, once := hourly(kanban.RoutineMissedSkip), hourly(kanban.RoutineMissedRunOnce)
	start := skip.NextRunAt
	if n := b.tick(t, start.Add(5*time.Second)); n != 2 {
		t.Fatalf("first tick claimed %d, want 2", n)
	}
	b.archiveLast(t, skip.ID)
	b.archiveLast(t, once.ID)
	// Down from start+5s to start+3h30m: due at +1h, +2h, +3h.
	b.tick(t, start.Add(3*time.Hour+30*time.Minute))
	s, o := b.runs(t, skip.ID), b.runs(t, once.ID)
	if len(s) != 2 || len(o) != 2 {
		t.Fatalf("runs: %d and %d, want 2 each", len(s), len(o))
	}
	if s[1].Outcome != kanban.RunMissed || s[1].TaskID != "" || !strings.Contains(s[1].Detail, "3 runs fell due") ||
		!s[1].ScheduledFor.Equal(start.Add(3*time.Hour)) {
		t.Fatalf("skip policy's run = %+v", s[1])
	}
	if o[1].Outcome != kanban.RunCreated || o[1].TaskID == "" || !strings.Contains(o[1].Detail, "run once now") {
		t.Fatalf("run_once policy's run = %+v", o[1])
	}
	// The next run is +4h (not +3h30m's leftovers); a tick at +5h+10s
	// finds +5h on time and +4h unseen.
	b.archiveLast(t, once.ID)
	b.tick(t, start.Add(5*time.Hour+10*time.Second))
	s = b.runs(t, skip.ID)
	if last := s[len(s)-1]; len(s) != 3 || last.Outcome != kanban.RunCreated || !strings.Contains(last.Detail, "1 earlier run fell due") {
		t.Fatalf("runs after the gap = %+v", s)
	}
}

// TestRoutineTimeZone: a 09:00 routine in New York falls due at 14:00
// UTC in winter and 13:00 UTC in summer (the DST change is the zone's,
// from the embedded zone database).
func TestRoutineTimeZone(t *testing.T) {
	t.Parallel()
	s, err := kanban.ParseRoutineSchedule("0 9 * * *", "America/New_York")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ from, want string }{
		{"2026-03-07T15:00:00Z", "2026-03-08T13:00:00Z"}, // DST starts on March 8
		{"2026-03-06T15:00:00Z", "2026-03-07T14:00:00Z"},
		{"2026-11-01T12:00:00Z", "2026-11-01T14:00:00Z"}, // DST ends on November 1
	} {
		from, _ := time.Parse(time.RFC3339, tc.from)
		if got := s.Next(from).Format(time.RFC3339); got != tc.want {
			t.Errorf("next after %s = %s, want %s", tc.from, got, tc.want)
		}
	}
}

// TestRoutineWakeTask: a wake_task routine starts a session for a task
// with none; while that session's turn runs, the next run is skipped;
// once the agent is idle, the next run is its next prompt, in the same
// session; once the task is archived, a run fails.
func TestRoutineWakeTask(t *testing.T) {
	t.Parallel()
	b := sqliteBackend(t)
	ctx := context.Background()
	task, _, err := b.st.CreateTask(ctx, kanban.TaskCreate{WorkspaceID: b.workspace(t), Title: "Standing"})
	if err != nil {
		t.Fatal(err)
	}
	r := b.create(t, map[string]any{"name": "Nudge", "schedule": "*/5 * * * *", "target": "wake_task",
		"task_id": task.ID, "prompt": "Any news?"})
	start := r.NextRunAt
	b.tick(t, start)
	sessions, err := b.st.ListSessions(ctx, task.ID, kanban.Page{})
	if err != nil || len(sessions.Items) != 1 {
		t.Fatalf("sessions %v, %v; want one", sessions, err)
	}
	sess := sessions.Items[0]
	b.tick(t, start.Add(5*time.Minute))
	if _, _, err := b.st.UpdateRun(ctx, sess.ID, kanban.RunUpdate{State: kanban.SessionIdle}); err != nil {
		t.Fatal(err)
	}
	b.tick(t, start.Add(10*time.Minute))
	runs := b.runs(t, r.ID)
	if len(runs) != 3 || runs[0].Outcome != kanban.RunWoken || runs[1].Outcome != kanban.RunSkipped || runs[2].Outcome != kanban.RunWoken {
		t.Fatalf("runs = %+v", runs)
	}
	msgs, err := b.st.ListMessages(ctx, kanban.MessageFilter{TaskID: task.ID, SessionID: sess.ID, Limit: kanban.MaxLimit})
	if err != nil {
		t.Fatal(err)
	}
	prompts := 0
	for _, m := range msgs.Items {
		if m.Content == "Any news?" {
			prompts++
		}
	}
	if prompts != 2 {
		t.Fatalf("%d prompts in the session, want 2", prompts)
	}
	if again, err := b.st.ListSessions(ctx, task.ID, kanban.Page{}); err != nil || len(again.Items) != 1 {
		t.Fatalf("sessions after the second wake: %v, %v", again, err)
	}
	// Archived: the next run fails, saying so, and starts nothing.
	if _, err := b.st.ArchiveTask(ctx, task.ID); err != nil {
		t.Fatal(err)
	}
	b.tick(t, start.Add(15*time.Minute))
	runs = b.runs(t, r.ID)
	if last := runs[len(runs)-1]; last.Outcome != kanban.RunFailed || !strings.Contains(last.Detail, "archived") {
		t.Fatalf("run on the archived task = %+v", last)
	}
}

// TestRoutineDaylightSaving: in Paris, a 02:30 routine runs once on the
// night the clocks go back (not at 02:30 CEST and again at 02:30 CET),
// and not at all on the night they go forward (02:30 does not exist); an
// hourly one follows elapsed time through the repeated hour.
func TestRoutineDaylightSaving(t *testing.T) {
	t.Parallel()
	daily, err := kanban.ParseRoutineSchedule("30 2 * * *", "Europe/Paris")
	if err != nil {
		t.Fatal(err)
	}
	walk := func(s *kanban.RoutineSchedule, from string, n int) []string {
		at, _ := time.Parse(time.RFC3339, from)
		var out []string
		for range n {
			at = s.Next(at)
			out = append(out, at.Format(time.RFC3339))
		}
		return out
	}
	if got, want := walk(daily, "2026-10-24T12:00:00Z", 2), []string{"2026-10-25T00:30:00Z", "2026-10-26T01:30:00Z"}; !slices.Equal(got, want) {
		t.Errorf("autumn: %v, want %v", got, want)
	}
	if got, want := walk(daily, "2026-03-28T12:00:00Z", 1), []string{"2026-03-30T00:30:00Z"}; !slices.Equal(got, want) {
		t.Errorf("spring: %v, want %v", got, want)
	}
	hourly, err := kanban.ParseRoutineSchedule("0 * * * *", "Europe/Paris")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := walk(hourly, "2026-10-24T23:30:00Z", 3), []string{"2026-10-25T00:00:00Z", "2026-10-25T01:00:00Z", "2026-10-25T02:00:00Z"}; !slices.Equal(got, want) {
		t.Errorf("hourly through the repeated hour: %v, want %v", got, want)
	}
}
