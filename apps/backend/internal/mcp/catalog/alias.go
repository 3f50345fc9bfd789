package catalog

import (
	"errors"
	"maps"
	"strings"
)

// Alias is a legacy argument name a tool accepts, unadvertised, in place
// of the advertised one (To). Giving both is refused.
type Alias struct {
	From, To string
}

// ValueAliases maps, per enum argument, legacy values (compared
// case-insensitively) to the advertised value they stand for.
type ValueAliases map[string]map[string]string

// Normalize applies the tool's declared aliases — argument names, then
// enum values — on a shallow copy when they change anything (the caller's
// map is never mutated). The error text names declared arguments only.
func (t *Tool) Normalize(args map[string]any) (map[string]any, error) {
	out, copied := args, false
	cp := func() {
		if !copied {
			out, copied = maps.Clone(args), true
		}
	}
	for _, a := range t.Aliases {
		v, has := out[a.From]
		if !has {
			continue
		}
		if _, both := out[a.To]; both {
			return nil, errors.New("provide either " + a.To + " or " + a.From + ", not both")
		}
		cp()
		delete(out, a.From)
		out[a.To] = v
	}
	for prop, values := range t.ValueAliases {
		s, ok := out[prop].(string)
		if !ok {
			continue
		}
		if canon, ok := values[strings.ToLower(s)]; ok && canon != s {
			cp()
			out[prop] = canon
		}
	}
	return out, nil
}

// HasNormalization reports whether the tool declares any alias.
func (t *Tool) HasNormalization() bool { return len(t.Aliases) > 0 || len(t.ValueAliases) > 0 }

// stateAliases are the task-state spellings the reference product accepts
// besides the canonical names.
var stateAliases = func() ValueAliases {
	m := map[string]string{
		"created": "TODO", "not_started": "TODO", "todo": "TODO",
		"in_progress": "IN_PROGRESS", "in-progress": "IN_PROGRESS", "started": "IN_PROGRESS",
		"review": "REVIEW", "in_review": "REVIEW", "blocked": "BLOCKED",
		"waiting_for_input": "WAITING_FOR_INPUT", "waiting": "WAITING_FOR_INPUT",
		"complete": "COMPLETED", "completed": "COMPLETED", "done": "COMPLETED",
		"failed": "FAILED", "cancelled": "CANCELLED", "canceled": "CANCELLED",
	}
	return ValueAliases{"state": m}
}()
