package store

import (
	"context"
	"strings"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
)

// TraceWith has the store make spans through tp: one per write
// transaction ("store.tx") and one per query outside a transaction
// ("store.query"), with the engine and the statement's kind (SELECT,
// INSERT, ...), never its text or values. Set it before the store serves.
func (s *Store) TraceWith(tp trace.TracerProvider) {
	if _, off := tp.(noop.TracerProvider); off || tp == nil {
		return
	}
	s.tracer = tp.Tracer("kandev/store")
	s.stmts.tracer = s.tracer
}

// dbSystem is the db.system.name of an engine.
func dbSystem(pg bool) attribute.KeyValue {
	if pg {
		return attribute.String("db.system.name", "postgresql")
	}
	return attribute.String("db.system.name", "sqlite")
}

// startTx starts a write transaction's span (nil without a tracer: no
// cost when tracing is off).
func (s *Store) startTx(ctx context.Context) (context.Context, trace.Span) {
	if s.tracer == nil {
		return ctx, nil
	}
	return s.tracer.Start(ctx, "store.tx", trace.WithSpanKind(trace.SpanKindClient),
		trace.WithAttributes(dbSystem(s.eng == Postgres), attribute.String("db.operation.name", "transaction")))
}

// startQuery starts the span of one statement outside a transaction (nil
// without a tracer).
func (c *stmtCache) startQuery(ctx context.Context, query string) (context.Context, trace.Span) {
	if c.tracer == nil {
		return ctx, nil
	}
	return c.tracer.Start(ctx, "store.query", trace.WithSpanKind(trace.SpanKindClient),
		trace.WithAttributes(dbSystem(c.pg), attribute.String("db.operation.name", statementKind(query))))
}

// endSpan records err's presence (never its text: it may quote values)
// and ends span (nil: nothing).
func endSpan(span trace.Span, err error) {
	if span == nil {
		return
	}
	if err != nil {
		span.SetStatus(codes.Error, "error")
	}
	span.End()
}

// statementKinds are the kinds a statement's span may name.
var statementKinds = []string{"SELECT", "INSERT", "UPDATE", "DELETE", "WITH", "PRAGMA", "VACUUM"}

// statementKind is query's first keyword when it is one of
// statementKinds, else OTHER.
func statementKind(query string) string {
	q := strings.TrimLeft(query, " \t\r\n(")
	for _, k := range statementKinds {
		if len(q) >= len(k) && strings.EqualFold(q[:len(k)], k) {
			return k
		}
	}
	return "OTHER"
}

// Traced reports whether TraceWith gave the store a tracer.
func (s *Store) Traced() bool { return s.tracer != nil }
