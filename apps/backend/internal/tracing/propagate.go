package tracing

import (
	"context"

	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// MaxTraceparent bounds a carried traceparent: version 00 is exactly 55
// bytes; longer values are dropped, never stored.
const MaxTraceparent = 55

var w3c = propagation.TraceContext{}

// Inject is the W3C traceparent of ctx's span ("" when ctx has no valid
// span, as with tracing off).
func Inject(ctx context.Context) string {
	if !trace.SpanContextFromContext(ctx).IsValid() {
		return ""
	}
	c := propagation.MapCarrier{}
	w3c.Inject(ctx, c)
	if tp := c.Get("traceparent"); len(tp) <= MaxTraceparent {
		return tp
	}
	return ""
}

// Extract is ctx with the remote span of traceparent as its parent; ctx
// unchanged when traceparent is empty or malformed.
func Extract(ctx context.Context, traceparent string) context.Context {
	if traceparent == "" || len(traceparent) > MaxTraceparent {
		return ctx
	}
	return w3c.Extract(ctx, propagation.MapCarrier{"traceparent": traceparent})
}

// HTTPCarrier reads and writes trace context in HTTP headers.
type HTTPCarrier = propagation.HeaderCarrier

// Propagator is the W3C trace context propagator (traceparent only; no
// baggage: it could carry what a client chose).
func Propagator() propagation.TextMapPropagator { return w3c }
