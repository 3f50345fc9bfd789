package upstream

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// conn is one live connection to an upstream server. lost is closed when
// it ends (the process exited, or the transport failed); cause says why.
type conn struct {
	tr  transport.Interface
	cl  *client.Client
	cmd *exec.Cmd
	// life is the connection's context, cancelled (cancel) when it closes.
	life   context.Context
	cancel context.CancelFunc
	ids    atomic.Int64
	lost   chan struct{}
	exited chan struct{} // stdio: closed once the process has been waited for
	once   sync.Once
	mu     sync.Mutex
	cause  string
}

// fail marks the connection lost with a cause (the first one wins).
func (c *conn) fail(cause string) {
	c.once.Do(func() {
		c.mu.Lock()
		c.cause = cause
		c.mu.Unlock()
		close(c.lost)
	})
}

func (c *conn) why() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.cause
}

// close ends the connection and, for stdio, the process (its whole
// process group, after a grace period).
func (c *conn) close() {
	c.fail("closed")
	_ = c.cl.Close() // closes stdin (stdio) or ends the HTTP session
	if c.cmd != nil && c.cmd.Process != nil {
		stopProcess(c.cmd, c.exited)
	}
	c.cancel()
}

// request sends one JSON-RPC request with an id of our own space.
func (c *conn) request(ctx context.Context, method string, params any) (*transport.JSONRPCResponse, mcp.RequestId, error) {
	id := mcp.NewRequestId("kandev-" + strconv.FormatInt(c.ids.Add(1), 10))
	resp, err := c.tr.SendRequest(ctx, transport.JSONRPCRequest{JSONRPC: mcp.JSONRPC_VERSION, ID: id, Method: method, Params: params})
	return resp, id, err
}

// cancelled tells the server to stop working on request id (best effort,
// bounded, off the caller's path).
func (c *conn) cancelled(id mcp.RequestId, reason string) {
	n := mcp.JSONRPCNotification{JSONRPC: mcp.JSONRPC_VERSION, Notification: mcp.Notification{
		Method: string(mcp.MethodNotificationCancelled),
		Params: mcp.NotificationParams{AdditionalFields: map[string]any{"requestId": id, "reason": reason}},
	}}
	go func() {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(c.life), 5*time.Second)
		defer cancel()
		_ = c.tr.SendNotification(ctx, n) // best effort: the caller already has its answer
	}()
}

// dial connects to one server and completes the MCP handshake. onNotify
// receives the server's notifications.
func dial(ctx context.Context, cfg kanban.MCPServerConfig, onNotify func(mcp.JSONRPCNotification)) (*conn, error) {
	life, cancel := context.WithCancel(context.WithoutCancel(ctx))
	c := &conn{life: life, cancel: cancel, lost: make(chan struct{})}
	var err error
	switch cfg.Type {
	case "stdio":
		err = c.startProcess(cfg)
	case "http":
		c.tr, err = transport.NewStreamableHTTP(cfg.URL, transport.WithHTTPHeaders(cfg.Headers),
			transport.WithHTTPBasicClient(&http.Client{Transport: limitedTransport{base: http.DefaultTransport}}),
			// The legacy GET stream carries the server's list_changed on the
			// 2025-11-25 protocol this gateway speaks (see below).
			transport.WithContinuousListening(), //nolint:staticcheck // deliberate: see the protocol note in dial
			// The transport's own log lines may quote upstream bodies: keep
			// them out of ours (states and causes are logged by run).
			transport.WithHTTPLogger(slog.New(slog.DiscardHandler)))
		if err != nil {
			err = errors.New("the server's url is not usable")
		}
	default:
		err = errors.New("unknown server type")
	}
	if err != nil {
		cancel()
		return nil, err
	}
	// The gateway sends tools/list and tools/call as plain JSON-RPC on the
	// transport (so that it reads raw schemas and results), which is the
	// initialize-handshake protocol (2025-11-25), not 2026-07-28's
	// per-request metadata.
	c.cl = client.NewClient(c.tr, client.WithLegacyProtocolOnly()) //nolint:staticcheck // deliberate, as above
	c.cl.OnNotification(onNotify)
	if err := c.cl.Start(life); err != nil {
		c.close()
		return nil, errors.New("could not start the connection")
	}
	ictx, icancel := context.WithTimeout(ctx, connectTimeout)
	defer icancel()
	req := mcp.InitializeRequest{}
	req.Params.ClientInfo = mcp.Implementation{Name: "kandev-gateway", Version: "1"}
	if _, err := c.cl.Initialize(ictx, req); err != nil {
		why := "initialize failed"
		if ictx.Err() != nil {
			why = fmt.Sprintf("initialize did not answer within %s", connectTimeout)
		}
		if c.cmd != nil {
			select {
			case <-c.lost:
				why = c.why()
			case <-time.After(50 * time.Millisecond):
			}
		}
		c.close()
		return nil, errors.New(why)
	}
	return c, nil
}

// startProcess launches a stdio server: the entry's command and args, the
// environment of this process without Kandev's tokens plus the entry's env,
// stderr discarded, stdout read through a line limit.
func (c *conn) startProcess(cfg kanban.MCPServerConfig) error {
	cmd := exec.Command(cfg.Command, cfg.Args...) // #nosec G204 -- the operator's configured command, never a payload
	cmd.Env = upstreamEnv(cfg.Env)
	setProcessGroup(cmd)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return errors.New("could not create pipes")
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return errors.New("could not create pipes")
	}
	if err := cmd.Start(); err != nil {
		return errors.New("could not start the command")
	}
	c.cmd, c.exited = cmd, make(chan struct{})
	lim := &lineLimiter{r: stdout, max: MaxMessageBytes, onOver: func() {
		c.fail(fmt.Sprintf("sent a message over %d bytes", MaxMessageBytes))
		stopProcess(cmd, c.exited)
	}}
	c.tr = transport.NewIO(lim, stdin, nil)
	go func() {
		err := cmd.Wait()
		close(c.exited)
		cause := "exited"
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			cause = "exited with " + strings.TrimPrefix(ee.String(), "exit ")
		}
		c.fail(cause)
	}()
	return nil
}

// upstreamEnv is this process's environment without Kandev's credentials,
// plus extra.
func upstreamEnv(extra map[string]string) []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if k == "KANDEV_SESSION_TOKEN" || k == "KANDEV_TOKEN" {
			continue
		}
		if _, overridden := extra[k]; overridden {
			continue
		}
		env = append(env, kv)
	}
	for k, v := range extra {
		env = append(env, k+"="+v)
	}
	return env
}
