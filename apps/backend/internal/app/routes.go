package app

import (
	"io"
	"net/http"

	"github.com/kandev/kandev/apps/backend/internal/action"
)

// routes mounts every endpoint.
func (b *backend) routes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"status":"ok"}`)
	})
	mux.Handle("GET /metrics", sameMachine(b.metricsHandler()))
	mux.Handle("GET /ws", sameMachine(b.wsEntry()))
	mux.Handle("GET /terminal", sameMachine(b.terminalEntry()))
	mux.Handle("/", sameMachine(b.board))
	mux.Handle("/mcp", sameMachine(b.operatorOnly(b.rateLimited(remoteAddr(noStandaloneStream(b.mcpHTTP.Streamable))))))
	mux.Handle("GET /mcp/sse", sameMachine(b.operatorOnly(remoteAddr(b.mcpHTTP.SSE))))
	mux.Handle("POST /mcp/message", sameMachine(b.operatorOnly(b.rateLimited(remoteAddr(b.mcpHTTP.Message)))))
	b.mountConformance(mux)
	b.mountWebhooks(mux)
	return b.requestIDs(mux)
}

// remoteAddr puts the request's remote address in its context: the
// audit log records where an external MCP call came from.
func remoteAddr(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		next.ServeHTTP(w, r.WithContext(action.WithRemote(r.Context(), r.RemoteAddr)))
	})
}

// noStandaloneStream answers GET (the optional server-to-client stream)
// with 405, as the Streamable HTTP spec allows. The external mode's tool
// list never changes, so the stream would carry nothing of its own, and
// mcp-go (v1.2.1) can route a call's progress notification to it instead
// of to the call's response, where the client drops it.
func noStandaloneStream(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			w.Header().Set("Allow", "POST, DELETE")
			http.Error(w, "the external endpoint has no server-to-client stream; use POST", http.StatusMethodNotAllowed)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// operatorOnly requires the operator bearer token (constant-time compare).
func (b *backend) operatorOnly(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !b.isOperator(bearer(r)) {
			w.Header().Set("WWW-Authenticate", `Bearer realm="kandev"`)
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = io.WriteString(w, `{"code":"UNAUTHORIZED","message":"operator bearer token required"}`)
			return
		}
		next.ServeHTTP(w, r)
	})
}

func (b *backend) isOperator(tok string) bool {
	return b.cred.matches(tok)
}

// bearer extracts the bearer token of a request.
func bearer(r *http.Request) string {
	const prefix = "Bearer "
	h := r.Header.Get("Authorization")
	if len(h) > len(prefix) && (h[:len(prefix)] == prefix || h[:len(prefix)] == "bearer ") {
		return h[len(prefix):]
	}
	return ""
}
