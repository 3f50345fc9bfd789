package conformance

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	mcpserver "github.com/mark3labs/mcp-go/server"

	"github.com/kandev/kandev/apps/backend/internal/argcheck"
)

// Texts and timings the conformance scenarios specify.
const (
	SimpleText = "This is a simple text response for testing."
	ErrorText  = "This tool intentionally returns an error for testing"
	// Step is the pause between the progress and log notifications of
	// one call ("~50ms" in the scenarios).
	Step = 50 * time.Millisecond
)

// LogMessages are the info-level log notifications test_tool_with_logging
// sends, in order.
var LogMessages = []string{"Tool execution started", "Tool processing data", "Tool execution completed"}

// ProgressSteps are the progress values (of a total of 100) that
// test_tool_with_progress reports when given a progress token.
var ProgressSteps = []float64{0, 50, 100}

// noParams is the schema of a parameter-less tool: closed, with an explicit
// empty properties map (some clients reject object schemas without one).
const noParams = `{"type":"object","properties":{},"additionalProperties":false}`

// schema2020 is the input schema the json-schema-2020-12 scenario expects
// to see preserved: $schema, $defs with a $ref to it, additionalProperties.
const schema2020 = `{
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "type": "object",
  "$defs": {
    "address": {
      "type": "object",
      "properties": {
        "street": {"type": "string"},
        "city": {"type": "string"}
      }
    }
  },
  "properties": {
    "name": {"type": "string"},
    "address": {"$ref": "#/$defs/address"}
  },
  "additionalProperties": false
}`

// fixture is one tool: its declaration and what a call does once its
// arguments passed validation.
type fixture struct {
	name, title, description, schema string
	readOnly                         bool
	run                              func(ctx context.Context, srv *mcpserver.MCPServer, req mcp.CallToolRequest, args map[string]any) *mcp.CallToolResult
}

var fixtureList = []fixture{
	{
		name: "test_simple_text", title: "Simple text", schema: noParams, readOnly: true,
		description: "Returns one text content block (scenario tools-call-simple-text).",
		run: func(context.Context, *mcpserver.MCPServer, mcp.CallToolRequest, map[string]any) *mcp.CallToolResult {
			return mcp.NewToolResultText(SimpleText)
		},
	},
	{
		name: "test_error_handling", title: "Error handling", schema: noParams, readOnly: true,
		description: "Always fails with a tool error, isError: true (scenario tools-call-error).",
		run: func(context.Context, *mcpserver.MCPServer, mcp.CallToolRequest, map[string]any) *mcp.CallToolResult {
			return mcp.NewToolResultError(ErrorText)
		},
	},
	{
		name: "test_tool_with_progress", title: "Progress", schema: noParams, readOnly: true,
		description: "Reports progress 0, 50 and 100 of 100, 50 ms apart, when the call has a progress token (scenario tools-call-with-progress).",
		run:         runProgress,
	},
	{
		name: "test_tool_with_logging", title: "Logging", schema: noParams, readOnly: true,
		description: "Sends three info-level log notifications, 50 ms apart, filtered by the session's logging/setLevel (scenario tools-call-with-logging).",
		run:         runLogging,
	},
	{
		name: "json_schema_2020_12_tool", title: "JSON Schema 2020-12", schema: schema2020, readOnly: true,
		description: "Tool with JSON Schema 2020-12 features: $schema, $defs with $ref, additionalProperties false (scenario json-schema-2020-12).",
		run: func(_ context.Context, _ *mcpserver.MCPServer, _ mcp.CallToolRequest, args map[string]any) *mcp.CallToolResult {
			b, err := json.Marshal(args)
			if err != nil {
				return mcp.NewToolResultError("could not encode the arguments")
			}
			return mcp.NewToolResultText("received " + string(b))
		},
	},
}

// fixtures builds every fixture tool with its validator.
func fixtures(srv *mcpserver.MCPServer) ([]mcpserver.ServerTool, error) {
	out := make([]mcpserver.ServerTool, 0, len(fixtureList))
	for _, f := range fixtureList {
		v, err := argcheck.Compile(f.name, []byte(f.schema))
		if err != nil {
			return nil, fmt.Errorf("conformance fixture: %w", err)
		}
		tool := mcp.Tool{
			Name:           f.name,
			Title:          f.title,
			Description:    f.description,
			RawInputSchema: json.RawMessage(f.schema),
			Annotations:    hints(f.title, f.readOnly),
		}
		out = append(out, mcpserver.ServerTool{Tool: tool, Handler: validated(f, v, srv)})
	}
	return out, nil
}

// validated checks the arguments against the advertised schema before
// running the fixture, as every Kandev tool does: the advertised schema is
// the enforced one.
func validated(f fixture, v *argcheck.Validator, srv *mcpserver.MCPServer) mcpserver.ToolHandlerFunc {
	return func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		args, ok := decodeArgs(req.Params)
		if !ok {
			return mcp.NewToolResultError("invalid arguments for " + f.name + ": /: expected object"), nil
		}
		if err := v.Validate(args); err != nil {
			return mcp.NewToolResultError(err.Error()), nil
		}
		return f.run(ctx, srv, req, args), nil
	}
}

// decodeArgs returns the call's arguments as an object (omitted or null:
// empty), keeping numbers exact; ok is false for anything but an object.
func decodeArgs(p mcp.CallToolParams) (map[string]any, bool) {
	raw := bytes.TrimSpace(p.RawArguments)
	if len(raw) == 0 && p.Arguments != nil {
		b, err := json.Marshal(p.Arguments)
		if err != nil {
			return nil, false
		}
		raw = b
	}
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return map[string]any{}, true
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil || m == nil {
		return nil, false
	}
	return m, true
}

func runProgress(ctx context.Context, srv *mcpserver.MCPServer, req mcp.CallToolRequest, _ map[string]any) *mcp.CallToolResult {
	var token mcp.ProgressToken
	if req.Params.Meta != nil {
		token = req.Params.Meta.ProgressToken
	}
	for i, p := range ProgressSteps {
		if i > 0 && !pause(ctx, Step) {
			return mcp.NewToolResultError("cancelled")
		}
		if token == nil {
			continue
		}
		params := map[string]any{"progressToken": token, "progress": p, "total": 100}
		if err := srv.SendNotificationToClient(ctx, string(mcp.MethodNotificationProgress), params); err != nil {
			return mcp.NewToolResultError("could not send a progress notification")
		}
	}
	return mcp.NewToolResultText(fmt.Sprintf("reported %d progress steps", len(ProgressSteps)))
}

func runLogging(ctx context.Context, srv *mcpserver.MCPServer, _ mcp.CallToolRequest, _ map[string]any) *mcp.CallToolResult {
	for i, msg := range LogMessages {
		if i > 0 && !pause(ctx, Step) {
			return mcp.NewToolResultError("cancelled")
		}
		n := mcp.NewLoggingMessageNotification(mcp.LoggingLevelInfo, Name, msg)
		if err := srv.SendLogMessageToClient(ctx, n); err != nil {
			return mcp.NewToolResultError("could not send a log notification")
		}
	}
	return mcp.NewToolResultText(fmt.Sprintf("sent %d log messages", len(LogMessages)))
}

// pause waits d unless ctx ends first; it reports whether d elapsed.
func pause(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
