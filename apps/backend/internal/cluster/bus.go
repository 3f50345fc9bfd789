// Package cluster lets several backends serve one board from one
// PostgreSQL database: events published on one backend reach the
// subscribers of every backend (Bus, over the store's event log and
// LISTEN/NOTIFY); what the rest of the backend tells the agent runtime
// (action.Agents) reaches the backend that runs the agent (Relay, as
// typed signals); backends renew leases, and a live backend takes over
// the sessions of one whose lease lapsed (Members); work that must run
// once at a time takes an advisory lock (Once).
//
// It depends on the domain (kanban), the action layer's interfaces and
// the store; nothing but the composition root (app) imports it.
package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
	"github.com/kandev/kandev/apps/backend/internal/store"
)

// Bounds of the bus.
const (
	// queueLen bounds the events waiting to be appended to the log; a
	// publisher waits at most enqueueWait for room, then the event stays
	// local (and is counted as dropped).
	queueLen    = 8192
	enqueueWait = time.Second
	// batchMax bounds the events of one append (one statement).
	batchMax = 256
	// readMax bounds the events read for one notification or catch-up.
	readMax = 1000
	// retention is how long events stay in the log; pruneEvery how often
	// each backend deletes older ones.
	retention  = 2 * time.Minute
	pruneEvery = 30 * time.Second
	// seenMax bounds the ids remembered to deliver each event once.
	seenMax = 4096
)

// Bus is an kanban.Publisher for a backend that shares its database: it
// publishes to this backend's subscribers at once, appends the event to
// the log for the other backends, and publishes their events here.
type Bus struct {
	st    *store.Store
	local kanban.Publisher
	id    string
	log   *slog.Logger
	queue chan store.Event

	mu       sync.RWMutex
	handlers map[string][]func(json.RawMessage)

	// tracer makes the publish and delivery spans (TraceWith; nil: none).
	tracer trace.Tracer

	dropped   atomic.Int64
	lag       func(time.Duration) // ObserveLag
	done      chan struct{}
	listening chan struct{} // closed once the first LISTEN is in place
}

var _ kanban.ContextPublisher = (*Bus)(nil)

// NewBus returns the bus of backend id; Run moves its events.
func NewBus(st *store.Store, local kanban.Publisher, id string, log *slog.Logger) *Bus {
	return &Bus{st: st, local: local, id: id, log: log, queue: make(chan store.Event, queueLen),
		handlers: map[string][]func(json.RawMessage){}, done: make(chan struct{}), listening: make(chan struct{})}
}

// ObserveLag has fn told, for each event of another backend delivered
// here, how long after its append it was delivered: on the two backends'
// clocks, so skew between them shows in it. Set it before Run.
func (b *Bus) ObserveLag(fn func(time.Duration)) { b.lag = fn }

// Publish delivers an event to this backend's subscribers of topic and
// queues it for the others.
func (b *Bus) Publish(topic, event string, payload any) {
	b.local.Publish(topic, event, payload)
	b.send(topic, event, payload, "")
}

// PublishContext is Publish from a call with context ctx: a "bus.publish"
// span of ctx's trace, whose traceparent travels with the event, so the
// backends that deliver it continue the trace.
func (b *Bus) PublishContext(ctx context.Context, topic, event string, payload any) {
	ctx, span := b.startPublish(ctx, event)
	defer endSpan(span)
	b.local.Publish(topic, event, payload)
	b.send(topic, event, payload, traceparent(ctx))
}

// Signal sends a message to the other backends only: their handlers of
// name (Handle) run with payload. Signals carry what the runtime of
// another backend must hear (an agent's prompt to deliver, a permission
// resolved).
func (b *Bus) Signal(name string, payload any) { b.send("", name, payload, "") }

// Handle registers fn for name: it runs, on the bus's listener goroutine,
// for every signal and every event named name that another backend sent.
// Register before Run.
func (b *Bus) Handle(name string, fn func(payload json.RawMessage)) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.handlers[name] = append(b.handlers[name], fn)
}

func (b *Bus) send(topic, event string, payload any, trace string) {
	raw, err := json.Marshal(payload)
	if err != nil {
		b.log.Error("cluster: encode event", "event", event, "err", err)
		return
	}
	e := store.Event{Topic: topic, Name: event, Payload: string(raw), Trace: trace}
	select {
	case b.queue <- e:
		return
	default:
	}
	t := time.NewTimer(enqueueWait)
	defer t.Stop()
	select {
	case b.queue <- e:
	case <-t.C:
		b.dropped.Add(1)
		b.log.Warn("cluster: event queue full; an event reached this backend's subscribers only", "event", event)
	}
}

// Dropped counts the events that never reached the other backends.
func (b *Bus) Dropped() int64 { return b.dropped.Load() }

// Run appends queued events to the log and delivers the other backends'
// events until ctx ends; then it appends what is still queued (bounded by
// a few seconds) and returns.
func (b *Bus) Run(ctx context.Context) {
	defer close(b.done)
	var wg sync.WaitGroup
	wg.Go(func() { b.listen(ctx) })
	wg.Go(func() { b.prune(ctx) })
	b.write(ctx)
	wg.Wait()
}

// Listening is closed once Run listens for the other backends' events:
// every event they publish from then on reaches this backend.
func (b *Bus) Listening() <-chan struct{} { return b.listening }

// Done is closed once Run has returned.
func (b *Bus) Done() <-chan struct{} { return b.done }

// write appends queued events in batches, in the order they were
// published, until ctx ends, then flushes the queue.
func (b *Bus) write(ctx context.Context) {
	batch := make([]store.Event, 0, batchMax)
	for {
		select {
		case e := <-b.queue:
			batch = append(batch[:0], e)
		case <-ctx.Done():
			b.flush(ctx)
			return
		}
		batch = b.drain(batch)
		b.append(ctx, batch)
	}
}

// drain adds queued events to batch, up to batchMax, without waiting.
func (b *Bus) drain(batch []store.Event) []store.Event {
	for len(batch) < batchMax {
		select {
		case e := <-b.queue:
			batch = append(batch, e)
		default:
			return batch
		}
	}
	return batch
}

// appendTries bounds the attempts to append one batch.
const appendTries = 3

// append writes batch, trying again briefly when the database fails. An
// append that started finishes even if ctx ends meanwhile (its events
// were published here already); the pause before the next attempt ends
// with ctx, and the batch is then given up like one that failed every
// attempt.
func (b *Bus) append(ctx context.Context, batch []store.Event) {
	var err error
	for attempt := range appendTries {
		if err = b.st.AppendEvents(context.WithoutCancel(ctx), b.id, batch); err == nil {
			return
		}
		if attempt == appendTries-1 || !sleep(ctx, time.Duration(50<<attempt)*time.Millisecond) {
			break
		}
	}
	b.dropped.Add(int64(len(batch)))
	b.log.Error("cluster: events reached this backend's subscribers only", "events", len(batch), "err", err)
}

// flush appends what is queued once ctx (Run's) ended, bounded by a few
// seconds of its own.
func (b *Bus) flush(ctx context.Context) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	for {
		batch := b.drain(make([]store.Event, 0, batchMax))
		if len(batch) == 0 || ctx.Err() != nil {
			return
		}
		if err := b.st.AppendEvents(ctx, b.id, batch); err != nil {
			b.log.Error("cluster: flush events", "err", err)
			return
		}
	}
}

// prune deletes old events every pruneEvery.
func (b *Bus) prune(ctx context.Context) {
	t := time.NewTicker(pruneEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if err := b.st.PruneEvents(ctx, time.Now().Add(-retention)); err != nil && !errors.Is(err, context.Canceled) {
				b.log.Warn("cluster: prune events", "err", err)
			}
		}
	}
}
