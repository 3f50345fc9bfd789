package app

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/kandev/kandev/apps/backend/internal/action"
	"github.com/kandev/kandev/apps/backend/internal/kanban"
	"github.com/kandev/kandev/apps/backend/internal/mcp/argcheck"
	"github.com/kandev/kandev/apps/backend/internal/mcp/catalog"
	"github.com/kandev/kandev/apps/backend/internal/mcp/toolserver"
)

// setContracts gives every action its payload contract (see contracts).
func setContracts(reg *action.Registry, compiled *toolserver.Compiled) error {
	all, err := contracts(reg, compiled)
	if err != nil {
		return err
	}
	for name, c := range all {
		reg.SetContract(name, c.check, c.toolSchema)
	}
	return nil
}

// actionContract is an action's payload check; toolSchema when it is the
// input schema of the tool that forwards to the action unchanged (or one
// its forwarding tools' schemas narrow), which the in-process path has
// already run.
type actionContract struct {
	check      action.Contract
	toolSchema bool
}

// contracts builds every registered action's payload contract, so a
// WebSocket, CLI or MCP caller is checked by the same compiled validator,
// before the handler and with the same refusal text: the input schema of
// the one tool that forwards its arguments to the action unchanged, else
// the catalog's declared payload schema. An action with neither, or with
// both, is a declaration error: the backend does not start.
func contracts(reg *action.Registry, compiled *toolserver.Compiled) (map[kanban.Action]actionContract, error) {
	tools := contractTools(reg, compiled.Catalog())
	out := map[kanban.Action]actionContract{}
	for _, name := range reg.Names() {
		tool, byTool := tools[name]
		declared := compiled.HasPayloadContract(name)
		switch {
		case byTool && declared:
			return nil, fmt.Errorf("action %s: both tool %s and a declared payload contract", name, tool.Name)
		case byTool:
			out[name] = actionContract{check: func(raw json.RawMessage) (json.RawMessage, error) {
				checked, err := compiled.CheckPayload(tool.Name, raw)
				return checked, refusal(err)
			}, toolSchema: true}
		case declared:
			out[name] = actionContract{check: payloadContract(compiled, name), toolSchema: coveredByTools(compiled.Catalog(), name)}
		default:
			return nil, fmt.Errorf("action %s has no payload contract", name)
		}
	}
	return out, nil
}

// payloadContract is the Contract of an action's declared payload schema.
func payloadContract(compiled *toolserver.Compiled, name kanban.Action) action.Contract {
	return func(raw json.RawMessage) (json.RawMessage, error) {
		out, err := compiled.CheckActionPayload(name, raw)
		return out, refusal(err)
	}
}

// contractTools maps each action to the tool whose input schema is its
// payload contract: the one tool that targets the action, forwarding its
// arguments unchanged, with exactly the payload's fields as properties.
// The others have a declared payload contract (catalog/payloads.go): those
// a tool adapts (its Run builds the payload), those wider than their tool
// (the board's operator-only filters) and those no tool targets.
func contractTools(reg *action.Registry, cat *catalog.Catalog) map[kanban.Action]*catalog.Tool {
	byAction := map[kanban.Action][]*catalog.Tool{}
	for _, t := range cat.All() {
		byAction[t.Action] = append(byAction[t.Action], t)
	}
	out := map[kanban.Action]*catalog.Tool{}
	for name, tools := range byAction {
		a, ok := reg.Lookup(name)
		if !ok || len(tools) != 1 || !tools[0].Forwards() || !slices.Equal(a.Fields(), tools[0].Properties()) {
			continue
		}
		out[name] = tools[0]
	}
	return out
}

// refusal is a contract's VALIDATION_ERROR: the tool error's text, and the
// top-level field of the first refused path (so a form can show the error
// next to its field).
func refusal(err error) error {
	if err == nil {
		return nil
	}
	ke := kanban.Errorf(kanban.CodeValidation, "%s", err.Error())
	var p *argcheck.Problems
	if errors.As(err, &p) {
		first := ""
		for _, pr := range p.List {
			if f, _, _ := strings.Cut(strings.TrimPrefix(pr.Path, "/"), "/"); f != "" && (first == "" || f < first) {
				first = f
			}
		}
		ke.Field = first
	}
	return ke
}

// coveredByTools reports whether every tool that targets action a forwards
// its arguments unchanged and has an input schema that is a narrowing of
// the action's declared payload contract — each of its properties the
// contract's very schema, the contract's required fields among its own,
// nothing else constrained — so arguments the wrapper has just checked
// against the tool's schema also satisfy the contract, and the in-process
// path need not check them again (e.g. list_tasks_kandev and task.list,
// which also takes the board's workspace_id and parent_id). A tool that
// builds its own payload is never covered: that payload is checked.
func coveredByTools(cat *catalog.Catalog, a kanban.Action) bool {
	payload, ok := cat.Payload(a)
	if !ok {
		return false
	}
	covered := false
	for _, t := range cat.All() {
		if t.Action != a {
			continue
		}
		if !t.Forwards() || !narrows(t.InputSchema(), payload) {
			return false
		}
		covered = true
	}
	return covered
}

// narrows reports whether object schema tool accepts only values object
// schema payload accepts (by structure: shared property schemas equal).
func narrows(tool, payload catalog.S) bool {
	for k := range payload {
		switch k {
		case "type", "properties", "additionalProperties", "required", "description":
		default:
			return false // a keyword whose effect this check does not follow
		}
	}
	if payload["type"] != "object" || payload["additionalProperties"] != false || tool["additionalProperties"] != false {
		return false
	}
	pp, _ := payload["properties"].(catalog.P)
	tp, _ := tool["properties"].(catalog.P)
	for n, ts := range tp {
		if ps, ok := pp[n]; !ok || !reflect.DeepEqual(ps, ts) {
			return false
		}
	}
	preq, _ := payload["required"].([]string)
	treq, _ := tool["required"].([]string)
	for _, r := range preq {
		if !slices.Contains(treq, r) {
			return false
		}
	}
	return true
}
