package app

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/kandev/kandev/apps/backend/internal/action"
	"github.com/kandev/kandev/apps/backend/internal/kanban"
	"github.com/kandev/kandev/apps/backend/internal/mcp/argcheck"
	"github.com/kandev/kandev/apps/backend/internal/mcp/catalog"
	mcpsrv "github.com/kandev/kandev/apps/backend/internal/mcp/server"
)

// setContracts gives every action its payload contract, so a WebSocket,
// CLI or MCP caller is checked by the same compiled validator, before the
// handler and with the same refusal text: the input schema of the one tool
// that forwards its arguments to the action unchanged, else the catalog's
// declared payload schema. An action with neither, or with both, is a
// declaration error: the backend does not start.
func setContracts(reg *action.Registry, compiled *mcpsrv.Compiled) error {
	tools := contractTools(reg, compiled.Catalog())
	for _, name := range reg.Names() {
		tool, byTool := tools[name]
		declared := compiled.HasPayloadContract(name)
		switch {
		case byTool && declared:
			return fmt.Errorf("action %s: both tool %s and a declared payload contract", name, tool.Name)
		case byTool:
			reg.SetContract(name, func(raw json.RawMessage) (json.RawMessage, error) {
				out, err := compiled.CheckPayload(tool.Name, raw)
				return out, refusal(err)
			}, true)
		case declared:
			reg.SetContract(name, payloadContract(compiled, name), false)
		default:
			return fmt.Errorf("action %s has no payload contract", name)
		}
	}
	return nil
}

// payloadContract is the Contract of an action's declared payload schema.
func payloadContract(compiled *mcpsrv.Compiled, name kanban.Action) action.Contract {
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
