package app

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/kandev/kandev/apps/backend/internal/action"
	"github.com/kandev/kandev/apps/backend/internal/kanban"
	"github.com/kandev/kandev/apps/backend/internal/ws"
)

const auditUsage = "usage: kandev audit export [--actor A] [--action NAME] [--target ID] [--since T] [--until T] [flags]"

// auditRetries bounds how often one page is asked again after a
// RATE_LIMITED answer.
const auditRetries = 10

// auditCmd runs kandev audit export: every audit entry matching the
// filters, newest first, one JSON object a line, read a page at a time
// through audit.list over one WebSocket connection.
func auditCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] != "export" {
		return errors.New(auditUsage)
	}
	fs, creds := operatorFlags("audit export", stderr)
	var in action.AuditListIn
	fs.StringVar(&in.Actor, "actor", "", `only this actor: "operator" or "session:<id>"`)
	fs.StringVar(&in.Action, "action", "", "only this action, e.g. task.move")
	fs.StringVar(&in.Target, "target", "", "only entries naming this entity id")
	fs.StringVar(&in.Since, "since", "", "only entries at or after this RFC 3339 time")
	fs.StringVar(&in.Until, "until", "", "only entries before this RFC 3339 time")
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	backend, tok, err := creds()
	if err != nil {
		return err
	}
	u, err := websocketURL(backend)
	if err != nil {
		return err
	}
	c, err := ws.Dial(ctx, ws.ClientConfig{URL: u, Token: tok})
	if err != nil {
		if ws.IsUnauthorized(err) {
			return errors.New("the backend refused the operator token")
		}
		return fmt.Errorf("connect to backend at %s: %w", backend, err)
	}
	defer func() { _ = c.Close() }()
	w := bufio.NewWriter(stdout)
	in.Limit = kanban.MaxLimit
	for {
		page, err := auditPage(ctx, c, in)
		if err != nil {
			return err
		}
		for _, e := range page.Items {
			b, err := json.Marshal(e)
			if err != nil {
				return err
			}
			if _, err := w.Write(append(b, '\n')); err != nil {
				return err
			}
		}
		if page.NextCursor == "" {
			return w.Flush()
		}
		in.Cursor = page.NextCursor
	}
}

// auditPage reads one page, waiting out RATE_LIMITED answers.
func auditPage(ctx context.Context, c *ws.Client, in action.AuditListIn) (*kanban.List[kanban.AuditEntry], error) {
	for try := 0; ; try++ {
		var page kanban.List[kanban.AuditEntry]
		cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		err := c.Call(cctx, kanban.ActionAuditList, in, &page)
		cancel()
		e, ok := kanban.AsError(err)
		if err == nil || !ok || e.Code != kanban.CodeRateLimited || try == auditRetries {
			return &page, err
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(time.Duration(max(1, e.RetryAfter)) * time.Second):
		}
	}
}
