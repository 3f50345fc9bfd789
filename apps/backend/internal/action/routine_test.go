package action

import (
	"strings"
	"testing"
	"time"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// routineArgs is a routine.create payload in h's workspace with rest.
func routineArgs(h *harness, rest string) string {
	return `{"workspace_id":"` + h.ws + `","name":"Triage",` + rest + `}`
}

// TestRoutineRefusals: routine.create refuses bad schedules, zones,
// targets and ids before it writes anything, with what to fix; a session
// may not create routines.
func TestRoutineRefusals(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	_, other, otherTask := h.otherBoard()
	task := h.task("Nightly")
	create := func(rest string) string { return routineArgs(h, rest) }
	for _, tc := range []struct{ args, want string }{
		{create(`"schedule":"61 * * * *","target":"create_task","title":"T"`), "schedule: is not a cron expression"},
		{create(`"schedule":"@every 5m","target":"create_task","title":"T"`), "@every is not supported"},
		{create(`"schedule":"CRON_TZ=UTC 0 9 * * *","target":"create_task","title":"T"`), "name the zone in time_zone"},
		{create(`"schedule":"0 0 30 2 *","target":"create_task","title":"T"`), "never falls due"},
		{create(`"schedule":"0 9 * * *","time_zone":"Mars/Olympus","target":"create_task","title":"T"`), "time_zone: must be an IANA time zone"},
		{create(`"schedule":"0 9 * * *","time_zone":"Local","target":"create_task","title":"T"`), "time_zone: must be an IANA time zone"},
		{create(`"schedule":"0 9 * * *","target":"create_task"`), "title"},
		{create(`"schedule":"0 9 * * *","target":"wake_task","prompt":"go"`), "task_id: is required"},
		{create(`"schedule":"0 9 * * *","target":"wake_task","task_id":"` + task.ID + `"`), "prompt"},
		{create(`"schedule":"0 9 * * *","target":"wake_task","task_id":"` + task.ID + `","prompt":"go","title":"T"`), "task_id and prompt only"},
		{create(`"schedule":"0 9 * * *","target":"create_task","title":"T","task_id":"` + task.ID + `"`), "task_id: is for wake_task"},
		{create(`"schedule":"0 9 * * *","target":"create_task","title":"T","missed":"catch_up"`), "/missed"},
		{create(`"schedule":"0 9 * * *","target":"launch","title":"T"`), "/target"},
	} {
		if msg := h.refuse(operator, kanban.ActionRoutineCreate, tc.args, kanban.CodeValidation); !strings.Contains(msg, tc.want) {
			t.Errorf("%s: got %q, want it to say %q", tc.args, msg, tc.want)
		}
	}
	for _, tc := range []struct{ args, want string }{
		{create(`"schedule":"0 9 * * *","target":"wake_task","task_id":"` + otherTask.ID + `","prompt":"go"`), "no such task in the routine's workspace"},
		{create(`"schedule":"0 9 * * *","target":"create_task","title":"T","workflow_id":"` + other.ID + `"`), "workflow"},
	} {
		if msg := h.refuse(operator, kanban.ActionRoutineCreate, tc.args, kanban.CodeNotFound); !strings.Contains(msg, tc.want) {
			t.Errorf("%s: got %q, want it to say %q", tc.args, msg, tc.want)
		}
	}
	h.refuse(h.session(task, kanban.ModeTask), kanban.ActionRoutineCreate,
		create(`"schedule":"0 9 * * *","target":"create_task","title":"T"`), kanban.CodeForbidden)
}

// TestRoutineActions: create, get, update (a new schedule moves the next
// run, another field keeps it), list pages and delete.
func TestRoutineActions(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	task := h.task("Nightly")
	create := func(rest string) string { return routineArgs(h, rest) }
	ok := create(`"schedule":"0 9 * * 1-5","time_zone":"Europe/Paris","target":"create_task","title":"Triage","prompt":"Look at new issues"`)
	r := call[kanban.Routine](h, operator, kanban.ActionRoutineCreate, ok)
	if !r.Enabled || !r.StartAgent || r.Missed != kanban.RoutineMissedSkip || r.NextRunAt.IsZero() {
		t.Fatalf("routine = %+v", r)
	}
	if paris := r.NextRunAt.In(mustZone(t, "Europe/Paris")); paris.Hour() != 9 || paris.Minute() != 0 || paris.Weekday() == time.Saturday || paris.Weekday() == time.Sunday {
		t.Fatalf("next run %v is not 09:00 on a weekday in Paris", paris)
	}
	if got := call[kanban.Routine](h, operator, kanban.ActionRoutineGet, `{"id":"`+r.ID+`"}`); got.Name != "Triage" || !got.NextRunAt.Equal(r.NextRunAt) {
		t.Fatalf("get = %+v", got)
	}
	h.refuse(operator, kanban.ActionRoutineUpdate, `{"id":"`+r.ID+`","schedule":"never"}`, kanban.CodeValidation)
	kept := call[kanban.Routine](h, operator, kanban.ActionRoutineUpdate, `{"id":"`+r.ID+`","name":"Morning triage"}`)
	if kept.Name != "Morning triage" || !kept.NextRunAt.Equal(r.NextRunAt) {
		t.Fatalf("renamed = %+v (next run moved?)", kept)
	}
	moved := call[kanban.Routine](h, operator, kanban.ActionRoutineUpdate, `{"id":"`+r.ID+`","schedule":"30 * * * *","time_zone":"UTC"}`)
	if moved.NextRunAt.Minute() != 30 || moved.NextRunAt.Equal(r.NextRunAt) {
		t.Fatalf("rescheduled = %+v", moved)
	}
	for range 2 {
		call[kanban.Routine](h, operator, kanban.ActionRoutineCreate, create(`"schedule":"@daily","target":"wake_task","task_id":"`+task.ID+`","prompt":"Check in"`))
	}
	page := call[kanban.List[kanban.Routine]](h, operator, kanban.ActionRoutineList, `{"workspace_id":"`+h.ws+`","limit":2}`)
	if len(page.Items) != 2 || page.NextCursor == "" || page.Items[0].ID != r.ID {
		t.Fatalf("first page = %+v", page)
	}
	rest := call[kanban.List[kanban.Routine]](h, operator, kanban.ActionRoutineList, `{"workspace_id":"`+h.ws+`","limit":2,"cursor":"`+page.NextCursor+`"}`)
	if len(rest.Items) != 1 || rest.NextCursor != "" {
		t.Fatalf("second page = %+v", rest)
	}
	if runs := call[kanban.List[kanban.RoutineRun]](h, operator, kanban.ActionRoutineRuns, `{"id":"`+r.ID+`"}`); len(runs.Items) != 0 {
		t.Fatalf("runs = %+v", runs)
	}
	call[Deleted](h, operator, kanban.ActionRoutineDelete, `{"id":"`+r.ID+`"}`)
	h.refuse(operator, kanban.ActionRoutineGet, `{"id":"`+r.ID+`"}`, kanban.CodeNotFound)
	h.refuse(operator, kanban.ActionRoutineDelete, `{"id":"`+r.ID+`"}`, kanban.CodeNotFound)
	if n := h.count("routines"); n != 2 {
		t.Fatalf("%d routines left, want 2", n)
	}
}

func mustZone(t *testing.T, name string) *time.Location {
	t.Helper()
	loc, err := time.LoadLocation(name)
	if err != nil {
		t.Fatal(err)
	}
	return loc
}
