package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	mcpserver "github.com/mark3labs/mcp-go/server"

	"github.com/kandev/kandev/apps/backend/internal/mcp/toolserver"
)

// FloorTool is the floor server's no-op tool.
const FloorTool = "noop"

// ServeFloor serves the transport floors until ctx ends: a raw mcp-go
// Streamable HTTP server at /mcp, with mcp-go's defaults, no gate and no
// validation, and these tools: FloorTool, which does nothing and answers
// "ok" (the no-op floor), and one tool per entry of same, named by its
// key, which answers that entry's precomputed JSON exactly as Kandev's
// wrapper serves a tool result (toolserver.Result: the bytes as text and as
// structured content), the same-bytes floor of that call. It prints
// "floor serving on http://ADDR/mcp" to out once listening.
func ServeFloor(ctx context.Context, addr string, out io.Writer, same map[string][]byte) error {
	s := mcpserver.NewMCPServer("floor", "1", mcpserver.WithToolCapabilities(false))
	s.AddTool(mcp.Tool{Name: FloorTool, Description: "Does nothing.", RawInputSchema: []byte(`{"type":"object"}`)},
		func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultText("ok"), nil
		})
	for name, b := range same {
		s.AddTool(mcp.Tool{Name: name, Description: "Answers a precomputed result.", RawInputSchema: []byte(`{"type":"object"}`)},
			func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return toolserver.Result(b, true), nil
			})
	}
	st := mcpserver.NewStreamableHTTPServer(s, mcpserver.WithEndpointPath("/mcp"))
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", st)
	hs := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	if _, err := fmt.Fprintf(out, "floor serving on http://%s/mcp\n", ln.Addr()); err != nil {
		return err
	}
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	_ = st.Shutdown(sctx) // the process is exiting
	if err := hs.Shutdown(sctx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
