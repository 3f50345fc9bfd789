package toolserver

import (
	"context"
	"log/slog"
	"net/http"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
)

// hooks are what every wrapped tool call reports to: the log, the
// metrics' observer and the tracer.
type hooks struct {
	log     *slog.Logger
	observe Observer
	tracer  trace.Tracer
}

func (s *Server) hooks() hooks { return hooks{log: s.log, observe: s.observe, tracer: s.tracer} }

// tracerOf is tp's tracer of the MCP server: nil when tp is nil or the
// no-op provider, so that tracing off costs nothing.
func tracerOf(tp trace.TracerProvider) trace.Tracer {
	if _, off := tp.(noop.TracerProvider); off || tp == nil {
		return nil
	}
	return tp.Tracer("kandev/mcp")
}

// startCall starts a tool call's span (nil with tracing off).
func (h hooks) startCall(ctx context.Context, label string) (context.Context, trace.Span) {
	if h.tracer == nil {
		return ctx, nil
	}
	return h.tracer.Start(ctx, "tool "+label, trace.WithAttributes(attribute.String("kandev.tool", label)))
}

// endSpan records a call's outcome (a word of the wrapper's closed set)
// and ends span (nil: nothing).
func endSpan(span trace.Span, outcome string) {
	if span == nil {
		return
	}
	span.SetAttributes(attribute.String("kandev.outcome", outcome))
	if outcome != "ok" {
		span.SetStatus(codes.Error, outcome)
	}
	span.End()
}

// w3c reads a caller's W3C traceparent (no baggage: it would be the
// caller's values).
var w3c = propagation.TraceContext{}

// traceHTTP makes each request to route a "gate" span — the request
// through the gate, preflight and the transport — continuing the
// caller's trace when it sent a traceparent. Its attributes are the
// method, the route (a constant, not the request's URL) and the status.
// A GET is a notification stream that lasts as long as its session, no
// call: it is not traced.
func (s *Server) traceHTTP(route string, next http.Handler) http.Handler {
	if s.tracer == nil {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			next.ServeHTTP(w, r)
			return
		}
		ctx := w3c.Extract(r.Context(), propagation.HeaderCarrier(r.Header))
		ctx, span := s.tracer.Start(ctx, "gate "+route, trace.WithSpanKind(trace.SpanKindServer),
			trace.WithAttributes(attribute.String("http.request.method", methodLabel(r.Method)), attribute.String("http.route", route)))
		defer span.End()
		sw := &statusWriter{ResponseWriter: w, status: http.StatusOK}
		next.ServeHTTP(sw, r.WithContext(ctx))
		span.SetAttributes(attribute.Int("http.response.status_code", sw.status))
		if sw.status >= 400 {
			span.SetStatus(codes.Error, http.StatusText(sw.status))
		}
	})
}

// methodLabel is r.Method when it is one of HTTP's, else "_OTHER" (a
// caller's string is never an attribute).
func methodLabel(m string) string {
	switch m {
	case http.MethodGet, http.MethodPost, http.MethodDelete, http.MethodHead, http.MethodOptions, http.MethodPut, http.MethodPatch:
		return m
	}
	return "_OTHER"
}

// statusWriter remembers the status written; it flushes and unwraps to
// the writer it wraps (streams and deadlines keep working).
type statusWriter struct {
	http.ResponseWriter
	status int
	wrote  bool
}

func (w *statusWriter) WriteHeader(code int) {
	if !w.wrote {
		w.status, w.wrote = code, true
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	w.wrote = true
	return w.ResponseWriter.Write(b)
}

func (w *statusWriter) Flush() {
	w.wrote = true
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
