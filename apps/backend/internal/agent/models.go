package agent

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"

	acp "github.com/coder/acp-go-sdk"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// modelPattern is what a profile's model must look like to reach an
// agent's launch flag or environment: no leading dash (never read as
// another flag), no spaces or control characters.
var modelPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._:/@+\[\]-]{0,127}$`)

// maxListedModels bounds the models an error names.
const maxListedModels = 12

// resolveType sets l's agent type, launch command and model from the
// runtime's types (never from a payload) and the profile's model.
func (m *Manager) resolveType(l *launch, model string) error {
	t, ok := m.types[l.agent]
	if !ok {
		return errors.New("no launch command is configured for agent type " + l.agent)
	}
	if model != "" && !modelPattern.MatchString(model) {
		return errors.New("the agent profile's model is not a valid model name (letters, digits and ._:/@+-[] only, not starting with a dash)")
	}
	l.typ, l.model = t, model
	l.command = Command{Path: t.Command.Path, Args: t.launchArgs(model)}
	return nil
}

// modelChoice is the model selection an agent's ACP session offers:
// the session/new "models" state, or a select config option of the
// "model" category.
type modelChoice struct {
	ids      []string
	names    []string
	current  string
	configID acp.SessionConfigId // set when offered as a config option
}

func offeredModels(st *acp.SessionModelState, opts []acp.SessionConfigOption) *modelChoice {
	if st != nil && len(st.AvailableModels) > 0 {
		c := &modelChoice{current: string(st.CurrentModelId)}
		for _, mi := range st.AvailableModels {
			c.ids, c.names = append(c.ids, string(mi.ModelId)), append(c.names, mi.Name)
		}
		return c
	}
	for _, o := range opts {
		sel := o.Select
		if sel == nil || sel.Category == nil || *sel.Category != acp.SessionConfigOptionCategoryModel {
			continue
		}
		c := &modelChoice{current: string(sel.CurrentValue), configID: sel.Id}
		var flat []acp.SessionConfigSelectOption
		if sel.Options.Ungrouped != nil {
			flat = *sel.Options.Ungrouped
		}
		if sel.Options.Grouped != nil {
			for _, g := range *sel.Options.Grouped {
				flat = append(flat, g.Options...)
			}
		}
		for _, v := range flat {
			c.ids, c.names = append(c.ids, string(v.Value)), append(c.names, v.Name)
		}
		return c
	}
	return nil
}

// list names the offered models for an error (at most maxListedModels).
func (c *modelChoice) list() string {
	ids := c.ids
	if len(ids) > maxListedModels {
		ids = append(slices.Clone(ids[:maxListedModels]), "…")
	}
	for i := range ids {
		ids[i] = kanban.Clip(ids[i], 100)
	}
	return strings.Join(ids, ", ")
}

// selectModel records what the agent's session offers and applies the
// profile's model: ACP model selection when the agent offers one (a model
// it does not offer fails the launch), else the type's launch flag or
// variable, set at launch; an agent with neither cannot honour a model,
// which fails the launch too.
func (r *run) selectModel(ctx context.Context, l *launch, sid acp.SessionId, st *acp.SessionModelState,
	opts []acp.SessionConfigOption, modes *acp.SessionModeState) error {
	choice := offeredModels(st, opts)
	r.m.detect.observe(ctx, l.agent, choice, modes)
	if l.model == "" {
		return nil
	}
	if choice == nil {
		if len(l.typ.ModelFlag) > 0 || l.typ.ModelVar != "" {
			r.rec.note("status", "Model set at launch ("+l.typ.modelVia()+"): the agent offers no ACP model selection.")
			return nil
		}
		return fmt.Errorf("agent type %s offers no model selection, so the profile's model cannot be honoured: clear it to use the agent's default", l.agent)
	}
	if !slices.Contains(choice.ids, l.model) {
		return fmt.Errorf("the agent does not offer the profile's model; it offers: %s", l.redact.String(choice.list()))
	}
	if choice.current == l.model {
		return nil
	}
	var err error
	if choice.configID != "" {
		_, err = l.conn.SetSessionConfigOption(ctx, acp.SetSessionConfigOptionRequest{ValueId: &acp.SetSessionConfigOptionValueId{
			SessionId: sid, ConfigId: choice.configID, Value: acp.SessionConfigValueId(l.model)}})
	} else {
		_, err = l.conn.UnstableSetSessionModel(ctx, acp.UnstableSetSessionModelRequest{SessionId: sid, ModelId: acp.UnstableModelId(l.model)})
	}
	if err != nil {
		return r.startError("session/set_model", ctx, err, l)
	}
	r.rec.note("status", "Model "+l.model+" selected (ACP).")
	return nil
}

// modelVia says how the type is told its model at launch.
func (t Type) modelVia() string {
	var via []string
	if len(t.ModelFlag) > 0 {
		via = append(via, "flag "+t.ModelFlag[0])
	}
	if t.ModelVar != "" {
		via = append(via, "variable "+t.ModelVar)
	}
	return strings.Join(via, ", ")
}
