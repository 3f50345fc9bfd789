package app

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"

	"github.com/kandev/kandev/apps/backend/internal/action"
	"github.com/kandev/kandev/apps/backend/internal/kanban"
	"github.com/kandev/kandev/apps/backend/internal/mcp/argcheck"
	"github.com/kandev/kandev/apps/backend/internal/mcp/catalog"
	mcpsrv "github.com/kandev/kandev/apps/backend/internal/mcp/server"
)

// setContracts gives each action whose payload is exactly one tool's
// arguments that tool's compiled check as its payload contract, so a
// WebSocket or CLI caller is checked by the same validator, before the
// handler and with the same refusal text, as an MCP caller.
func setContracts(reg *action.Registry, compiled *mcpsrv.Compiled) {
	for name, tool := range contractTools(reg, compiled.Catalog()) {
		reg.SetContract(name, func(raw json.RawMessage) (json.RawMessage, error) {
			out, err := compiled.CheckPayload(tool.Name, raw)
			if err != nil {
				return nil, refusal(err)
			}
			return out, nil
		})
	}
}

// contractTools maps each action to the tool whose input schema is its
// payload contract: the one tool that targets the action, forwarding its
// arguments unchanged, with exactly the payload's fields as properties.
// The other actions keep the strict decoder: those a tool adapts (its Run
// builds the payload), those wider than their tool (the board's
// operator-only filters) and those no tool targets.
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
func refusal(err error) *kanban.Error {
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
