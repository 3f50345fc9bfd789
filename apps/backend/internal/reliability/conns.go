package reliability

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/gorilla/websocket"
)

// rssMiB is a process's resident memory (VmRSS) in MiB.
func rssMiB(pid int) float64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmRSS:"); ok {
			var kb float64
			_, _ = fmt.Sscanf(strings.TrimSpace(v), "%f", &kb)
			return kb / 1024
		}
	}
	return 0
}

const initializeBody = `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"kandev-reliability","version":"1"}}}`

// openSessions initializes n Streamable HTTP sessions and never closes
// them. It returns the first session's id.
func openSessions(ctx context.Context, srv *server, n int) (string, error) {
	hc := &http.Client{Timeout: callTimeout}
	first := ""
	for i := range n {
		id, _, err := mcpPost(ctx, hc, srv, "", initializeBody)
		if err != nil {
			return first, fmt.Errorf("session %d: %w", i, err)
		}
		if first == "" {
			first = id
		}
	}
	hc.CloseIdleConnections()
	return first, nil
}

// mcpPost sends one JSON-RPC message to /mcp.
func mcpPost(ctx context.Context, hc *http.Client, srv *server, session, body string) (string, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, srv.url()+"/mcp", strings.NewReader(body))
	if err != nil {
		return "", nil, err
	}
	req.Header.Set("Authorization", "Bearer "+srv.token)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if session != "" {
		req.Header.Set("Mcp-Session-Id", session)
	}
	resp, err := hc.Do(req)
	if err != nil {
		return "", nil, err
	}
	defer func() { _ = resp.Body.Close() }()
	b, err := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return "", b, fmt.Errorf("HTTP %d", resp.StatusCode)
	}
	return resp.Header.Get("Mcp-Session-Id"), b, err
}

// slowBody opens a connection that announces a 4 MiB tools/call body and
// then sends one byte a second. It returns when the server closes the
// connection (nil) or after d (an error: the server waited too long).
func slowBody(ctx context.Context, srv *server, d time.Duration) error {
	c, err := net.DialTimeout("tcp", srv.addr, 5*time.Second)
	if err != nil {
		return err
	}
	defer func() { _ = c.Close() }()
	head := fmt.Sprintf("POST /mcp HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\n"+
		"Accept: application/json, text/event-stream\r\nContent-Length: %d\r\n\r\n{", srv.addr, srv.token, 4<<20)
	if _, err := io.WriteString(c, head); err != nil {
		return err
	}
	end := time.Now().Add(d)
	for time.Now().Before(end) && ctx.Err() == nil {
		if _, err := c.Write([]byte(" ")); err != nil {
			return nil // the server closed it
		}
		_ = c.SetReadDeadline(time.Now().Add(time.Second))
		if _, err := c.Read(make([]byte, 512)); err != nil && !isTimeout(err) {
			return nil // an answer then EOF, or a reset: closed
		}
	}
	return fmt.Errorf("a slow body was still being read after %s", d)
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// idleConn opens a TCP connection that sends nothing.
func idleConn(srv *server) (net.Conn, error) {
	return net.DialTimeout("tcp", srv.addr, 5*time.Second)
}

// closedByPeer reports whether the peer has closed c (EOF or reset),
// reading whatever it had sent first, for at most d.
func closedByPeer(c net.Conn, d time.Duration) bool {
	_ = c.SetReadDeadline(time.Now().Add(d))
	r := bufio.NewReader(c)
	for {
		if _, err := r.ReadByte(); err != nil {
			return !isTimeout(err)
		}
	}
}

// halfOpenWS upgrades an operator WebSocket and then neither reads nor
// writes again (no pongs): the peer of a vanished client. It returns the
// raw connection.
func halfOpenWS(ctx context.Context, srv *server) (net.Conn, error) {
	d := websocket.Dialer{HandshakeTimeout: 5 * time.Second}
	h := http.Header{}
	h.Set("Authorization", "Bearer "+srv.token)
	ws, resp, err := d.DialContext(ctx, srv.wsURL(), h)
	if resp != nil && resp.Body != nil {
		_ = resp.Body.Close()
	}
	if err != nil {
		return nil, err
	}
	return ws.NetConn(), nil
}
