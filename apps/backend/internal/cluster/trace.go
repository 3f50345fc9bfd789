package cluster

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/kandev/kandev/apps/backend/internal/store"
)

// w3c carries the trace context between backends as a W3C traceparent.
var w3c = propagation.TraceContext{}

// TraceWith has the bus make spans through tp: "bus.publish" for an event
// published with a context (PublishContext) and "bus.deliver" for each
// event of another backend, the child of the publisher's span. Their
// attributes are the event's name (a declared one), the backend ids and
// the event id; never the topic or payload. Call it before Run.
func (b *Bus) TraceWith(tp trace.TracerProvider) {
	if _, off := tp.(noop.TracerProvider); !off && tp != nil {
		b.tracer = tp.Tracer("kandev/cluster")
	}
}

// endSpan ends span (nil: tracing is off).
func endSpan(span trace.Span) {
	if span != nil {
		span.End()
	}
}

// startPublish starts the span of publishing event (nil with tracing off).
func (b *Bus) startPublish(ctx context.Context, event string) (context.Context, trace.Span) {
	if b.tracer == nil {
		return ctx, nil
	}
	return b.tracer.Start(ctx, "bus.publish", trace.WithSpanKind(trace.SpanKindProducer),
		trace.WithAttributes(attribute.String("kandev.event", event), attribute.String("kandev.backend", b.id)))
}

// startDeliver starts the span of delivering e: a child of the span that
// published it on its backend when e carries a valid traceparent, else
// a root span; nil with tracing off.
func (b *Bus) startDeliver(ctx context.Context, e store.Event) trace.Span {
	if b.tracer == nil {
		return nil
	}
	if e.Trace != "" && len(e.Trace) <= store.MaxTraceparent {
		ctx = w3c.Extract(ctx, propagation.MapCarrier{"traceparent": e.Trace})
	}
	_, span := b.tracer.Start(ctx, "bus.deliver", trace.WithSpanKind(trace.SpanKindConsumer),
		trace.WithAttributes(attribute.String("kandev.event", e.Name), attribute.String("kandev.origin", e.Origin),
			attribute.String("kandev.backend", b.id), attribute.Int64("kandev.event_id", e.ID)))
	return span
}

// traceparent is the W3C traceparent of ctx's span ("" without one).
func traceparent(ctx context.Context) string {
	if !trace.SpanContextFromContext(ctx).IsValid() {
		return ""
	}
	c := propagation.MapCarrier{}
	w3c.Inject(ctx, c)
	if tp := c.Get("traceparent"); len(tp) <= store.MaxTraceparent {
		return tp
	}
	return ""
}
