package toolserver

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/mark3labs/mcp-go/mcp"
)

// errUnknownTool is Check's answer for a name the catalog does not declare.
var errUnknownTool = errors.New("unknown tool")

// Check runs the wrapper's argument check for tool on args already decoded
// as a JSON object: the tool's normalisation, then validation against its
// compiled schema. It returns nil or an error whose text is exactly the tool
// error the wrapper would send. It is the same code the wrapper runs (not a
// copy), exported so benchmarks can measure it without a handler.
func (c *Compiled) Check(tool string, args map[string]any) error {
	e := c.entries[tool]
	if e == nil {
		return fmt.Errorf("check %s: %w", tool, errUnknownTool)
	}
	_, err := e.check(args)
	return err
}

// check normalises args (on a shallow copy, if it changes anything) and
// validates the result. It returns the arguments the handler must see, or
// an error whose text is the tool error.
func (e *entry) check(args map[string]any) (map[string]any, error) {
	if e.normalize != nil {
		var err error
		if args, err = e.normalize(args); err != nil {
			return nil, errors.New("invalid arguments for " + e.name + ": " + err.Error())
		}
	}
	if err := e.validator.Validate(args); err != nil {
		return nil, err
	}
	return args, nil
}

// CheckJSON runs the wrapper's whole argument step on a call's raw JSON
// arguments: decoding them into an object (numbers kept exact; omitted or
// null means {}), then Check. It is what the wrapper adds per call on top
// of mcp-go's own request parsing.
func (c *Compiled) CheckJSON(tool string, raw json.RawMessage) error {
	e := c.entries[tool]
	if e == nil {
		return fmt.Errorf("check %s: %w", tool, errUnknownTool)
	}
	args, msg := decodeArgs(tool, mcp.CallToolParams{Name: tool, RawArguments: raw})
	if msg != "" {
		return errors.New(msg)
	}
	_, err := e.check(args)
	return err
}
