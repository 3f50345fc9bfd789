package bench

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
	"github.com/kandev/kandev/apps/backend/internal/routine"
	"github.com/kandev/kandev/apps/backend/internal/store"
)

// RoutinesRun is section 16: what the routine scheduler costs, in
// process on the real SQLite store. An idle tick (nothing due: the one
// indexed read of due routines) is measured on a store holding one
// routine and on one holding RoutineCount (all enabled, none due), paired
// in the same run, so TickRatio shows whether a tick's cost grows with
// the number of routines. A claim (the compare-and-set on the routine's
// next run, the run row, the trim to kanban.MaxRoutineRuns, in one write
// transaction) is paired with appending one conversation message.
type RoutinesRun struct {
	RoutineCount int     `json:"routines"`
	IdleOneNs    float64 `json:"idle_tick_one_routine_ns"`
	IdleManyNs   float64 `json:"idle_tick_many_routines_ns"`
	TickRatio    float64 `json:"idle_tick_many_over_one"`
	ClaimNs      float64 `json:"claim_ns"`
	ClaimAllocs  float64 `json:"claim_allocs"`
	MessageNs    float64 `json:"message_ns"`
	ClaimOverMsg float64 `json:"claim_over_message"`
	SetupSeconds float64 `json:"setup_seconds"`
}

// benchRoutines is how many routines the large store holds.
const benchRoutines = 10_000

// MeasureRoutines runs section 16.
func MeasureRoutines(ctx context.Context, cfg Config) (*RoutinesRun, error) {
	t0 := time.Now()
	one, err := routineStore(ctx, cfg, "routines-one", 1)
	if err != nil {
		return nil, err
	}
	defer func() { _ = one.st.Close() }()
	many, err := routineStore(ctx, cfg, "routines-many", benchRoutines)
	if err != nil {
		return nil, err
	}
	defer func() { _ = many.st.Close() }()
	// Claims on a store of their own: its minute routine is always due,
	// which the idle ticks must not find.
	claims, err := routineStore(ctx, cfg, "routines-claims", 0)
	if err != nil {
		return nil, err
	}
	defer func() { _ = claims.st.Close() }()
	out := &RoutinesRun{RoutineCount: benchRoutines, SetupSeconds: time.Since(t0).Seconds()}
	claim, message, err := claimBenches(ctx, claims)
	if err != nil {
		return nil, err
	}
	var io, im, cr, mr []testing.BenchmarkResult
	for rep := range cfg.MicroReps {
		cfg.Logf("routines: repetition %d/%d", rep+1, cfg.MicroReps)
		a, b := idleTick(ctx, one), idleTick(ctx, many)
		if rep%2 == 0 {
			io, im = append(io, testing.Benchmark(a)), append(im, testing.Benchmark(b))
			cr, mr = append(cr, testing.Benchmark(claim)), append(mr, testing.Benchmark(message))
		} else {
			im, io = append(im, testing.Benchmark(b)), append(io, testing.Benchmark(a))
			mr, cr = append(mr, testing.Benchmark(message)), append(cr, testing.Benchmark(claim))
		}
	}
	for _, rs := range [][]testing.BenchmarkResult{io, im, cr, mr} {
		for _, r := range rs {
			if r.N == 0 {
				return nil, errors.New("routines: a benchmark failed (see the log)")
			}
		}
	}
	out.IdleOneNs, out.IdleManyNs = Median(field(io, nsPerOp)), Median(field(im, nsPerOp))
	out.TickRatio = PairedRatios(field(im, nsPerOp), field(io, nsPerOp))
	out.ClaimNs, out.ClaimAllocs, out.MessageNs = Median(field(cr, nsPerOp)), Median(field(cr, allocsPerOp)), Median(field(mr, nsPerOp))
	out.ClaimOverMsg = PairedRatios(field(cr, nsPerOp), field(mr, nsPerOp))
	cfg.Logf("routines: idle tick %.1f µs with %d routines, %.1f µs with one (×%.2f); claim %.1f µs (×%.2f a message)",
		out.IdleManyNs/1e3, benchRoutines, out.IdleOneNs/1e3, out.TickRatio, out.ClaimNs/1e3, out.ClaimOverMsg)
	return out, nil
}

// routineBench is a store with n routines, none due for a year, and the
// session messages are appended to.
type routineBench struct {
	st   *store.Store
	sess *kanban.Session
	ws   string
}

func routineStore(ctx context.Context, cfg Config, name string, n int) (*routineBench, error) {
	dir, err := mkdir(cfg, name)
	if err != nil {
		return nil, err
	}
	st, err := store.Open(ctx, dir)
	if err != nil {
		return nil, err
	}
	sess, err := usageSession(ctx, st)
	if err != nil {
		_ = st.Close()
		return nil, err
	}
	rb := &routineBench{st: st, sess: sess, ws: sess.WorkspaceID}
	later := kanban.Now().AddDate(1, 0, 0)
	for i := range n {
		if _, err := st.CreateRoutine(ctx, kanban.Routine{WorkspaceID: rb.ws, Name: fmt.Sprintf("Routine %d", i),
			Schedule: "0 9 1 1 *", TimeZone: "UTC", Target: kanban.RoutineCreateTask, Title: "Yearly", StartAgent: true,
			Missed: kanban.RoutineMissedSkip, Enabled: true, NextRunAt: later}); err != nil {
			_ = st.Close()
			return nil, err
		}
	}
	return rb, nil
}

// idleTick is one scheduler tick finding nothing due.
func idleTick(ctx context.Context, rb *routineBench) func(*testing.B) {
	s := &routine.Scheduler{Store: rb.st}
	return func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if n, err := s.Tick(ctx, kanban.Now()); err != nil || n != 0 {
				b.Fatalf("idle tick claimed %d: %v", n, err)
			}
		}
	}
}

// claimBenches are the claim of a minute routine's run, one per
// iteration, and the baseline: one message appended.
func claimBenches(ctx context.Context, rb *routineBench) (claim, message func(*testing.B), err error) {
	r, err := rb.st.CreateRoutine(ctx, kanban.Routine{WorkspaceID: rb.ws, Name: "Claimed", Schedule: "* * * * *", TimeZone: "UTC",
		Target: kanban.RoutineCreateTask, Title: "Minutely", Missed: kanban.RoutineMissedSkip, Enabled: true,
		NextRunAt: time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)})
	if err != nil {
		return nil, nil, err
	}
	claim = func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			next := r.NextRunAt.Add(time.Minute)
			ok, err := rb.st.ClaimRoutineRun(ctx, r, next, kanban.RoutineRun{RoutineID: r.ID, ScheduledFor: r.NextRunAt,
				StartedAt: kanban.Now(), Outcome: kanban.RunSkipped})
			if err != nil || !ok {
				b.Fatalf("claim: %v, %v", ok, err)
			}
			r.NextRunAt = next
		}
	}
	message = func(b *testing.B) {
		for b.Loop() {
			if _, err := rb.st.AppendMessage(ctx, kanban.Message{SessionID: rb.sess.ID, Author: "agent", Type: "message",
				Content: "The turn's answer."}); err != nil {
				b.Fatal(err)
			}
		}
	}
	return claim, message, nil
}

func writeRoutines(b *strings.Builder, r *Results) {
	b.WriteString("## 16. Routine scheduler\n\n")
	u := r.Routines
	if u == nil {
		b.WriteString("Not measured in this run.\n\n")
		return
	}
	fmt.Fprintf(b, "Every backend's scheduler ticks every 10 seconds: an idle tick is one indexed read of the due routines, "+
		"measured on a store holding one routine and on one holding %d (enabled, none due), paired in the same run. A run is "+
		"claimed by a compare-and-set on the routine's next run, the run's row and the trim to the newest %d runs, in one "+
		"write transaction, paired with appending one conversation message. In process, on the real SQLite store; setting "+
		"up the stores took %.1f s.\n\n", u.RoutineCount, kanban.MaxRoutineRuns, u.SetupSeconds)
	b.WriteString("| figure | value |\n|---|---|\n")
	fmt.Fprintf(b, "| idle tick, %d routines | %.1f µs |\n", u.RoutineCount, u.IdleManyNs/1e3)
	fmt.Fprintf(b, "| idle tick, one routine | %.1f µs |\n", u.IdleOneNs/1e3)
	fmt.Fprintf(b, "| %d routines / one | ×%.2f |\n", u.RoutineCount, u.TickRatio)
	fmt.Fprintf(b, "| claiming one run | %.1f µs, %.0f allocs |\n", u.ClaimNs/1e3, u.ClaimAllocs)
	fmt.Fprintf(b, "| claim / message | ×%.2f |\n\n", u.ClaimOverMsg)
}
