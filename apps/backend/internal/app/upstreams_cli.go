package app

import (
	"context"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/kandev/kandev/apps/backend/internal/action"
	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// maxCLIPages bounds how many pages `kandev session upstreams` reads.
const maxCLIPages = 50

// SessionUpstreams prints a session's proxied MCP servers (state, tool
// counts) and every tool they refused to serve, with the limit that
// stopped it, reading every page of upstream.list and upstream.refused.
func SessionUpstreams(ctx context.Context, backendURL, token, sessionID string, w io.Writer) error {
	if sessionID == "" {
		return fmt.Errorf("session upstreams: --session is required")
	}
	servers, err := allPages[kanban.UpstreamServer](ctx, backendURL, token, kanban.ActionUpstreamList, func(cursor string) any {
		return action.UpstreamListIn{SessionID: sessionID, Limit: kanban.MaxLimit, Cursor: cursor}
	})
	if err != nil {
		return err
	}
	if len(servers) == 0 {
		_, err := fmt.Fprintln(w, "no proxied MCP servers reported for this session")
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	row(tw, "SERVER\tTYPE\tSTATE\tSERVED\tREFUSED\tDETAIL")
	for _, s := range servers {
		row(tw, "%s\t%s\t%s\t%d\t%d\t%s", s.Name, s.Type, s.State, s.ToolsServed, s.ToolsRefused, s.Detail)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	refused, err := allPages[kanban.RefusedTool](ctx, backendURL, token, kanban.ActionUpstreamRefused, func(cursor string) any {
		return action.UpstreamRefusedIn{SessionID: sessionID, Limit: kanban.MaxLimit, Cursor: cursor}
	})
	if err != nil || len(refused) == 0 {
		return err
	}
	tw = tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	row(tw, "\nREFUSED TOOL\tLIMIT\tREASON")
	for _, r := range refused {
		row(tw, "%s__%s\t%s\t%s", r.Server, r.Tool, r.Limit, r.Reason)
	}
	return tw.Flush()
}

// allPages reads a list action page by page (at most maxCLIPages).
func allPages[T any](ctx context.Context, backendURL, token string, name kanban.Action, payload func(cursor string) any) ([]T, error) {
	var out []T
	cursor := ""
	for range maxCLIPages {
		var page kanban.List[T]
		if err := Operator(ctx, backendURL, token, name, payload(cursor), &page); err != nil {
			return nil, err
		}
		out = append(out, page.Items...)
		if cursor = page.NextCursor; cursor == "" {
			break
		}
	}
	return out, nil
}

// row adds one line to a tabwriter, which buffers: its Flush reports any
// write error.
func row(tw *tabwriter.Writer, format string, args ...any) {
	_, _ = fmt.Fprintf(tw, format+"\n", args...)
}
