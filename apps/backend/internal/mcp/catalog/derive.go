package catalog

import (
	"fmt"

	"github.com/kandev/kandev/apps/backend/internal/action"
	"github.com/kandev/kandev/apps/backend/internal/kanban"
	"github.com/kandev/kandev/apps/backend/internal/schema"
)

// declErr is the first declaration error found while the groups were
// declared (package initialization); New returns it.
var declErr error

func failDecl(err error) {
	if declErr == nil {
		declErr = err
	}
}

// derive completes a tool from its action's contract (at declaration):
// a forwarding tool takes the contract narrowed by Drop and Require as its
// input, the contract's aliases, and — when it narrows nothing — the
// contract's Tool as its name; an adapting tool (its own Run) takes its
// declared Input or the contract without Drop.
func (t *Tool) derive() error {
	c := action.ContractOf(t.Action)
	if c == nil {
		return fmt.Errorf("tool %s: action %s is not declared", t.Name, t.Action)
	}
	if t.Run != nil {
		if t.Name == "" {
			return fmt.Errorf("a tool adapting %s declares no name", t.Action)
		}
		if t.Input == nil {
			t.Input = schema.Without(c.Schema(), t.Drop...)
		}
		return nil
	}
	if t.Input != nil {
		return fmt.Errorf("tool %s forwards to %s: its input is the action's contract (narrow it with Drop and Require)", t.Name, t.Action)
	}
	in, err := schema.Narrow(c.Schema(), t.Drop, t.Require)
	if err != nil {
		return fmt.Errorf("tool %s: %s's contract: %w", t.Name, t.Action, err)
	}
	own := len(t.Drop) == 0 && len(t.Require) == 0
	switch {
	case own && t.Name != "":
		return fmt.Errorf("tool %s serves %s unchanged: its name is the contract's (action.Def.Tool)", t.Name, t.Action)
	case own && c.Tool() == "":
		return fmt.Errorf("a tool serves %s unchanged, but its contract names no tool (action.Def.Tool)", t.Action)
	case !own && t.Name == "":
		return fmt.Errorf("a tool narrowing %s declares no name", t.Action)
	case own:
		t.Name = c.Tool()
	}
	t.Input, t.aliases = in, c.Aliases().Without(t.Drop...)
	t.Run, t.forwards = forward, true
	return nil
}

// adapt is the input of an adapting tool: its action's contract without
// drop (the fields its Run fills in), plus add (the tool's own).
func adapt(a kanban.Action, add P, drop ...string) S {
	c := action.ContractOf(a)
	if c == nil {
		failDecl(fmt.Errorf("tool input: action %s is not declared", a))
		return NoParams()
	}
	return schema.With(schema.Without(c.Schema(), drop...), add)
}

// artifactInput is the input of the tool publishing artifacts of kind:
// the data of artifact.create's branch for kind, with that branch's
// task_id, without drop.
func artifactInput(kind string, drop ...string) S {
	c := action.ContractOf(kanban.ActionArtifactCreate)
	if c != nil {
		branches, _ := c.Schema()["oneOf"].([]any)
		for _, b := range branches {
			props, _ := b.(S)["properties"].(P)
			data, ok := props["data"]
			if props["kind"]["const"] == kind && ok {
				return schema.Without(schema.With(data, P{"task_id": props["task_id"]}), drop...)
			}
		}
	}
	failDecl(fmt.Errorf("tool input: artifact.create has no branch of kind %s", kind))
	return NoParams()
}
