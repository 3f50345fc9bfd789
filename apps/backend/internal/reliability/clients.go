package reliability

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
	"github.com/kandev/kandev/apps/backend/internal/ws"
)

// callTimeout bounds every call a scenario makes: a call that has no
// answer by then counts as a timeout (a defect).
const callTimeout = 30 * time.Second

// ops is an operator WebSocket client.
type ops struct{ c *ws.Client }

func dialOps(ctx context.Context, srv *server, reconnect bool) (*ops, error) {
	c, err := ws.Dial(ctx, ws.ClientConfig{URL: srv.wsURL(), Token: srv.token, Reconnect: reconnect})
	if err != nil {
		return nil, fmt.Errorf("dial operator websocket: %w", err)
	}
	return &ops{c: c}, nil
}

// call runs one action, bounded by callTimeout.
func (o *ops) call(ctx context.Context, action kanban.Action, in, out any) error {
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	return o.c.Call(ctx, action, in, out)
}

func (o *ops) close() { _ = o.c.Close() }

// mcpConn is an MCP client session: on the backend's /mcp (external
// mode) or through a `kandev mcp` bridge over stdio (a session's mode).
type mcpConn struct{ c *client.Client }

// externalMCP opens a Streamable HTTP session on the backend's /mcp.
func externalMCP(ctx context.Context, srv *server) (*mcpConn, error) {
	c, err := client.NewStreamableHttpClient(srv.url()+"/mcp",
		transport.WithHTTPHeaders(map[string]string{"Authorization": "Bearer " + srv.token}),
		transport.WithHTTPTimeout(callTimeout))
	if err != nil {
		return nil, err
	}
	return initialize(ctx, c)
}

// bridgeMCP starts `kandev mcp` for a session over stdio; its stderr
// goes to logw.
func bridgeMCP(ctx context.Context, bin string, srv *server, sessionID, token string, logw io.Writer) (*mcpConn, error) {
	c, err := client.NewStdioMCPClient(bin, []string{"KANDEV_SESSION_TOKEN=" + token},
		"mcp", "--backend", srv.url(), "--session", sessionID)
	if err != nil {
		return nil, err
	}
	if stderr, ok := client.GetStderr(c); ok {
		go func() { _, _ = io.Copy(logw, stderr) }() // drained, so the bridge never blocks on its log
	}
	return initialize(ctx, c)
}

func initialize(ctx context.Context, c *client.Client) (*mcpConn, error) {
	if err := c.Start(context.WithoutCancel(ctx)); err != nil {
		_ = c.Close()
		return nil, fmt.Errorf("start MCP client: %w", err)
	}
	ictx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	req := mcp.InitializeRequest{}
	req.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	req.Params.ClientInfo = mcp.Implementation{Name: "kandev-reliability", Version: "1"}
	if _, err := c.Initialize(ictx, req); err != nil {
		_ = c.Close()
		return nil, fmt.Errorf("initialize: %w", err)
	}
	return &mcpConn{c: c}, nil
}

// errToolError is a call answered with isError; its text is the error.
var errToolError = errors.New("tool error")

// toolError carries a tool error's text.
type toolError struct{ text string }

func (e *toolError) Error() string { return e.text }
func (e *toolError) Unwrap() error { return errToolError }

// call makes one tools/call bounded by callTimeout and decodes the
// structured result into out. A tool error is a *toolError; a protocol
// or transport failure is returned as it is.
func (m *mcpConn) call(ctx context.Context, tool string, args any, out any) error {
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	req := mcp.CallToolRequest{}
	req.Params.Name = tool
	req.Params.Arguments = args
	res, err := m.c.CallTool(ctx, req)
	if err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("%s: %w", tool, context.DeadlineExceeded)
		}
		return err
	}
	text := ""
	for _, c := range res.Content {
		if tc, ok := c.(mcp.TextContent); ok {
			text += tc.Text
		}
	}
	if res.IsError {
		return &toolError{text: text}
	}
	if out == nil {
		return nil
	}
	raw := []byte(text)
	if res.StructuredContent != nil {
		if raw, err = json.Marshal(res.StructuredContent); err != nil {
			return err
		}
	}
	return json.Unmarshal(raw, out)
}

func (m *mcpConn) close() { _ = m.c.Close() }

// classifyMCP maps an MCP call's error.
func classifyMCP(err error, refused ...kanban.Code) (Outcome, string) {
	var te *toolError
	switch {
	case err == nil:
		return OutcomeOK, ""
	case errors.As(err, &te):
		return classifyToolText(te.text, refused...)
	case errors.Is(err, context.DeadlineExceeded):
		return OutcomeTimeout, err.Error()
	}
	return OutcomeFailed, err.Error()
}

// logFile opens (appending) a log file in dir.
func logFile(dir, name string) (*os.File, error) {
	return os.OpenFile(dir+string(os.PathSeparator)+name+".log", os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
}
