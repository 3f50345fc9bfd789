package action

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"

	"github.com/kandev/kandev/apps/backend/internal/argcheck"
	"github.com/kandev/kandev/apps/backend/internal/kanban"
	"github.com/kandev/kandev/apps/backend/internal/schema"
)

// Contract is one action's payload contract: the Go type the payload
// decodes into, the JSON Schema it must satisfy first (its shape proven
// against that type, compiled once by Kandev's validator: no loader,
// redacted refusals) and the legacy aliases applied before the check. The
// registry enforces it on every call, whatever the transport; an MCP tool
// serving the action is declared from it (package catalog).
type Contract struct {
	name kanban.Action
	// tool is the MCP tool that serves the action unchanged, if any (Tool).
	tool     string
	allow    Allow
	effect   Effect
	blocking bool
	payload  reflect.Type

	schema  schema.S
	aliases Aliases

	once      sync.Once
	validator *argcheck.Validator
	err       error
}

// Name is the action.
func (c *Contract) Name() kanban.Action { return c.name }

// Tool is the MCP tool that serves the action unchanged, if any: its
// input schema is this contract and refusals on every transport name it
// ("invalid arguments for <Tool>: …"), so a WebSocket caller reads the
// very text an MCP caller does. Empty: refusals name the action.
func (c *Contract) Tool() string { return c.tool }

// Allow says which principals may call the action.
func (c *Contract) Allow() Allow { return c.allow }

// Effect says whether the action changes state or only reads.
func (c *Contract) Effect() Effect { return c.effect }

// Writes reports whether the action changes state: it is audited and
// counts against its caller's write rate.
func (c *Contract) Writes() bool { return c.effect == Writes || c.effect == External }

// Blocking reports whether the action may wait for a person
// (question.ask); clients give it a longer timeout.
func (c *Contract) Blocking() bool { return c.blocking }

// Payload is the Go type the payload decodes into.
func (c *Contract) Payload() reflect.Type { return c.payload }

// refusalName is the name refusals carry.
func (c *Contract) refusalName() string {
	if c.tool != "" {
		return c.tool
	}
	return string(c.name)
}

// Schema returns a copy of the contract's JSON Schema.
func (c *Contract) Schema() schema.S { return schema.Clone(c.schema) }

// Aliases returns the legacy names and values the contract accepts.
func (c *Contract) Aliases() Aliases { return c.aliases }

// Fields lists the payload's JSON field names, sorted.
func (c *Contract) Fields() []string { return fieldNames(c.payload) }

// compile compiles the schema once, after proving its shape is the
// payload type's.
func (c *Contract) compile() error {
	c.once.Do(func() {
		if err := conform(c.schema, c.payload, "/"); err != nil {
			c.err = fmt.Errorf("action %s: contract does not fit %s: %w", c.name, c.payload, err)
			return
		}
		raw, err := json.Marshal(c.schema)
		if err != nil {
			c.err = fmt.Errorf("action %s: contract: %w", c.name, err)
			return
		}
		c.validator, c.err = argcheck.Compile(c.refusalName(), raw)
	})
	return c.err
}

// Check checks a payload as every transport receives it (raw JSON;
// omitted or null is {}): the aliases, then the compiled schema. It
// returns the payload to decode — integral numbers in integer form, as
// JSON Schema counts 1.0 as an integer — or a VALIDATION_ERROR whose
// message is the refusal text, naming paths and rules, never a caller's
// value or key, and whose Field is the first refused top-level field.
func (c *Contract) Check(raw json.RawMessage) (json.RawMessage, error) {
	if err := c.compile(); err != nil {
		return nil, err
	}
	args, err := argcheck.DecodeObject(c.refusalName(), raw)
	if err != nil {
		return nil, refusal(err)
	}
	if !c.aliases.empty() {
		if args, err = c.aliases.Normalize(args); err != nil {
			return nil, refusal(errors.New("invalid arguments for " + c.refusalName() + ": " + err.Error()))
		}
	}
	if err := c.validator.Validate(args); err != nil {
		return nil, refusal(err)
	}
	return encodePayload(args)
}

// encodePayload re-encodes a checked payload without HTML escaping and
// with integral numbers in integer form.
func encodePayload(args map[string]any) (json.RawMessage, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(kanban.IntegralNumbers(args)); err != nil {
		return nil, fmt.Errorf("encode checked payload: %w", err)
	}
	return bytes.TrimRight(buf.Bytes(), "\n"), nil
}

// refusal is a contract's VALIDATION_ERROR: the validator's text, and the
// top-level field of the first refused path (so a form can show the error
// next to its field).
func refusal(err error) error {
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

// Checked is a payload that a schema narrowing its action's contract has
// just accepted in this process: a forwarding tool's arguments as the MCP
// wrapper checked and encoded them (catalog derives every forwarding
// tool's input from its action's contract with schema.Narrow). The
// in-process Caller hands it to the action without checking it again; on
// any other path it is plain JSON, checked on arrival.
type Checked json.RawMessage

// MarshalJSON returns c itself (null when empty).
func (c Checked) MarshalJSON() ([]byte, error) { return json.RawMessage(c).MarshalJSON() }
