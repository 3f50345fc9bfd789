package toolserver

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net/http"

	mcpserver "github.com/mark3labs/mcp-go/server"

	"github.com/kandev/kandev/apps/backend/internal/mcp/gate"
)

// HTTPHandlers are the server's HTTP transports, each behind the gate.
type HTTPHandlers struct {
	// Streamable serves Streamable HTTP (POST/GET/DELETE on its path).
	Streamable http.Handler
	// SSE serves the legacy HTTP+SSE stream and Message its POST endpoint.
	SSE, Message http.Handler
	shutdown     []func(context.Context) error
	sessions     *sessionTable
}

// Sessions is the number of Streamable HTTP sessions the endpoint keeps.
func (h *HTTPHandlers) Sessions() int { return h.sessions.len() }

// Shutdown closes open streams.
func (h *HTTPHandlers) Shutdown(ctx context.Context) {
	for _, f := range h.shutdown {
		_ = f(ctx) // best effort: the HTTP server is shutting down too
	}
}

// HTTP builds the Streamable HTTP transport at path (with an event store so
// the last notification before a result is not lost) and, when ssePath is
// not empty, the legacy SSE transport at ssePath + messagePath.
//
// Its sessions are bounded by the server's SessionLimits: clients that
// never close theirs cost at most Max sessions, none kept past Idle. ctx
// is the context of the requests the handlers make themselves (a dropped
// session's DELETE): the server's lifetime.
func (s *Server) HTTP(ctx context.Context, path, ssePath, messagePath string) *HTTPHandlers {
	table := newSessionTable(s.sessions.Max)
	st := mcpserver.NewStreamableHTTPServer(s.mcp,
		mcpserver.WithEndpointPath(path),
		mcpserver.WithEventStore(mcpserver.NewInMemoryEventStore()),
		mcpserver.WithSessionIdManager(table),
		mcpserver.WithSessionIdleTTL(s.sessions.Idle),
	)
	table.mu.Lock()
	table.drop = dropper(ctx, st, path)
	table.mu.Unlock()
	h := &HTTPHandlers{Streamable: s.traceHTTP(path, gate.HTTP(s.preflightHTTP(st))), sessions: table}
	h.shutdown = append(h.shutdown, st.Shutdown)
	if ssePath != "" {
		sse := mcpserver.NewSSEServer(s.mcp,
			mcpserver.WithStaticBasePath(""),
			mcpserver.WithSSEEndpoint(ssePath),
			mcpserver.WithMessageEndpoint(messagePath),
		)
		h.SSE = sse.SSEHandler()
		h.Message = s.traceHTTP(messagePath, gate.HTTP(s.preflightHTTP(sse.MessageHandler())))
		h.shutdown = append(h.shutdown, sse.Shutdown)
	}
	return h
}

// preflightHTTP applies preflight to POST bodies (already read and checked
// by the gate, so reading again is bounded).
func (s *Server) preflightHTTP(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			next.ServeHTTP(w, r)
			return
		}
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		if e := s.preflight(body); e != nil {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusOK)
			_, _ = w.Write(e.Response())
			return
		}
		// The gate admits one JSON object per POST (no batch): the message
		// preflight passed is the only one mcp-go handles under r.
		r = r.WithContext(withPreflighted(r.Context()))
		r.Body = io.NopCloser(bytes.NewReader(body))
		next.ServeHTTP(w, r)
	})
}

// ServeStdio serves MCP over stdin/stdout behind the gate until ctx ends or
// stdin closes.
func (s *Server) ServeStdio(ctx context.Context, stdin io.Reader, stdout io.Writer) error {
	out := gate.NewSyncWriter(stdout)
	in := gate.Stdio(stdin, out)
	pr, pw := io.Pipe()
	go s.filterStdio(in, pw, out)
	// filterStdio preflights every line mcp-go reads from pr.
	return mcpserver.NewStdioServer(s.mcp).Listen(withPreflighted(ctx), pr, out)
}

// filterStdio applies preflight to each gated line.
func (s *Server) filterStdio(in io.Reader, pw *io.PipeWriter, out io.Writer) {
	r := newLineReader(in)
	for {
		line, err := r.next()
		if len(line) > 0 {
			if e := s.preflight(line); e != nil {
				_, _ = out.Write(append(e.Response(), '\n'))
			} else if _, werr := pw.Write(append(line, '\n')); werr != nil {
				return
			}
		}
		if err != nil {
			_ = pw.CloseWithError(err)
			return
		}
	}
}

// lineReader splits the gate's output (lines already bounded) into lines.
type lineReader struct{ r *bufio.Reader }

func newLineReader(r io.Reader) *lineReader { return &lineReader{r: bufio.NewReaderSize(r, 64<<10)} }

// next returns the next line without its newline.
func (l *lineReader) next() ([]byte, error) {
	line, err := l.r.ReadBytes('\n')
	return bytes.TrimRight(line, "\r\n"), err
}
