package logctx

import (
	"context"
	"log/slog"

	"github.com/kandev/kandev/apps/backend/internal/redact"
)

// Handler adds the ids a record's context carries (request_id,
// session_id) to it, unless the record names them already, and redacts
// its message and every string value (errors and other values by their
// text) with its redactor before passing it on.
type Handler struct {
	next slog.Handler
	red  *redact.Redactor
}

// New returns a Handler passing records to next, redacted by red (by
// shape only when nil).
func New(next slog.Handler, red *redact.Redactor) *Handler {
	if red == nil {
		red = redact.New()
	}
	return &Handler{next: next, red: red}
}

// Enabled reports whether next handles records at level.
func (h *Handler) Enabled(ctx context.Context, level slog.Level) bool {
	return h.next.Enabled(ctx, level)
}

// Handle passes a redacted copy of rec, with the context's ids, to next.
func (h *Handler) Handle(ctx context.Context, rec slog.Record) error {
	out := slog.NewRecord(rec.Time, rec.Level, h.red.String(rec.Message), rec.PC)
	has := map[string]bool{}
	rec.Attrs(func(a slog.Attr) bool {
		has[a.Key] = true
		out.AddAttrs(h.attr(a))
		return true
	})
	if id := RequestID(ctx); id != "" && !has[RequestKey] {
		out.AddAttrs(slog.String(RequestKey, id))
	}
	if id := SessionID(ctx); id != "" && !has[SessionKey] {
		out.AddAttrs(slog.String(SessionKey, id))
	}
	return h.next.Handle(ctx, out)
}

// WithAttrs returns a Handler whose next handler has attrs, redacted.
func (h *Handler) WithAttrs(attrs []slog.Attr) slog.Handler {
	red := make([]slog.Attr, len(attrs))
	for i, a := range attrs {
		red[i] = h.attr(a)
	}
	return &Handler{next: h.next.WithAttrs(red), red: h.red}
}

// WithGroup returns a Handler whose next handler opens group name.
func (h *Handler) WithGroup(name string) slog.Handler {
	return &Handler{next: h.next.WithGroup(name), red: h.red}
}

// attr returns a redacted: strings redacted, groups member by member, and
// any other value that is not a plain number, bool, time or duration by
// its redacted text (an error's message can hold a URL with a password).
func (h *Handler) attr(a slog.Attr) slog.Attr {
	v := a.Value.Resolve()
	switch v.Kind() {
	case slog.KindString:
		return slog.String(a.Key, h.red.String(v.String()))
	case slog.KindGroup:
		g := v.Group()
		out := make([]slog.Attr, len(g))
		for i, m := range g {
			out[i] = h.attr(m)
		}
		return slog.Attr{Key: a.Key, Value: slog.GroupValue(out...)}
	case slog.KindAny:
		return slog.String(a.Key, h.red.String(v.String()))
	default:
		return slog.Attr{Key: a.Key, Value: v}
	}
}
