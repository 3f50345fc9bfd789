package action

import (
	"bytes"
	"encoding/json"
	"math"
	"strconv"

	"go.yaml.in/yaml/v3"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// docJSON turns a workflow document's text, JSON or YAML, into JSON: JSON
// is checked and kept; YAML is read into its node tree (aliases are not
// expanded by the parser) and converted with a budget on expanded values
// and depth, keys as strings only.
func docJSON(text string) (json.RawMessage, error) {
	if len(text) > kanban.MaxWorkflowDocBytes {
		return nil, kanban.FieldError("document", "larger than %d bytes", kanban.MaxWorkflowDocBytes)
	}
	trimmed := bytes.TrimSpace([]byte(text))
	if len(trimmed) == 0 {
		return nil, kanban.FieldError("document", "is empty: give the workflow document as YAML or JSON text")
	}
	if trimmed[0] == '{' {
		if !json.Valid(trimmed) {
			return nil, kanban.FieldError("document", "is not valid JSON")
		}
		return trimmed, nil
	}
	var root yaml.Node
	if err := yaml.Unmarshal(trimmed, &root); err != nil {
		return nil, kanban.FieldError("document", "is neither valid JSON nor valid YAML")
	}
	c := &yamlConv{budget: kanban.MaxWorkflowDocNodes}
	v, err := c.value(&root, 0)
	if err != nil {
		return nil, err
	}
	out, err := json.Marshal(v)
	if err != nil {
		return nil, kanban.FieldError("document", "holds a value JSON cannot represent")
	}
	return out, nil
}

// yamlConv converts a YAML node tree into JSON values within a budget.
type yamlConv struct{ budget int }

func (c *yamlConv) value(n *yaml.Node, depth int) (any, error) {
	c.budget--
	if c.budget < 0 {
		return nil, kanban.FieldError("document", "expands to more than %d values (YAML aliases count each time they are used)", kanban.MaxWorkflowDocNodes)
	}
	if depth > kanban.MaxWorkflowDocDepth {
		return nil, kanban.FieldError("document", "is nested deeper than %d levels", kanban.MaxWorkflowDocDepth)
	}
	switch n.Kind {
	case yaml.DocumentNode:
		if len(n.Content) != 1 {
			return nil, kanban.FieldError("document", "must hold exactly one YAML document")
		}
		return c.value(n.Content[0], depth)
	case yaml.AliasNode:
		return c.value(n.Alias, depth+1)
	case yaml.MappingNode:
		m := make(map[string]any, len(n.Content)/2)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i]
			if k.Kind != yaml.ScalarNode || (k.Tag != "!!str" && k.Tag != "!!int") {
				return nil, kanban.FieldError("document", "has a mapping key that is not a string (line %d)", k.Line)
			}
			if _, dup := m[k.Value]; dup {
				return nil, kanban.FieldError("document", "repeats a key (line %d)", k.Line)
			}
			v, err := c.value(n.Content[i+1], depth+1)
			if err != nil {
				return nil, err
			}
			m[k.Value] = v
		}
		return m, nil
	case yaml.SequenceNode:
		s := make([]any, 0, len(n.Content))
		for _, e := range n.Content {
			v, err := c.value(e, depth+1)
			if err != nil {
				return nil, err
			}
			s = append(s, v)
		}
		return s, nil
	case yaml.ScalarNode:
		return scalar(n)
	}
	return nil, kanban.FieldError("document", "has an unsupported YAML value (line %d)", n.Line)
}

// scalar converts a YAML scalar by its resolved tag.
func scalar(n *yaml.Node) (any, error) {
	switch n.Tag {
	case "!!null":
		return nil, nil
	case "!!bool":
		var b bool
		if err := n.Decode(&b); err != nil {
			return nil, kanban.FieldError("document", "has an invalid boolean (line %d)", n.Line)
		}
		return b, nil
	case "!!int", "!!float":
		var f float64
		if err := n.Decode(&f); err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
			return nil, kanban.FieldError("document", "has an invalid number (line %d)", n.Line)
		}
		return json.Number(strconv.FormatFloat(f, 'f', -1, 64)), nil
	case "!!str", "!!timestamp", "!!binary", "!!merge":
		return n.Value, nil
	}
	return nil, kanban.FieldError("document", "has a YAML tag Kandev does not read (line %d)", n.Line)
}
