package toolserver

import (
	"encoding/json"
	"fmt"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
	"github.com/kandev/kandev/apps/backend/internal/mcp/argcheck"
)

// compilePayloads compiles the catalog's declared payload contracts (the
// actions that take no forwarding tool's arguments unchanged) with the
// tools' compiler: the same validator, the same refusal texts.
func (c *Compiled) compilePayloads() error {
	c.payloads = map[kanban.Action]*entry{}
	for _, a := range c.cat.PayloadActions() {
		s, _ := c.cat.Payload(a)
		raw, err := json.Marshal(s)
		if err != nil {
			return fmt.Errorf("action %s: payload contract: %w", a, err)
		}
		v, err := argcheck.Compile(string(a), raw)
		if err != nil {
			return err
		}
		c.payloads[a] = &entry{name: string(a), validator: v}
	}
	return nil
}

// HasPayloadContract reports whether the catalog declares a payload
// contract for action a.
func (c *Compiled) HasPayloadContract(a kanban.Action) bool { return c.payloads[a] != nil }

// CheckActionPayload checks a payload against action a's declared payload
// contract and returns it encoded for the handler (integral numbers as
// integers). A refusal reads like a tool's: "invalid arguments for
// <action>: ..." naming paths and rules, never caller values.
func (c *Compiled) CheckActionPayload(a kanban.Action, raw json.RawMessage) (json.RawMessage, error) {
	e := c.payloads[a]
	if e == nil {
		return nil, fmt.Errorf("check %s: %w", a, errUnknownTool)
	}
	return e.checkRaw(raw)
}
