package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/kandev/kandev/apps/backend/internal/action"
	"github.com/kandev/kandev/apps/backend/internal/agent"
	"github.com/kandev/kandev/apps/backend/internal/kanban"
	"github.com/kandev/kandev/apps/backend/internal/mcp/catalog"
	"github.com/kandev/kandev/apps/backend/internal/mcp/toolserver"
	"github.com/kandev/kandev/apps/backend/internal/mockagent"
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
func Tools(ctx context.Context, w io.Writer, o ToolsOptions) error {
	c, err := compiledCatalog()
	if err != nil {
		return err
	}
	if o.Markdown {
		md, err := toolserver.Markdown(c)
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
	tools, err := toolserver.ListTools(ctx, c, catalog.DefaultProfile(o.Mode))
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
func Operator(ctx context.Context, backendURL, token string, name kanban.Action, payload, out any) error {
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
		if err := Operator(ctx, backendURL, token, kanban.ActionTaskCreate, action.TaskCreateIn{Title: title, StartAgent: &start}, &t); err != nil {
			return nil, err
		}
		taskID = t.Task.ID
	}
	var out action.SessionCreateOut
	err := Operator(ctx, backendURL, token, kanban.ActionSessionCreate, action.SessionCreateIn{TaskID: taskID, Mode: mode}, &out)
	return &out, err
}

// SessionControl is what kandev session start|stop|message act on.
type SessionControl struct {
	TaskID, SessionID                 string
	AgentProfileID, ExecutorProfileID string
	Text, Reason, Message             string
	Interrupt                         bool
}

// ControlSession starts an agent on a task, stops a session or messages
// it, through the backend's actions, and returns a line to print.
func ControlSession(ctx context.Context, backendURL, token, sub string, c SessionControl) (string, error) {
	switch sub {
	case "start":
		if c.TaskID == "" {
			return "", errors.New("session start: --task is required")
		}
		var out action.SessionSpawnOut
		err := Operator(ctx, backendURL, token, kanban.ActionSessionSpawn, action.SessionSpawnIn{TaskID: c.TaskID,
			AgentProfileID: c.AgentProfileID, ExecutorProfileID: c.ExecutorProfileID, Prompt: c.Text}, &out)
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("session_id=%s state=%s", out.Session.ID, out.Session.State), nil
	case "stop":
		if c.SessionID == "" {
			return "", errors.New("session stop: --session is required")
		}
		var out kanban.Session
		if err := Operator(ctx, backendURL, token, kanban.ActionSessionStop, action.SessionStopIn{ID: c.SessionID, Reason: c.Reason}, &out); err != nil {
			return "", err
		}
		return fmt.Sprintf("session %s %s", out.ID, out.State), nil
	case "message":
		if c.SessionID == "" || c.Message == "" {
			return "", errors.New("session message: --session and --message are required")
		}
		var sess kanban.Session
		if err := Operator(ctx, backendURL, token, kanban.ActionSessionGet, action.IDIn{ID: c.SessionID}, &sess); err != nil {
			return "", err
		}
		mode := kanban.DeliveryQueued
		if c.Interrupt {
			mode = kanban.DeliveryInterrupt
		}
		var out action.TaskMessageOut
		if err := Operator(ctx, backendURL, token, kanban.ActionTaskMessage, action.TaskMessageIn{TaskID: sess.TaskID, SessionID: sess.ID,
			Prompt: c.Message, DeliveryMode: mode}, &out); err != nil {
			return "", err
		}
		return fmt.Sprintf("message %s delivered to session %s (%s)", out.Message.ID, out.SessionID, out.DeliveryMode), nil
	}
	return "", fmt.Errorf("unknown session subcommand")
}

// DefaultMockShTimeout is how long one @sh command of the mock agent may
// run by default.
const DefaultMockShTimeout = mockagent.DefaultShTimeout

// MockAgentOptions are the flags of kandev agent mock.
type MockAgentOptions struct {
	NoLoad    bool          // offer no session/load
	NoModes   bool          // offer no session modes
	ShTimeout time.Duration // bound of one @sh command (0: mockagent's default)
}

// RunMockAgent runs the built-in mock ACP agent on stdin/stdout.
func RunMockAgent(ctx context.Context, stdin io.Reader, stdout, stderr io.Writer, o MockAgentOptions) error {
	return mockagent.Run(ctx, stdin, stdout, mockagent.Options{NoLoad: o.NoLoad, NoModes: o.NoModes, ShTimeout: o.ShTimeout,
		Stderr: stderr, Exit: os.Exit})
}

// AgentEnvAllow is the default agent environment allow-list plus the
// comma-separated extra names or prefixes in extra.
func AgentEnvAllow(extra string) []string {
	out := slices.Clone(agent.DefaultEnvAllow)
	for _, e := range strings.Split(extra, ",") {
		if e = strings.TrimSpace(e); e != "" {
			out = append(out, e)
		}
	}
	return out
}
