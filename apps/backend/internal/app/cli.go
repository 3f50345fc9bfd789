package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/kandev/kandev/apps/backend/internal/action"
	"github.com/kandev/kandev/apps/backend/internal/kanban"
	"github.com/kandev/kandev/apps/backend/internal/mcp/catalog"
	mcpsrv "github.com/kandev/kandev/apps/backend/internal/mcp/server"
	"github.com/kandev/kandev/apps/backend/internal/ws"
)

// ToolsOptions selects what `kandev tools` prints.
type ToolsOptions struct {
	Mode     kanban.Mode
	JSON     bool
	Markdown bool
	Describe string // a tool name: print that tool only
}

// Tools prints a mode's catalog exactly as tools/list serves it.
func Tools(w io.Writer, o ToolsOptions) error {
	c, err := mcpsrv.Compile()
	if err != nil {
		return err
	}
	if o.Markdown {
		md, err := mcpsrv.Markdown(c)
		if err != nil {
			return err
		}
		_, err = io.WriteString(w, md)
		return err
	}
	if o.Mode == "" {
		o.Mode = kanban.ModeTask
	}
	if !slices.Contains(kanban.AllModes, o.Mode) {
		return fmt.Errorf("unknown mode %q (want one of %s)", o.Mode, modeList())
	}
	tools, err := mcpsrv.ListTools(c, catalog.DefaultProfile(o.Mode))
	if err != nil {
		return err
	}
	if o.Describe != "" {
		for _, t := range tools {
			var head struct{ Name string }
			if json.Unmarshal(t, &head) == nil && head.Name == o.Describe {
				return writeIndented(w, t)
			}
		}
		return fmt.Errorf("no tool %s in mode %s", o.Describe, o.Mode)
	}
	if o.JSON {
		return writeIndented(w, tools)
	}
	for _, t := range tools {
		var head struct{ Name, Title, Description string }
		if err := json.Unmarshal(t, &head); err != nil {
			return err
		}
		if _, err := fmt.Fprintf(w, "%-34s %s\n", head.Name, head.Title); err != nil {
			return err
		}
	}
	return nil
}

func writeIndented(w io.Writer, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

func modeList() string {
	s := make([]string, len(kanban.AllModes))
	for i, m := range kanban.AllModes {
		s[i] = string(m)
	}
	return strings.Join(s, ", ")
}

// Operator runs one action against a running backend as the operator.
func Operator(ctx context.Context, backendURL, token, name string, payload, out any) error {
	u, err := websocketURL(backendURL)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	c, err := ws.Dial(ctx, ws.ClientConfig{URL: u, Token: token})
	if err != nil {
		if ws.IsUnauthorized(err) {
			return fmt.Errorf("the backend refused the operator token")
		}
		return fmt.Errorf("connect to backend at %s: %w", backendURL, err)
	}
	defer func() { _ = c.Close() }()
	return c.Call(ctx, name, payload, out)
}

// SessionCreate creates a session on a task and returns it with its token.
// With an empty taskID it first creates a task titled title (no agent
// session of its own).
func SessionCreate(ctx context.Context, backendURL, token, taskID, title string, mode kanban.Mode) (*action.SessionCreateOut, error) {
	if taskID == "" {
		if title == "" {
			return nil, errors.New("session create: --task or --title is required")
		}
		start := false
		var t action.TaskCreateOut
		if err := Operator(ctx, backendURL, token, "task.create", action.TaskCreateIn{Title: title, StartAgent: &start}, &t); err != nil {
			return nil, err
		}
		taskID = t.Task.ID
	}
	var out action.SessionCreateOut
	err := Operator(ctx, backendURL, token, "session.create", action.SessionCreateIn{TaskID: taskID, Mode: mode}, &out)
	return &out, err
}
