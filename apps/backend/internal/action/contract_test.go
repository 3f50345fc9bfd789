package action

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
	"github.com/kandev/kandev/apps/backend/internal/schema"
)

// TestContractsEnforcedThroughRegistry: every registered action's contract
// is enforced when the action is called straight through the registry, no
// transport in front — by Dispatch and by the in-process Caller: a payload
// its schema refuses never reaches the handler and is refused with the
// contract's own VALIDATION_ERROR, while a payload it accepts does reach
// it (so the test can tell an enforced contract from a handler never
// called). Only a Checked payload skips the check.
func TestContractsEnforcedThroughRegistry(t *testing.T) {
	h := newHarness(t)
	config := h.session(h.task("Config"), kanban.ModeConfig)
	ran := map[kanban.Action]int{}
	for name, a := range h.reg.actions {
		a.run = func(context.Context, Principal, json.RawMessage) (any, error) {
			ran[name]++
			return nil, nil
		}
	}
	ctx := context.Background()
	accepted := 0
	for _, name := range h.reg.Names() {
		c, _ := h.reg.Lookup(name)
		p := operator
		if c.Allow()&AllowOperator == 0 {
			p = config // admitted by AllowSession and AllowConfigSession alike
		}
		caller := Caller{Registry: h.reg, Principal: p}
		for _, raw := range refusedPayloads(c.Schema()) {
			_, want := c.Check(json.RawMessage(raw))
			if kanban.ErrorCode(want) != kanban.CodeValidation {
				t.Errorf("%s %s: the contract gives %v, want a refusal (the test builds a payload it accepts)", name, raw, want)
				continue
			}
			_, err := h.reg.Dispatch(ctx, p, name, json.RawMessage(raw))
			refusedAlike(t, "Dispatch", name, raw, err, want)
			refusedAlike(t, "Caller", name, raw, caller.Call(ctx, name, json.RawMessage(raw), nil), want)
		}
		if n := ran[name]; n != 0 {
			t.Errorf("%s: the handler ran %d times on payloads its contract refuses", name, n)
		}
		if raw, ok := acceptedPayload(c); ok {
			accepted++
			if _, err := h.reg.Dispatch(ctx, p, name, raw); err != nil || ran[name] != 1 {
				t.Errorf("%s %s: got %v and %d handler runs, want the handler to run once", name, raw, err, ran[name])
			}
		}
	}
	if n := len(h.reg.Names()); accepted < n/2 {
		t.Errorf("accepted payloads built for %d of %d actions: too few to tell the handlers are reachable", accepted, n)
	}
	const name = kanban.ActionTaskCreate
	tooLong := `{"title":"` + strings.Repeat("x", kanban.MaxTitleLen+1) + `"}`
	caller := Caller{Registry: h.reg, Principal: operator}
	before := ran[name]
	if err := caller.Call(ctx, name, Checked(tooLong), nil); err != nil || ran[name] != before+1 {
		t.Errorf("Checked payload: got %v and %d handler runs, want the handler to run without a second check", err, ran[name]-before)
	}
}

// refusedAlike checks that err is the contract's refusal want.
func refusedAlike(t *testing.T, path string, name kanban.Action, raw string, err, want error) {
	t.Helper()
	ke, ok := kanban.AsError(err)
	wk, _ := kanban.AsError(want)
	if !ok || ke.Code != kanban.CodeValidation || ke.Message != wk.Message || ke.Field != wk.Field {
		t.Errorf("%s %s %s: got %v, want the contract's refusal %v", path, name, raw, err, want)
	}
}

// refusedPayloads are payloads schema s refuses, built from s: not an
// object, an unknown field at the root, each top-level property with a
// value of another JSON type and, when s requires fields, the empty object.
func refusedPayloads(s schema.S) []string {
	out := []string{`[]`, `"text"`, `{"zz_not_declared":1}`}
	props, required := topLevel(s)
	for _, name := range slices.Sorted(mapsKeys(props)) {
		if v := wrongValue(props[name]); v != "" {
			out = append(out, fmt.Sprintf(`{%q:%s}`, name, v))
		}
	}
	if required {
		out = append(out, `{}`)
	}
	return out
}

// topLevel returns s's top-level properties (of every oneOf branch) and
// whether every branch requires some.
func topLevel(s schema.S) (schema.P, bool) {
	branches := []schema.S{s}
	if bs, ok := s["oneOf"].([]any); ok {
		branches = branches[:0]
		for _, b := range bs {
			branches = append(branches, b.(schema.S))
		}
	}
	props, required := schema.P{}, true
	for _, b := range branches {
		ps, _ := b["properties"].(schema.P)
		for n, p := range ps {
			props[n] = p
		}
		req, _ := b["required"].([]string)
		required = required && len(req) > 0
	}
	return props, required
}

// wrongValue is a JSON value of a type property schema p does not admit
// ("" when p admits several types).
func wrongValue(p schema.S) string {
	switch p["type"] {
	case "string":
		return `12345`
	case "integer", "number", "boolean":
		return `"text"`
	case "array":
		return `{}`
	case "object":
		return `[]`
	}
	return ""
}

// acceptedPayload builds a payload c accepts from its schema (its
// required fields, each with a value its rules admit), when it can.
func acceptedPayload(c *Contract) (json.RawMessage, bool) {
	v, ok := sample(c.Schema())
	if !ok {
		return nil, false
	}
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, false
	}
	if _, err := c.Check(raw); err != nil {
		return nil, false
	}
	return raw, true
}

// sample is a value schema s admits, built from its type and rules.
func sample(s schema.S) (any, bool) {
	if bs, ok := s["oneOf"].([]any); ok {
		for _, b := range bs {
			if v, ok := sample(b.(schema.S)); ok {
				return v, true
			}
		}
		return nil, false
	}
	if v, ok := s["const"]; ok {
		return v, true
	}
	if e, ok := s["enum"].([]string); ok && len(e) > 0 {
		return e[0], true
	}
	switch s["type"] {
	case "string":
		if pat, ok := s["pattern"].(string); ok && pat != kanban.IDPattern {
			return nil, false
		}
		n, _ := s["minLength"].(int)
		return strings.Repeat("a", max(n, 1)), true
	case "integer", "number":
		n, _ := s["minimum"].(int)
		return n, true
	case "boolean":
		return false, true
	case "array":
		n, _ := s["minItems"].(int)
		items := make([]any, 0, n)
		for range n {
			v, ok := sample(s["items"].(schema.S))
			if !ok {
				return nil, false
			}
			items = append(items, v)
		}
		return items, true
	case "object":
		out := map[string]any{}
		props, _ := s["properties"].(schema.P)
		req, _ := s["required"].([]string)
		for _, r := range req {
			v, ok := sample(props[r])
			if !ok {
				return nil, false
			}
			out[r] = v
		}
		return out, true
	}
	return nil, false
}

func mapsKeys(p schema.P) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range p {
			if !yield(k) {
				return
			}
		}
	}
}
