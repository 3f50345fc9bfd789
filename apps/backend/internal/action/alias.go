package action

import (
	"errors"
	"maps"
	"slices"
	"strings"
)

// Alias is a legacy argument name an action (and its tool) accepts,
// unadvertised, in place of the advertised one (To). Giving both is
// refused.
type Alias struct {
	From, To string
}

// Aliases are an action's legacy argument names and, per enum argument,
// legacy values (compared case-insensitively) mapped to the advertised
// value they stand for: the one declared-alias mechanism, applied before
// validation on every transport.
type Aliases struct {
	Names  []Alias
	Values map[string]map[string]string
}

func (a Aliases) empty() bool { return len(a.Names) == 0 && len(a.Values) == 0 }

// Without returns the aliases that target none of props (those a narrowed
// tool still takes).
func (a Aliases) Without(props ...string) Aliases {
	out := Aliases{Names: slices.DeleteFunc(slices.Clone(a.Names), func(al Alias) bool { return slices.Contains(props, al.To) })}
	if len(out.Names) == 0 {
		out.Names = nil
	}
	for prop, values := range a.Values {
		if !slices.Contains(props, prop) {
			if out.Values == nil {
				out.Values = map[string]map[string]string{}
			}
			out.Values[prop] = values
		}
	}
	return out
}

// Normalize applies the aliases — argument names, then enum values — on a
// shallow copy when they change anything (the caller's map is never
// mutated). The error text names declared arguments only.
func (a Aliases) Normalize(args map[string]any) (map[string]any, error) {
	out, copied := args, false
	cp := func() {
		if !copied {
			out, copied = maps.Clone(args), true
		}
	}
	for _, al := range a.Names {
		v, has := out[al.From]
		if !has {
			continue
		}
		if _, both := out[al.To]; both {
			return nil, errors.New("provide either " + al.To + " or " + al.From + ", not both")
		}
		cp()
		delete(out, al.From)
		out[al.To] = v
	}
	for prop, values := range a.Values {
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

// stateAliases are the task-state spellings the reference product accepts
// besides the canonical names.
var stateAliases = map[string]map[string]string{"state": {
	"created": "TODO", "not_started": "TODO", "todo": "TODO",
	"in_progress": "IN_PROGRESS", "in-progress": "IN_PROGRESS", "started": "IN_PROGRESS",
	"review": "REVIEW", "in_review": "REVIEW", "blocked": "BLOCKED",
	"waiting_for_input": "WAITING_FOR_INPUT", "waiting": "WAITING_FOR_INPUT",
	"complete": "COMPLETED", "completed": "COMPLETED", "done": "COMPLETED",
	"failed": "FAILED", "cancelled": "CANCELLED", "canceled": "CANCELLED",
}}
