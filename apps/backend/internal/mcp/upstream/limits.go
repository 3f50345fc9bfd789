package upstream

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// Limits of the gateway (documented in docs/public/upstream-mcp.md).
const (
	// MaxMessageBytes bounds one message read from an upstream server (a
	// line on stdio, a JSON body or an SSE event over HTTP). Past it the
	// connection is dropped (and a stdio server restarted).
	MaxMessageBytes = 32 << 20
	// MaxResultBytes bounds a tools/call result passed to the agent; a
	// bigger one becomes a tool error.
	MaxResultBytes = 1 << 20
	// MaxTools bounds the tools read from one server (over every page).
	MaxTools = 1000
	// maxPages bounds tools/list pages.
	maxPages = 100
	// Texts of upstream tools, bounded as served.
	maxTitleBytes       = 128
	maxDescriptionBytes = 4096
	maxReasonBytes      = 300
	maxToolExcerpt      = 120
	// maxServedName is the longest served name (<server>__<tool>).
	maxServedName = 128
	// Waits.
	connectTimeout = 30 * time.Second
	listTimeout    = 60 * time.Second
	backoffMin     = 250 * time.Millisecond
	backoffMax     = 30 * time.Second
	stableAfter    = 10 * time.Second // a connection up this long resets the backoff
	relistGap      = time.Second      // at most one re-list a second, however often a server says its list changed
)

// Refusal kinds of the byte budgets (a RefusedTool's Limit).
const (
	LimitOverToolBudget   = "over_tool_budget"   // one tool's entry is over max_tool_bytes
	LimitOverServerBudget = "over_server_budget" // admitted in name order, the server's tools would pass max_server_bytes
)

// Budget is the byte budgets of one server's tools as advertised (each
// tools/list entry as JSON): Tool per tool, Server for all the tools
// served from the server together.
type Budget struct{ Tool, Server int }

// BudgetOf is the budget a server's config sets (the defaults when absent).
func BudgetOf(c kanban.MCPServerConfig) Budget {
	return Budget{Tool: c.ToolBytes(), Server: c.ServerBytes()}
}

var errTooLarge = errors.New("upstream message exceeds the size limit")

// lineLimiter fails a read once more than max bytes arrive without a
// newline (event: also without a blank line), and calls onOver once.
type lineLimiter struct {
	r      io.Reader
	max    int
	event  bool // SSE: count up to a blank line instead of any newline
	n      int
	last   byte
	onOver func()
	over   bool
}

func (l *lineLimiter) Read(p []byte) (int, error) {
	if l.over {
		return 0, errTooLarge
	}
	n, err := l.r.Read(p)
	buf := p[:n]
	count, last := l.n, l.last
	if !l.event {
		if i := bytes.LastIndexByte(buf, '\n'); i >= 0 {
			count = n - i - 1
		} else {
			count += n
		}
	} else {
		for _, c := range buf {
			switch {
			case c == '\r':
				continue
			case c == '\n' && last == '\n':
				count = 0
			case c != '\n':
				count++
			}
			last = c
		}
	}
	l.n, l.last = count, last
	if count > l.max {
		l.over = true
		if l.onOver != nil {
			l.onOver()
		}
		return 0, errTooLarge
	}
	return n, err
}

// limitedTransport bounds the HTTP response bodies of an upstream server.
type limitedTransport struct{ base http.RoundTripper }

func (t limitedTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.base.RoundTrip(req)
	if err != nil || resp.Body == nil {
		return resp, err
	}
	event := strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream")
	resp.Body = readCloser{&lineLimiter{r: resp.Body, max: MaxMessageBytes, event: event}, resp.Body}
	if !event {
		// A JSON body may hold newlines: bound its total size instead.
		resp.Body = readCloser{io.LimitReader(resp.Body, MaxMessageBytes+1), resp.Body}
	}
	return resp, nil
}

type readCloser struct {
	io.Reader
	io.Closer
}
