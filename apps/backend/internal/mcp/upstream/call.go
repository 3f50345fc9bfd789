package upstream

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/kandev/kandev/apps/backend/internal/escape"
	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// call forwards one validated call of t to the server: fail fast while the
// server is down, bounded by the server's timeout, the caller's
// cancellation forwarded as notifications/cancelled, the result bounded.
// Error texts are Kandev's own; an upstream JSON-RPC error message is shown
// as a bounded, escaped excerpt, and nothing upstream is logged.
func (s *upstreamServer) call(ctx context.Context, t *tool, args map[string]any) (*mcp.CallToolResult, string) {
	c := s.current()
	if c == nil {
		return toolError("%s: upstream server %s is restarting or unreachable; retry in a few seconds", kanban.CodeUnavailable, s.name), "unavailable"
	}
	params, err := callParams(t.upstream, args)
	if err != nil {
		return toolError("internal error: the arguments could not be encoded"), "internal"
	}
	timeout := time.Duration(s.cfg.CallTimeout()) * time.Second
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	resp, id, err := c.request(cctx, string(mcp.MethodToolsCall), params)
	if err != nil {
		switch {
		case ctx.Err() != nil:
			c.cancelled(id, "the caller cancelled the call")
			return toolError("the call was cancelled; upstream server %s was told to stop", s.name), "cancelled"
		case cctx.Err() != nil:
			c.cancelled(id, "timed out")
			return toolError("%s: upstream server %s did not answer within %d s; the call was cancelled upstream (it may have partly run)",
				kanban.CodeUnavailable, s.name, s.cfg.CallTimeout()), "timeout"
		}
		c.fail("the connection failed during a call")
		return toolError("%s: upstream server %s is restarting or unreachable; retry in a few seconds", kanban.CodeUnavailable, s.name), "unavailable"
	}
	if resp.Error != nil {
		return toolError("upstream server %s refused the call (JSON-RPC error %d): %s", s.name, resp.Error.Code,
			escape.Excerpt(resp.Error.Message, maxReasonBytes)), "upstream_error"
	}
	if len(resp.Result) > MaxResultBytes {
		return toolError("the result of upstream server %s is %d bytes; the limit is %d", s.name, len(resp.Result), MaxResultBytes), "too_large"
	}
	var res mcp.CallToolResult
	if err := json.Unmarshal(resp.Result, &res); err != nil {
		return toolError("upstream server %s answered with an invalid tool result", s.name), "invalid_result"
	}
	if res.IsError {
		return &res, "tool_error"
	}
	return &res, "ok"
}

// callParams encodes tools/call params: the upstream name and the
// validated arguments (numbers kept as written, no HTML escaping).
func callParams(name string, args map[string]any) (json.RawMessage, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(struct {
		Name      string         `json:"name"`
		Arguments map[string]any `json:"arguments"`
	}{name, args}); err != nil {
		return nil, err
	}
	return bytes.TrimRight(buf.Bytes(), "\n"), nil
}

func toolError(format string, args ...any) *mcp.CallToolResult {
	return mcp.NewToolResultError(fmt.Sprintf(format, args...))
}
