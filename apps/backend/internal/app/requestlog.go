package app

import (
	"context"
	"net/http"
	"time"

	"github.com/kandev/kandev/apps/backend/internal/action"
	"github.com/kandev/kandev/apps/backend/internal/logctx"
	"github.com/kandev/kandev/apps/backend/internal/ws"
)

// RequestIDHeader is the response header naming a request's id, the
// request_id of every log line logged while serving it.
const RequestIDHeader = "X-Request-Id"

// requestIDs gives every request a fresh id, carried in its context (so
// every line logged with it names the id) and answered in RequestIDHeader,
// and logs the request at debug level: method and path, never its query,
// headers or body. A caller's own id is not taken: it would put caller
// text in the log.
func (b *backend) requestIDs(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := logctx.NewRequestID()
		ctx := logctx.WithRequest(r.Context(), id)
		w.Header().Set(RequestIDHeader, id)
		start := time.Now()
		next.ServeHTTP(w, r.WithContext(ctx))
		b.log.DebugContext(ctx, "http request", "method", r.Method, "path", r.URL.Path, "duration", time.Since(start))
	})
}

// connContext names the agent session of a WebSocket connection that a
// session's kandev mcp bridge attached with its token, so every line
// logged about the connection carries session_id beside request_id.
func connContext(ctx context.Context, p ws.Principal) context.Context {
	if id, ok := p.(identity); ok && id.Kind == action.Session && id.SessionID != "" {
		return logctx.WithSession(ctx, id.SessionID)
	}
	return ctx
}
