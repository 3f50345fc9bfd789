package app

import (
	"context"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
	"github.com/kandev/kandev/apps/backend/internal/mcp/toolserver"
	"github.com/kandev/kandev/apps/backend/internal/tracing"
)

// TracesConfig is where a backend's spans go: off (no provider, no
// exporter, no goroutine) unless Endpoint or the standard
// OTEL_EXPORTER_OTLP_ENDPOINT / OTEL_EXPORTER_OTLP_TRACES_ENDPOINT is set.
type TracesConfig struct {
	// Endpoint is the OTLP/HTTP collector URL (--otlp-endpoint).
	Endpoint string
	// Exporter, when set, receives the spans instead of an OTLP exporter
	// (tests: the SDK's in-memory exporter), through the same batching.
	Exporter sdktrace.SpanExporter
	// Getenv reads the OTEL_* variables (os.Getenv when nil).
	Getenv func(string) string
}

// newTracing builds the backend's tracer provider (after the cluster's
// parts: the backend's id is its resource's service.instance.id), hands
// it to the store and the bus, makes a span of each agent turn, and
// pushes its shutdown: pushed before the servers, agents and bus, so it
// flushes after they stopped.
func (b *backend) newTracing() error {
	ctx := b.life.ctx
	tc := tracing.Config{Endpoint: b.cfg.Traces.Endpoint, BackendID: b.shared.id, Version: toolserver.Version, Getenv: b.cfg.Traces.Getenv}
	var err error
	if b.cfg.Traces.Exporter != nil {
		b.tracing, err = tracing.WithExporter(ctx, b.cfg.Traces.Exporter, tc)
	} else {
		b.tracing, err = tracing.New(ctx, tc)
	}
	if err != nil {
		return err
	}
	b.life.push("tracing", b.tracing.Shutdown)
	if !b.tracing.Enabled() {
		return nil
	}
	b.store.TraceWith(b.tracing.Provider)
	if b.shared.bus != nil {
		b.shared.bus.TraceWith(b.tracing.Provider)
	}
	tr := b.tracing.Provider.Tracer("kandev/agent")
	b.events.React(func(ev kanban.DomainEvent) {
		if t, ok := ev.(kanban.TurnEvent); ok && t.Ended {
			turnSpan(ctx, tr, t)
		}
	})
	return nil
}

// turnSpan records an ended agent turn as an "agent.turn" span from its
// start to now: the session, task and step ids and the stop reason (a
// word of ACP's closed set), never the prompt or the agent's output.
func turnSpan(ctx context.Context, tr trace.Tracer, t kanban.TurnEvent) {
	_, span := tr.Start(ctx, "agent.turn", trace.WithTimestamp(t.StartedAt), trace.WithAttributes(
		attribute.String("kandev.session_id", t.SessionID), attribute.String("kandev.task_id", t.TaskID),
		attribute.String("kandev.step_id", t.StepID), attribute.String("kandev.stop_reason", t.StopReason)))
	if t.StopReason == "error" {
		span.SetStatus(codes.Error, "error")
	}
	span.End(trace.WithTimestamp(time.Now()))
}
