// Package flow is the workflow engine: it runs the automations of the
// steps tasks enter, leave and have agent turns on, auto-advances tasks at
// the end of a turn, admits waiting tasks into full steps as room frees,
// and archives tasks that stayed on a step too long. Work is asynchronous
// (never on a request's path), in order per task, failure-isolated (one
// failing automation is recorded and the others run), and loop-bounded.
//
// It reacts to the domain events (kanban.DomainEvents) the action layer
// and the agent runtime emit, and performs what automations do through
// the action layer's Service. It depends on the domain (kanban) and the
// action layer; neither they nor the runtime depend on it. Its automations
// run under the base context it is built with: when that ends, running
// and queued ones are cancelled.
package flow

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/kandev/kandev/apps/backend/internal/action"
	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// Defaults and bounds of the engine.
const (
	// MaxChain bounds the transitions automations make in a row from one
	// cause; the next is cut with a recorded error (A → B → A loops).
	MaxChain = 10
	// maxPending bounds the events waiting per task or step.
	maxPending = 1000
	// archiveBatch is how many tasks one sweep archives at most.
	archiveBatch = 500
	// maxAdmissions bounds the tasks one freed step admits in a row.
	maxAdmissions = kanban.MaxWIPLimit
)

// Config configures an Engine.
type Config struct {
	Store   kanban.Store
	Service *action.Service
	// Events are the domain events the engine reacts to (task created,
	// moved, step freed, agent turns); nil: none reach it.
	Events *kanban.DomainEvents
	Logger *slog.Logger
	// Clock is the time the auto-archive sweep compares with (time.Now).
	Clock func() time.Time
	// SweepInterval is how often the auto-archive sweep runs (1 minute).
	SweepInterval time.Duration
	// Once, when set, runs a sweep unless another backend sharing the
	// database is running it (see cluster.Once); nil runs every sweep.
	Once func(ctx context.Context, name string, sweep func())
}

// Engine is the workflow engine.
type Engine struct {
	// ctx is the engine's base context (New's): every automation runs
	// under it.
	ctx   context.Context
	store kanban.Store
	svc   *action.Service
	log   *slog.Logger
	clock func() time.Time
	every time.Duration
	once  func(ctx context.Context, name string, sweep func())

	mu     sync.Mutex
	queues map[string][]func() // pending work by key ("task:ID", "step:ID")
	// admitting holds the depth of the admission queued for a step and
	// not started yet (see freed).
	admitting map[string]int
	running   sync.WaitGroup
	closed    bool
	// onIdle, for tests, is called whenever a key's queue drains.
	onIdle func()
}

// New returns an engine reacting to cfg.Events, whose automations run
// under ctx: once it ends, the engine takes no more work, and what runs
// or is queued is cancelled (its store calls fail at once). Run starts
// its auto-archive sweeps.
func New(ctx context.Context, cfg Config) *Engine {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Clock == nil {
		cfg.Clock = time.Now
	}
	if cfg.SweepInterval <= 0 {
		cfg.SweepInterval = time.Minute
	}
	if cfg.Once == nil {
		cfg.Once = func(_ context.Context, _ string, sweep func()) { sweep() }
	}
	e := &Engine{ctx: ctx, store: cfg.Store, svc: cfg.Service, log: cfg.Logger, clock: cfg.Clock, every: cfg.SweepInterval,
		once: cfg.Once, queues: map[string][]func(){}, admitting: map[string]int{}}
	if cfg.Events != nil {
		cfg.Events.React(e.react)
	}
	return e
}

// react queues the engine's reaction to a domain event.
func (e *Engine) react(ev kanban.DomainEvent) {
	switch ev := ev.(type) {
	case kanban.TaskCreated:
		e.created(ev.Task)
	case kanban.TaskMoved:
		e.moved(ev.Task.ID, ev.FromStepID, ev.Task.WorkflowStepID, cause{})
		e.freed(ev.FromStepID, 0)
	case kanban.StepFreed:
		e.freed(ev.StepID, 0)
	case kanban.TurnEvent:
		e.turn(ev)
	case kanban.TaskEnded:
		e.ended(ev.Task)
	case kanban.PullRequestCommented:
		e.commented(ev.TaskID, "")
	case kanban.TaskCommented:
		e.commented(ev.Comment.TaskID, "Comment by "+ev.Comment.Author+":\n\n"+ev.Comment.Body)
	case kanban.AgentFailed:
		e.failed(ev.TaskID)
	case kanban.ApprovalResolved:
		e.resolved(ev)
	case kanban.PullRequestMerged:
		e.merged(ev.TaskID)
	case kanban.BudgetAlert:
		e.budgetAlert(ev)
	}
}

// do queues fn behind the work already pending for key and runs each
// key's work in order on its own goroutine. Past maxPending the work is
// dropped and logged (false): a storm cannot grow memory without bound.
// Once the engine is closed or its context ended, nothing is queued.
func (e *Engine) do(key string, fn func()) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed || e.ctx.Err() != nil {
		return false
	}
	q, busy := e.queues[key]
	if len(q) >= maxPending {
		e.log.Error("workflow engine: too many pending events; one was dropped", "key", key)
		return false
	}
	e.queues[key] = append(q, fn)
	if !busy {
		e.running.Add(1)
		go e.drain(key)
	}
	return true
}

func (e *Engine) drain(key string) {
	defer e.running.Done()
	for {
		e.mu.Lock()
		q := e.queues[key]
		if len(q) == 0 {
			delete(e.queues, key)
			idle := e.onIdle
			e.mu.Unlock()
			if idle != nil {
				idle()
			}
			return
		}
		fn := q[0]
		e.queues[key] = q[1:]
		e.mu.Unlock()
		e.safely(key, fn)
	}
}

// safely runs fn, turning a panic into a logged error.
func (e *Engine) safely(key string, fn func()) {
	defer func() {
		if p := recover(); p != nil {
			e.log.Error("workflow engine: automation panicked", "key", key, "panic", fmt.Sprint(p))
		}
	}()
	fn()
}

// Busy reports whether any work is pending or running.
func (e *Engine) Busy() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return len(e.queues) > 0
}

// Run sweeps for tasks to auto-archive and for heartbeats due every
// SweepInterval until ctx ends, then waits for pending work (bounded by ctx of the caller's shutdown).
func (e *Engine) Run(ctx context.Context) {
	t := time.NewTicker(e.every)
	defer t.Stop()
	sweep := func() {
		e.once(ctx, "auto-archive", func() { e.Sweep(ctx) })
		e.once(ctx, "heartbeats", func() { e.Heartbeats(ctx) })
	}
	sweep()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			sweep()
		}
	}
}

// Close stops taking work and waits (bounded by ctx) for what runs.
func (e *Engine) Close(ctx context.Context) {
	e.mu.Lock()
	e.closed = true
	e.mu.Unlock()
	done := make(chan struct{})
	go func() { e.running.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
	}
}

func taskKey(id string) string { return "task:" + id }
func stepKey(id string) string { return "step:" + id }
