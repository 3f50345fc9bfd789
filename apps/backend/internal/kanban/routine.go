package kanban

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"
	_ "time/tzdata" // every IANA zone, whatever the machine has installed

	"github.com/robfig/cron/v3"
)

// Routine targets: what a routine does when it falls due.
const (
	RoutineCreateTask = "create_task" // create a task (and start its agent)
	RoutineWakeTask   = "wake_task"   // give an existing task's agent a prompt
)

// RoutineTargets is the closed set of routine targets.
var RoutineTargets = []string{RoutineCreateTask, RoutineWakeTask}

// Missed-run policies: what a routine does about the runs that fell due
// while no backend ran its scheduler (downtime).
const (
	RoutineMissedSkip    = "skip"     // record them as missed; wait for the next run
	RoutineMissedRunOnce = "run_once" // run once for all of them, now
)

// RoutineMissedPolicies is the closed set of missed-run policies.
var RoutineMissedPolicies = []string{RoutineMissedSkip, RoutineMissedRunOnce}

// Run outcomes.
const (
	RunStarted = "started" // claimed; its task is being created or woken
	RunCreated = "created" // a task was created
	RunWoken   = "woken"   // the task's agent was given the prompt
	RunSkipped = "skipped" // the previous run was still in flight
	RunMissed  = "missed"  // fell due during downtime; policy skip
	RunFailed  = "failed"  // the task could not be created or woken
)

// Routine bounds.
const (
	// RoutineGrace is how late a run may start and still count as on
	// time: a run found later than this fell due during downtime, and the
	// routine's missed policy applies.
	RoutineGrace = time.Minute
	// MaxRoutineRuns is how many runs are kept per routine (the oldest
	// are deleted).
	MaxRoutineRuns = 500
	// MaxScheduleLen bounds a cron expression.
	MaxScheduleLen = 100
	// MaxRoutinesPerWorkspace bounds the routines of one workspace.
	MaxRoutinesPerWorkspace = 10_000
	// maxCountedRuns bounds how many due runs are counted for a routine
	// that was not run for a long time.
	maxCountedRuns = 10_000
)

// Routine is a schedule that creates a task or wakes one: at each time
// its cron expression names, in its time zone, one run.
type Routine struct {
	ID          string `json:"id"`
	WorkspaceID string `json:"workspace_id"`
	Name        string `json:"name"`
	// Schedule is a five-field cron expression (minute hour day-of-month
	// month day-of-week) or one of @yearly, @monthly, @weekly, @daily,
	// @hourly; TimeZone is the IANA zone it is read in.
	Schedule string `json:"schedule"`
	TimeZone string `json:"time_zone"`
	Target   string `json:"target"`
	// Title and the profiles, workflow and step are the task a
	// create_task run creates; TaskID is the task a wake_task run wakes.
	// Prompt is the created task's prompt, or the woken agent's.
	Title             string `json:"title,omitempty"`
	Prompt            string `json:"prompt,omitempty"`
	WorkflowID        string `json:"workflow_id,omitempty"`
	WorkflowStepID    string `json:"workflow_step_id,omitempty"`
	AgentProfileID    string `json:"agent_profile_id,omitempty"`
	ExecutorProfileID string `json:"executor_profile_id,omitempty"`
	StartAgent        bool   `json:"start_agent"`
	TaskID            string `json:"task_id,omitempty"`
	Missed            string `json:"missed"`
	Enabled           bool   `json:"enabled"`
	// NextRunAt is when it next falls due (UTC); LastRunAt when it last
	// ran (nil: never); LastTaskID the task its last run created or woke.
	NextRunAt  time.Time  `json:"next_run_at"`
	LastRunAt  *time.Time `json:"last_run_at,omitempty"`
	LastTaskID string     `json:"last_task_id,omitempty"`
	CreatedAt  time.Time  `json:"created_at"`
	UpdatedAt  time.Time  `json:"updated_at"`
}

// RoutineRun is one run of a routine: the schedule time it was for, when
// it ran, and what came of it.
type RoutineRun struct {
	RoutineID    string    `json:"routine_id"`
	ScheduledFor time.Time `json:"scheduled_for"`
	StartedAt    time.Time `json:"started_at"`
	Outcome      string    `json:"outcome"`
	TaskID       string    `json:"task_id,omitempty"`
	// Detail says why a run was skipped, missed or failed, and how many
	// runs it stands for after downtime.
	Detail string `json:"detail,omitempty"`
}

// Check validates r's fields (not the ids it names: those are checked by
// the action layer), defaults its time zone and missed policy, and
// returns its parsed schedule.
func (r *Routine) Check() (*RoutineSchedule, error) {
	if err := CheckLine("name", r.Name, true, MaxNameLen); err != nil {
		return nil, err
	}
	if r.TimeZone == "" {
		r.TimeZone = "UTC"
	}
	if r.Missed == "" {
		r.Missed = RoutineMissedSkip
	}
	sched, err := ParseRoutineSchedule(r.Schedule, r.TimeZone)
	if err != nil {
		return nil, err
	}
	if !slices.Contains(RoutineMissedPolicies, r.Missed) {
		return nil, FieldError("missed", "must be one of skip, run_once")
	}
	return sched, r.checkTarget()
}

// checkTarget checks the fields of r's target.
func (r *Routine) checkTarget() error {
	switch r.Target {
	case RoutineCreateTask:
		if r.TaskID != "" {
			return FieldError("task_id", "is for wake_task routines only")
		}
		if err := CheckLine("title", r.Title, true, MaxTitleLen); err != nil {
			return err
		}
		return CheckText("prompt", r.Prompt, false, MaxPromptLen)
	case RoutineWakeTask:
		if r.TaskID == "" {
			return FieldError("task_id", "is required for a wake_task routine")
		}
		if r.Title != "" || r.WorkflowID != "" || r.WorkflowStepID != "" || r.AgentProfileID != "" || r.ExecutorProfileID != "" {
			return FieldError("target", "a wake_task routine takes task_id and prompt only (title, workflow and profiles are the task's own)")
		}
		return CheckText("prompt", r.Prompt, true, MaxPromptLen)
	default:
		return FieldError("target", "must be one of create_task, wake_task")
	}
}

// RoutineSchedule is a parsed schedule in its time zone.
type RoutineSchedule struct {
	sched cron.Schedule
	loc   *time.Location
	// everyHour: the schedule names every hour (its hour field is * or
	// covers 0-23), so an hour a daylight-saving change repeats runs
	// again, as elapsed time says.
	everyHour bool
}

var routineParser = cron.NewParser(cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow | cron.Descriptor)

// ParseRoutineSchedule parses a cron expression read in the IANA zone
// tz. It refuses @every (a routine follows the clock, not an interval),
// an embedded TZ= or CRON_TZ= (the zone is its own field), and an
// expression that never falls due.
func ParseRoutineSchedule(expr, tz string) (*RoutineSchedule, error) {
	if err := CheckLine("schedule", expr, true, MaxScheduleLen); err != nil {
		return nil, err
	}
	e := strings.TrimSpace(expr)
	if strings.HasPrefix(e, "@every") {
		return nil, FieldError("schedule", "@every is not supported: use a cron expression such as */15 * * * *")
	}
	if strings.HasPrefix(e, "TZ=") || strings.HasPrefix(e, "CRON_TZ=") {
		return nil, FieldError("schedule", "name the zone in time_zone, not in the expression")
	}
	if tz == "" || strings.EqualFold(tz, "local") || len(tz) > MaxNameLen {
		return nil, FieldError("time_zone", "must be an IANA time zone such as UTC or Europe/Paris")
	}
	loc, err := time.LoadLocation(tz)
	if err != nil {
		return nil, FieldError("time_zone", "must be an IANA time zone such as UTC or Europe/Paris")
	}
	sched, err := routineParser.Parse(e)
	if err != nil {
		return nil, FieldError("schedule", "is not a cron expression (minute hour day-of-month month day-of-week, or @hourly, @daily, @weekly, @monthly, @yearly): %s", cronReason(err))
	}
	s := &RoutineSchedule{sched: sched, loc: loc}
	if spec, ok := sched.(*cron.SpecSchedule); ok && spec.Hour&0xFFFFFF == 0xFFFFFF {
		s.everyHour = true
	}
	if s.Next(time.Now()).IsZero() {
		return nil, FieldError("schedule", "never falls due")
	}
	return s, nil
}

// cronReason words the parser's error without quoting the expression.
func cronReason(err error) string {
	msg := err.Error()
	switch {
	case strings.Contains(msg, "fields"):
		return "it needs exactly five fields"
	case strings.Contains(msg, "above maximum"), strings.Contains(msg, "below minimum"), strings.Contains(msg, "beyond end of range"):
		return "a value is out of its field's range"
	case strings.Contains(msg, "descriptor"):
		return "an unknown @ descriptor"
	default:
		return "a field is not a number, name, range, list or step"
	}
}

// Next is the first time after t the schedule falls due, in UTC (zero:
// never). A schedule of given hours falls due once at a wall-clock time
// a daylight-saving change repeats (autumn), at its first occurrence;
// one of every hour follows elapsed time through it. A time a change
// skips (spring) does not fall due that day.
func (s *RoutineSchedule) Next(t time.Time) time.Time {
	lt := t.In(s.loc)
	n := s.sched.Next(lt)
	if !n.IsZero() && !s.everyHour && sameWallClock(n, lt) {
		n = s.sched.Next(n) // the repeated hour's second occurrence
	}
	if n.IsZero() {
		return n
	}
	return n.UTC()
}

// sameWallClock says whether a and b (in one zone) read the same local
// date and time to the minute.
func sameWallClock(a, b time.Time) bool {
	ay, am, ad := a.Date()
	by, bm, bd := b.Date()
	return ay == by && am == bm && ad == bd && a.Hour() == b.Hour() && a.Minute() == b.Minute()
}

// DueRuns walks the schedule from next (a time it falls due) to now: the
// last time at or before now it fell due (zero when next is after now),
// how many times it fell due in all (counting stops at a bound: a
// routine left for years is not walked minute by minute), and the first
// time after now.
func (s *RoutineSchedule) DueRuns(next, now time.Time) (last time.Time, count int, after time.Time) {
	for t := next; !t.IsZero() && !t.After(now); t = s.Next(t) {
		last, count = t, count+1
		if count == maxCountedRuns {
			return s.latestBefore(now, last), count, s.Next(now)
		}
	}
	return last, count, s.Next(now)
}

// latestBefore is the latest time at or before now the schedule falls
// due, found in the smallest of a few growing windows before now that
// holds one (each walked within the count bound); floor when none does.
func (s *RoutineSchedule) latestBefore(now, floor time.Time) time.Time {
	for _, w := range []time.Duration{time.Minute, time.Hour, 24 * time.Hour, 32 * 24 * time.Hour, 367 * 24 * time.Hour} {
		last := time.Time{}
		n := 0
		for t := s.Next(now.Add(-w)); !t.IsZero() && !t.After(now) && n < maxCountedRuns; t = s.Next(t) {
			last, n = t, n+1
		}
		if !last.IsZero() {
			return last
		}
	}
	return floor
}

// MissedText is the detail of a run standing for count runs that fell due
// during downtime, the latest at last.
func MissedText(count int, last time.Time, policy string) string {
	return fmt.Sprintf("%s fell due while no backend ran the scheduler, the latest at %s: %s", runsText(count, ""),
		last.UTC().Format(time.RFC3339), policyText(policy, "run once now"))
}

// EarlierText is the detail of an on-time run that also stands for n
// earlier due times no tick saw.
func EarlierText(n int, policy string) string {
	return runsText(n, "earlier ") + " fell due while no backend ran the scheduler: " + policyText(policy, "this run stands for them")
}

// runsText is "1 run", "N runs" or "10000 or more runs", with kind
// ("earlier ") before the noun.
func runsText(n int, kind string) string {
	switch {
	case n >= maxCountedRuns:
		return fmt.Sprintf("%d or more %sruns", maxCountedRuns, kind)
	case n == 1:
		return "1 " + kind + "run"
	default:
		return fmt.Sprintf("%d %sruns", n, kind)
	}
}

// policyText says what a missed-run policy did: skipped, or runOnce.
func policyText(policy, runOnce string) string {
	if policy == RoutineMissedRunOnce {
		return runOnce + " (missed: run_once)"
	}
	return "skipped (missed: skip)"
}

// RoutineFields is the change routine.update makes: nil fields are kept.
type RoutineFields struct {
	Name, Schedule, TimeZone, Title, Prompt   *string
	WorkflowID, WorkflowStepID                *string
	AgentProfileID, ExecutorProfileID, TaskID *string
	Missed                                    *string
	StartAgent, Enabled                       *bool
}

// Apply returns r with f's fields set, and whether its schedule (its
// expression, zone or enabling) changed, so its next run is recomputed.
func (f RoutineFields) Apply(r Routine) (Routine, bool) {
	old := r
	for _, p := range []struct {
		dst *string
		src *string
	}{{&r.Name, f.Name}, {&r.Schedule, f.Schedule}, {&r.TimeZone, f.TimeZone}, {&r.Title, f.Title},
		{&r.Prompt, f.Prompt}, {&r.WorkflowID, f.WorkflowID}, {&r.WorkflowStepID, f.WorkflowStepID},
		{&r.AgentProfileID, f.AgentProfileID}, {&r.ExecutorProfileID, f.ExecutorProfileID},
		{&r.TaskID, f.TaskID}, {&r.Missed, f.Missed}} {
		if p.src != nil {
			*p.dst = *p.src
		}
	}
	if f.StartAgent != nil {
		r.StartAgent = *f.StartAgent
	}
	if f.Enabled != nil {
		r.Enabled = *f.Enabled
	}
	return r, r.Schedule != old.Schedule || r.TimeZone != old.TimeZone || r.Enabled != old.Enabled
}

// RoutineService stores routines and their runs.
type RoutineService interface {
	// CreateRoutine stores a new routine (r.NextRunAt set by the caller).
	CreateRoutine(ctx context.Context, r Routine) (*Routine, error)
	// ReplaceRoutine stores r over the routine of its id; when reschedule
	// is set, its next run is r.NextRunAt, else it keeps its own.
	ReplaceRoutine(ctx context.Context, r Routine, reschedule bool) (*Routine, error)
	GetRoutine(ctx context.Context, id string) (*Routine, error)
	// ListRoutines returns a page of a workspace's routines, oldest first.
	ListRoutines(ctx context.Context, workspaceID string, p Page) (*List[Routine], error)
	// DeleteRoutine deletes a routine and its runs.
	DeleteRoutine(ctx context.Context, id string) error
	// ListRoutineRuns returns a page of a routine's runs, newest first.
	ListRoutineRuns(ctx context.Context, routineID string, p Page) (*List[RoutineRun], error)
	// DueRoutines returns up to limit enabled routines due at now, the
	// earliest first.
	DueRoutines(ctx context.Context, now time.Time, limit int) ([]Routine, error)
	// ClaimRoutineRun moves a routine's next run from r.NextRunAt to next
	// and records run, unless another scheduler moved it first (false).
	ClaimRoutineRun(ctx context.Context, r *Routine, next time.Time, run RoutineRun) (bool, error)
	// FinishRoutineRun records what came of a claimed run (and, with a
	// task, the routine's last task).
	FinishRoutineRun(ctx context.Context, run RoutineRun) error
}
