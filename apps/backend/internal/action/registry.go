package action

import (
	"context"
	"encoding/json"
	"log/slog"
	"slices"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
	"github.com/kandev/kandev/apps/backend/internal/redact"
)

// Registry maps action names to their contracts and handlers.
type Registry struct {
	actions map[kanban.Action]*registered
	// sessionOf loads a session: its current mode and capabilities decide
	// what it may call (mode switches take effect on the next call).
	sessionOf func(ctx context.Context, sessionID string) (*kanban.Session, error)
	// modeActions, when set, narrows a session to the actions of its
	// mode's tools (see Deps.ModeActions).
	modeActions func(mode kanban.Mode, caps []string) map[kanban.Action]bool
	// derivedCaps returns a session's capabilities with the derived ones
	// (Service.sessionCaps), asked only when its stored ones refuse.
	derivedCaps func(ctx context.Context, sess *kanban.Session) []string
	// observe, when set, is told of every call (Deps.Observe).
	observe func(action string, caller Kind, err error, d time.Duration)
	// tracer makes each call's "action" span (Deps.Tracer; nil: none).
	tracer trace.Tracer
	// audit appends the entries of Writes actions (audit.go); redact
	// redacts their summaries (Deps.Redactor).
	audit  kanban.AuditService
	redact func() *redact.Redactor
	log    *slog.Logger
	// limits spends each call's share of its caller's rate (Deps.Limits).
	limits Limits
}

// Limits bounds how fast each caller may call and write (package
// ratelimit's Limiter): Take spends one call of key (and one write with
// write), or answers how long to wait and which rate ran out.
type Limits interface {
	Take(key string, write bool) (wait time.Duration, kind string, ok bool)
}

// registered is one action of a registry: its contract and its handler
// (which decodes a payload the contract has checked).
type registered struct {
	c   *Contract
	run handler
}

// Lookup returns the named action's contract.
func (r *Registry) Lookup(name kanban.Action) (*Contract, bool) {
	a, ok := r.actions[name]
	if !ok {
		return nil, false
	}
	return a.c, true
}

// Names lists every action name, sorted.
func (r *Registry) Names() []kanban.Action {
	names := make([]kanban.Action, 0, len(r.actions))
	for n := range r.actions {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// Dispatch authorizes p for the named action, checks the payload against
// its contract, decodes it and runs the handler. Errors are *kanban.Error
// for anything the caller can act on: UNKNOWN_ACTION, UNAUTHORIZED,
// FORBIDDEN, VALIDATION_ERROR (the contract's refusal) and the handler's.
func (r *Registry) Dispatch(ctx context.Context, p Principal, name kanban.Action, raw json.RawMessage) (any, error) {
	return r.observed(ctx, p, nil, name, raw, false)
}

// DispatchSession is Dispatch for a session principal whose session the
// caller has just loaded (sess.ID == p.SessionID, e.g. to re-check its
// token): sess's mode and capabilities authorize the call, and the
// session is not loaded a second time.
func (r *Registry) DispatchSession(ctx context.Context, p Principal, sess *kanban.Session, name kanban.Action, raw json.RawMessage) (any, error) {
	if sess == nil || p.Kind != Session || sess.ID != p.SessionID {
		return nil, kanban.Errorf(kanban.CodeUnauthorized, "not authenticated")
	}
	return r.observed(ctx, p, sess, name, raw, false)
}

// observed is dispatch, timed, traced and told to observe: under the
// action's name when it is one, else as "unknown" (a caller's string is
// never a label nor a span attribute). The span carries the action, the
// caller's kind and the error code; never the payload.
func (r *Registry) observed(ctx context.Context, p Principal, sess *kanban.Session, name kanban.Action, raw json.RawMessage, checked bool) (any, error) {
	label := "unknown"
	if _, ok := r.actions[name]; ok {
		label = string(name)
	}
	var span trace.Span
	if r.tracer != nil { // nil with tracing off: not even a no-op span's allocations
		ctx, span = r.tracer.Start(ctx, "action "+label, trace.WithAttributes(
			attribute.String("kandev.action", label), attribute.String("kandev.caller", p.Kind.String())))
		defer span.End()
	}
	start := time.Now()
	v, err := r.dispatch(ctx, p, sess, name, raw, checked)
	if err != nil && span != nil {
		code := string(kanban.ErrorCode(err))
		span.SetAttributes(attribute.String("kandev.error_code", code))
		span.SetStatus(codes.Error, code)
	}
	if r.observe != nil {
		r.observe(label, p.Kind, err, time.Since(start))
	}
	return v, err
}

// dispatch runs one call: authorize, check the contract (unless the
// payload is Checked), decode, run.
func (r *Registry) dispatch(ctx context.Context, p Principal, sess *kanban.Session, name kanban.Action, raw json.RawMessage, checked bool) (any, error) {
	a, ok := r.actions[name]
	if !ok {
		return nil, kanban.Errorf(kanban.CodeUnknownAction, "unknown action")
	}
	if r.limits != nil {
		// Before anything else the call would do: a refused call costs
		// no read and changes nothing.
		if wait, kind, ok := r.limits.Take(p.Actor(), a.c.Writes()); !ok {
			return nil, kanban.RateLimited(kind, wait)
		}
	}
	mode, err := r.authorize(ctx, a.c, p, sess)
	if err != nil {
		return nil, err
	}
	p.Mode = mode
	if !checked {
		if raw, err = a.c.Check(raw); err != nil {
			return nil, err
		}
	}
	if a.c.Writes() && r.audit != nil {
		return r.audited(ctx, a, p, raw)
	}
	return a.run(ctx, p, raw)
}

// authorize checks that p may run c; a session principal's session is
// sess, or loaded when sess is nil. It returns the session's current mode
// (empty for the operator).
func (r *Registry) authorize(ctx context.Context, c *Contract, p Principal, sess *kanban.Session) (kanban.Mode, error) {
	switch p.Kind {
	case Operator:
		if c.allow&AllowOperator != 0 {
			return "", nil
		}
		return "", kanban.Errorf(kanban.CodeForbidden, "action %s is only available to agent sessions", c.name)
	case Session:
		if c.allow&(AllowSession|AllowConfigSession) == 0 {
			return "", kanban.Errorf(kanban.CodeForbidden, "action %s is not available to this session", c.name)
		}
		if sess == nil {
			var err error
			if sess, err = r.sessionOf(ctx, p.SessionID); err != nil {
				return "", err
			}
		}
		if r.modeActions != nil && !r.modeAllows(ctx, sess, c.name) {
			return "", kanban.Errorf(kanban.CodeForbidden, "action %s is not available in this session's mode (%s)", c.name, sess.MCPMode)
		}
		if c.allow&AllowSession != 0 || sess.MCPMode == kanban.ModeConfig {
			return sess.MCPMode, nil
		}
		return "", kanban.Errorf(kanban.CodeForbidden, "action %s is not available to this session", c.name)
	}
	return "", kanban.Errorf(kanban.CodeUnauthorized, "not authenticated")
}

// modeAllows reports whether a session's profile has the action: on its
// stored capabilities, else with its derived ones (a forge's tools).
func (r *Registry) modeAllows(ctx context.Context, sess *kanban.Session, name kanban.Action) bool {
	if r.modeActions(sess.MCPMode, sess.Capabilities)[name] {
		return true
	}
	return r.derivedCaps != nil && r.modeActions(sess.MCPMode, r.derivedCaps(ctx, sess))[name]
}
