package action

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// Action is one registered action.
type Action struct {
	Name  kanban.Action
	Allow Allow
	// Blocking actions may wait for a person (question.ask); clients give
	// them a longer timeout.
	Blocking bool
	// Payload is the Go type the payload decodes into.
	Payload  reflect.Type
	contract Contract
	// toolSchema: the contract is the input schema of the tool that
	// forwards its arguments here unchanged, so a payload the MCP wrapper
	// has just checked need not be checked again (DispatchChecked).
	toolSchema bool
	run        func(ctx context.Context, p Principal, raw json.RawMessage, checked bool) (any, error)
}

// Registry maps action names to actions.
type Registry struct {
	actions map[kanban.Action]*Action
	// sessionOf loads a session: its current mode and capabilities decide
	// what it may call (mode switches take effect on the next call).
	sessionOf func(ctx context.Context, sessionID string) (*kanban.Session, error)
	// modeActions, when set, narrows a session to the actions of its
	// mode's tools (see Deps.ModeActions).
	modeActions func(mode kanban.Mode, caps []string) map[kanban.Action]bool
}

// NewRegistry returns an empty registry. sessionOf resolves a session's
// current mode (mode switches take effect on the next call).
func NewRegistry(sessionOf func(ctx context.Context, sessionID string) (*kanban.Session, error)) *Registry {
	return &Registry{actions: map[kanban.Action]*Action{}, sessionOf: sessionOf}
}

// Contract checks a payload against its action's declared contract — the
// compiled input schema of the tool whose arguments the payload is, or the
// catalog's declared payload schema — and returns the payload to decode.
// Its errors are *kanban.Error with the validator's refusal text, so every
// transport refuses alike.
type Contract func(raw json.RawMessage) (json.RawMessage, error)

// Register adds an action whose payload decodes into In, checked first by
// the action's Contract (see SetContract). It panics on a duplicate name:
// names are written once, at start-up.
func Register[In, Out any](r *Registry, name kanban.Action, allow Allow, h func(ctx context.Context, p Principal, in In) (Out, error)) *Action {
	if _, dup := r.actions[name]; dup {
		panic(fmt.Sprintf("action %s registered twice", name))
	}
	a := &Action{Name: name, Allow: allow, Payload: reflect.TypeFor[In]()}
	a.run = func(ctx context.Context, p Principal, raw json.RawMessage, checked bool) (any, error) {
		var in In
		if err := a.decode(raw, checked, &in); err != nil {
			return nil, err
		}
		return h(ctx, p, in)
	}
	r.actions[name] = a
	return a
}

// SetContract makes c the payload check of the named action; toolSchema
// says c is the input schema of the tool that forwards its arguments to
// the action unchanged (see DispatchChecked). It panics on an
// unregistered name (contracts are set at start-up).
func (r *Registry) SetContract(name kanban.Action, c Contract, toolSchema bool) {
	a, ok := r.actions[name]
	if !ok {
		panic(fmt.Sprintf("contract for unregistered action %s", name))
	}
	a.contract, a.toolSchema = c, toolSchema
}

// HasContract reports whether the named action's payload is checked by a
// Contract.
func (r *Registry) HasContract(name kanban.Action) bool {
	a, ok := r.actions[name]
	return ok && a.contract != nil
}

// Fields lists the payload's JSON field names, sorted.
func (a *Action) Fields() []string { return fieldNames(a.Payload) }

// decode fills v from raw: through the contract (unless the caller has
// just run this very check: checked, for a tool schema's contract), then
// a plain decode. A registry built without contracts (the action
// package's own tests) decodes as encoding/json does; the backend refuses
// to start with an action that has none.
func (a *Action) decode(raw json.RawMessage, checked bool, v any) error {
	if a.contract != nil && (!checked || !a.toolSchema) {
		var err error
		if raw, err = a.contract(raw); err != nil {
			return err
		}
	}
	if len(bytes.TrimSpace(raw)) == 0 {
		raw = json.RawMessage("{}")
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return kanban.Errorf(kanban.CodeBadRequest, "payload does not match the action's shape")
	}
	return nil
}

// Lookup returns the named action.
func (r *Registry) Lookup(name kanban.Action) (*Action, bool) {
	a, ok := r.actions[name]
	return a, ok
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
// its contract, decodes it and runs the handler. Errors are *kanban.Error for anything the caller
// can act on.
func (r *Registry) Dispatch(ctx context.Context, p Principal, name kanban.Action, raw json.RawMessage) (any, error) {
	return r.dispatch(ctx, p, nil, name, raw, false)
}

// DispatchChecked is Dispatch for a forwarding tool's arguments that the
// MCP wrapper, in process, has just checked with the same compiled schema:
// a tool-schema contract does not run a second time. A declared payload
// contract (a payload a tool's Run built) still runs.
func (r *Registry) DispatchChecked(ctx context.Context, p Principal, name kanban.Action, raw json.RawMessage) (any, error) {
	return r.dispatch(ctx, p, nil, name, raw, true)
}

// DispatchSession is Dispatch for a session principal whose session the
// caller has just loaded (sess.ID == p.SessionID, e.g. to re-check its
// token): sess's mode and capabilities authorize the call, and the
// session is not loaded a second time.
func (r *Registry) DispatchSession(ctx context.Context, p Principal, sess *kanban.Session, name kanban.Action, raw json.RawMessage) (any, error) {
	if sess == nil || p.Kind != Session || sess.ID != p.SessionID {
		return nil, kanban.Errorf(kanban.CodeUnauthorized, "not authenticated")
	}
	return r.dispatch(ctx, p, sess, name, raw, false)
}

func (r *Registry) dispatch(ctx context.Context, p Principal, sess *kanban.Session, name kanban.Action, raw json.RawMessage, checked bool) (any, error) {
	a, ok := r.actions[name]
	if !ok {
		return nil, kanban.Errorf(kanban.CodeUnknownAction, "unknown action")
	}
	mode, err := r.authorize(ctx, a, p, sess)
	if err != nil {
		return nil, err
	}
	p.Mode = mode
	return a.run(ctx, p, raw, checked)
}

// authorize checks that p may run a; a session principal's session is
// sess, or loaded when sess is nil. It returns the session's current mode
// (empty for the operator).
func (r *Registry) authorize(ctx context.Context, a *Action, p Principal, sess *kanban.Session) (kanban.Mode, error) {
	switch p.Kind {
	case Operator:
		if a.Allow&AllowOperator != 0 {
			return "", nil
		}
		return "", kanban.Errorf(kanban.CodeForbidden, "action %s is only available to agent sessions", a.Name)
	case Session:
		if a.Allow&(AllowSession|AllowConfigSession) == 0 {
			return "", kanban.Errorf(kanban.CodeForbidden, "action %s is not available to this session", a.Name)
		}
		if sess == nil {
			var err error
			if sess, err = r.sessionOf(ctx, p.SessionID); err != nil {
				return "", err
			}
		}
		if r.modeActions != nil && !r.modeActions(sess.MCPMode, sess.Capabilities)[a.Name] {
			return "", kanban.Errorf(kanban.CodeForbidden, "action %s is not available in this session's mode (%s)", a.Name, sess.MCPMode)
		}
		if a.Allow&AllowSession != 0 || sess.MCPMode == kanban.ModeConfig {
			return sess.MCPMode, nil
		}
		return "", kanban.Errorf(kanban.CodeForbidden, "action %s is not available to this session", a.Name)
	}
	return "", kanban.Errorf(kanban.CodeUnauthorized, "not authenticated")
}
