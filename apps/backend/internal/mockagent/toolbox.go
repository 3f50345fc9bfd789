package mockagent

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	acp "github.com/coder/acp-go-sdk"
	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
)

// callTimeout bounds one @tool call (an ask_user_question_kandev call waits
// for a person, so it is long).
const callTimeout = 2 * time.Hour

// toolbox connects, on first use, to the MCP servers a session was given
// and finds each tool by name among them.
type toolbox struct {
	servers []acp.McpServer
	stderr  io.Writer

	once    sync.Once
	mu      sync.Mutex
	clients []*client.Client
	owner   map[string]*client.Client // tool name → server
	err     error
}

func newToolbox(servers []acp.McpServer, stderr io.Writer) *toolbox {
	return &toolbox{servers: servers, stderr: stderr, owner: map[string]*client.Client{}}
}

func (b *toolbox) connect(ctx context.Context) {
	var errs []error
	for _, s := range b.servers {
		c, err := b.dial(ctx, s)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		b.clients = append(b.clients, c)
		res, err := c.ListTools(ctx, mcp.ListToolsRequest{})
		for err == nil {
			for _, t := range res.Tools {
				if _, dup := b.owner[t.Name]; !dup {
					b.owner[t.Name] = c
				}
			}
			if res.NextCursor == "" {
				break
			}
			req := mcp.ListToolsRequest{}
			req.Params.Cursor = res.NextCursor
			res, err = c.ListTools(ctx, req)
		}
		if err != nil {
			errs = append(errs, err)
		}
	}
	b.err = errors.Join(errs...)
}

func (b *toolbox) dial(ctx context.Context, s acp.McpServer) (*client.Client, error) {
	var (
		c   *client.Client
		err error
	)
	switch {
	case s.Stdio != nil:
		env := make([]string, 0, len(s.Stdio.Env))
		for _, e := range s.Stdio.Env {
			env = append(env, e.Name+"="+e.Value)
		}
		c, err = client.NewStdioMCPClientWithOptions(s.Stdio.Command, env, s.Stdio.Args, transport.WithCommandStderrWriter(b.stderr))
	case s.Http != nil:
		h := map[string]string{}
		for _, x := range s.Http.Headers {
			h[x.Name] = x.Value
		}
		c, err = client.NewStreamableHttpClient(s.Http.Url, transport.WithHTTPHeaders(h))
		if err == nil {
			// The stream outlives the connect's deadline: it lives as long
			// as the client.
			err = c.Start(context.WithoutCancel(ctx))
		}
	default:
		return nil, errors.New("unsupported MCP server transport")
	}
	if err != nil {
		return nil, fmt.Errorf("start MCP server: %w", err)
	}
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	init.Params.ClientInfo = mcp.Implementation{Name: "kandev-mock-agent", Version: "1"}
	ictx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if _, err := c.Initialize(ictx, init); err != nil {
		_ = c.Close()
		return nil, fmt.Errorf("initialize MCP server: %w", err)
	}
	return c, nil
}

// call calls tool name; text is the result's text content.
func (b *toolbox) call(ctx context.Context, name string, args map[string]any) (text string, isError bool, err error) {
	b.once.Do(func() {
		// Not the turn's context: a cancelled turn must not leave the
		// servers half connected for the next one.
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
		defer cancel()
		b.connect(cctx)
	})
	b.mu.Lock()
	c := b.owner[name]
	b.mu.Unlock()
	if c == nil {
		msg := "no MCP server given to the mock agent has a tool named " + clip(name, 100)
		if b.err != nil {
			msg += " (" + clip(b.err.Error(), 300) + ")"
		}
		return "", false, errors.New(msg)
	}
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	req := mcp.CallToolRequest{}
	req.Params.Name, req.Params.Arguments = name, args
	res, err := c.CallTool(ctx, req)
	if err != nil {
		return "", false, fmt.Errorf("call %s: %w", clip(name, 100), err)
	}
	var sb strings.Builder
	for _, ct := range res.Content {
		if tc, ok := ct.(mcp.TextContent); ok {
			sb.WriteString(tc.Text)
		}
	}
	return sb.String(), res.IsError, nil
}

func (b *toolbox) close() {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, c := range b.clients {
		_ = c.Close()
	}
	b.clients = nil
}
