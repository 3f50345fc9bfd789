package toolserver

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"sort"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	mcpserver "github.com/mark3labs/mcp-go/server"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/kandev/kandev/apps/backend/internal/argcheck"
	"github.com/kandev/kandev/apps/backend/internal/kanban"
	"github.com/kandev/kandev/apps/backend/internal/mcp/catalog"
)

// wrap is the one wrapper every tool — Kandev's own and upstream ones — is
// served through. Per call, in order: (1) omitted/null arguments become {},
// anything but an object is refused; (2) the tool's normalisation runs on a
// shallow copy; (3) the arguments are validated against the compiled schema
// — on failure the handler is not called and nothing leaves the process;
// (4) run executes the call with panics recovered; (5) tool name, duration,
// argument names and outcome are logged, never values, and observe (when
// set) is told the outcome under label. The call is a span ("tool"), the
// check a child span ("check"); both carry label and outcome, never an
// argument's name or value.
func wrap(e *entry, label string, run runner, h hooks) mcpserver.ToolHandlerFunc {
	name, log := e.name, h.log
	return func(ctx context.Context, req mcp.CallToolRequest) (res *mcp.CallToolResult, err error) {
		start := time.Now()
		outcome, keys := "ok", []string(nil)
		ctx, span := h.startCall(ctx, label)
		defer func() {
			if p := recover(); p != nil {
				ref := newRef()
				// The panic value may contain argument data: log the stack only.
				log.ErrorContext(ctx, "tool handler panic", "tool", name, "ref", ref, "stack", string(debug.Stack()))
				res, err, outcome = mcp.NewToolResultError("internal error (ref "+ref+")"), nil, "panic"
			}
			d := time.Since(start)
			log.InfoContext(ctx, "tool call", "tool", name, "args", keys, "outcome", outcome, "duration", d)
			endSpan(span, outcome)
			if h.observe != nil {
				h.observe(label, outcome, d)
			}
		}()
		args, msg := checkArgs(ctx, h.tracer, e, req.Params)
		if msg != "" {
			outcome = "invalid_arguments"
			return mcp.NewToolResultError(msg), nil
		}
		keys = sortedKeys(args)
		res, outcome = run(ctx, req, args)
		return res, nil
	}
}

// checkArgs decodes and checks a call's arguments in a "check" span: a
// non-empty message means the call is refused.
func checkArgs(ctx context.Context, tr trace.Tracer, e *entry, p mcp.CallToolParams) (map[string]any, string) {
	var span trace.Span
	if tr != nil {
		_, span = tr.Start(ctx, "check")
	}
	args, msg := decodeArgs(e.name, p)
	if msg == "" {
		var cerr error
		if args, cerr = e.check(args); cerr != nil {
			msg = cerr.Error()
		}
	}
	if span != nil {
		result := "ok"
		if msg != "" {
			result = "refused"
		}
		span.SetAttributes(attribute.String("kandev.check", result))
		span.End()
	}
	return args, msg
}

// runner executes a call whose arguments passed the check, returning the
// result and the outcome to log (never a Go error: mcp-go would send its
// text).
type runner func(ctx context.Context, req mcp.CallToolRequest, args map[string]any) (*mcp.CallToolResult, string)

// forwarder runs a catalog tool: its handler, given the backend restricted
// to the tool's declared action.
func forwarder(e *entry, backend catalog.Backend, keepAlive time.Duration, log *slog.Logger) runner {
	return func(ctx context.Context, req mcp.CallToolRequest, args map[string]any) (*mcp.CallToolResult, string) {
		raw, err := marshalArgs(args)
		if err != nil {
			return internalError(ctx, log, e.name, err), "internal"
		}
		v, herr := e.def.Run(ctx, catalog.Call{Args: raw, Backend: declared{backend, e.def}, Progress: progressFunc(ctx, req), Action: e.def.Action,
			KeepAlive: keepAlive})
		if herr != nil {
			return errorResult(ctx, log, e.name, herr), string(kanban.ErrorCode(herr))
		}
		return result(ctx, e.def, v, log), "ok"
	}
}

// declared lets a tool call only the action it declares.
type declared struct {
	catalog.Backend
	tool *catalog.Tool
}

// Call refuses undeclared actions with a plain error (an internal error
// with a correlation id for the agent; a bug for us).
func (d declared) Call(ctx context.Context, action kanban.Action, payload, out any) error {
	if action != d.tool.Action {
		return fmt.Errorf("tool %s called undeclared action %s", d.tool.Name, action)
	}
	return d.Backend.Call(ctx, action, payload, out)
}

// decodeArgs turns the call's arguments into a JSON object, keeping numbers
// exact (argcheck.DecodeObject). A non-empty message means the call is
// refused.
func decodeArgs(name string, p mcp.CallToolParams) (map[string]any, string) {
	raw := p.RawArguments
	if len(bytes.TrimSpace(raw)) == 0 && p.Arguments != nil {
		b, err := json.Marshal(p.Arguments)
		if err != nil {
			return nil, argcheck.NotObject(name).Error()
		}
		raw = b
	}
	args, err := argcheck.DecodeObject(name, raw)
	if err != nil {
		return nil, err.Error()
	}
	return args, ""
}

// marshalArgs re-encodes validated arguments for the backend without HTML
// escaping, so <, > and & do not grow six-fold against size limits, and
// with integral numbers in integer form: JSON Schema counts 1.0 as an
// integer, so a schema-valid 1.0 must reach Go's int fields as 1.
func marshalArgs(args map[string]any) (json.RawMessage, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(kanban.IntegralNumbers(args)); err != nil {
		return nil, err
	}
	return bytes.TrimRight(buf.Bytes(), "\n"), nil
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// result renders a handler's value: encoded once (see marshalResult),
// served by Result.
func result(ctx context.Context, t *catalog.Tool, v any, log *slog.Logger) *mcp.CallToolResult {
	b, err := marshalResult(v)
	if err != nil {
		return internalError(ctx, log, t.Name, err)
	}
	return Result(b, t.Output != nil)
}

// Result is a tool's answer as the wrapper serves it, from the JSON b of
// the handler's value: b as the text content and, for a tool with an
// output schema (structured), the same bytes as the structured content.
// Nothing is encoded again here. make bench's same-bytes floor serves its
// precomputed answers through this function too, so that floor and tool
// hand mcp-go identical results.
func Result(b []byte, structured bool) *mcp.CallToolResult {
	r := mcp.NewToolResultText(string(b))
	if structured {
		r.StructuredContent = json.RawMessage(b)
	}
	return r
}

// marshalResult encodes a handler's value. A catalog.Reply (what the
// forwarding handlers return: the backend's answer, valid JSON by the
// Backend contract) is used as is, saving a pass over large results; a
// json.RawMessage is used as is when valid.
func marshalResult(v any) ([]byte, error) {
	switch r := v.(type) {
	case catalog.Reply:
		if len(r) > 0 {
			return r, nil
		}
	case json.RawMessage:
		if json.Valid(r) {
			return r, nil
		}
	}
	return json.Marshal(v)
}

// errorResult maps a backend error to a tool error: the code and the safe
// message for domain errors, a correlation id for anything else.
func errorResult(ctx context.Context, log *slog.Logger, tool string, err error) *mcp.CallToolResult {
	var ke *kanban.Error
	if errors.As(err, &ke) {
		return mcp.NewToolResultError(string(ke.Code) + ": " + ke.Message)
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		// The client went away or the call's own deadline passed: not a bug.
		log.InfoContext(ctx, "tool call ended early", "tool", tool, "cause", err)
		return mcp.NewToolResultError(string(kanban.CodeUnavailable) + ": the call was cancelled or timed out before the backend answered; retry")
	}
	return internalError(ctx, log, tool, err)
}

func internalError(ctx context.Context, log *slog.Logger, tool string, err error) *mcp.CallToolResult {
	ref := newRef()
	log.ErrorContext(ctx, "tool failed", "tool", tool, "ref", ref, "err", err)
	return mcp.NewToolResultError("internal error (ref " + ref + ")")
}

func newRef() string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// progressFunc sends notifications/progress for the call's progress token,
// or does nothing when the caller gave none.
func progressFunc(ctx context.Context, req mcp.CallToolRequest) func(float64, float64, string) {
	if req.Params.Meta == nil || req.Params.Meta.ProgressToken == nil {
		return func(float64, float64, string) {}
	}
	token := req.Params.Meta.ProgressToken
	srv := mcpserver.ServerFromContext(ctx)
	return func(progress, total float64, message string) {
		if srv == nil {
			return
		}
		params := map[string]any{"progressToken": token, "progress": progress}
		if total > 0 {
			params["total"] = total
		}
		if message != "" {
			params["message"] = message
		}
		_ = srv.SendNotificationToClient(ctx, "notifications/progress", params) // best effort keep-alive
	}
}
