// Package mockagent is a real ACP agent built into the kandev binary
// (`kandev agent mock`), for demos and tests without a model account. It
// follows the lines of each prompt that start with "@" (see Directives),
// calls tools through the MCP servers its client gave it, and ignores
// everything else. It depends on the ACP and MCP client libraries only.
package mockagent

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sync"
	"time"

	acp "github.com/coder/acp-go-sdk"
)

// Options configure the mock agent.
type Options struct {
	// NoLoad makes the agent not advertise session/load (to exercise a
	// client's fallback when an agent cannot resume).
	NoLoad bool
	// NoModes makes the agent advertise no ACP session modes (to exercise
	// a client's fallback for agents without them).
	NoModes bool
	// Stderr receives diagnostics and the stderr of MCP servers it runs.
	Stderr io.Writer
	// Exit ends the process for @exit (os.Exit in the binary).
	Exit func(code int)
	// ShTimeout bounds one @sh command (DefaultShTimeout).
	ShTimeout time.Duration
}

// Run serves the agent side of ACP on in/out until the client disconnects
// or ctx ends.
func Run(ctx context.Context, in io.Reader, out io.Writer, o Options) error {
	if o.Stderr == nil {
		o.Stderr = io.Discard
	}
	a := &agent{opts: o, sessions: map[acp.SessionId]*session{}}
	conn := acp.NewAgentSideConnection(a, out, in)
	conn.SetLogger(slog.New(slog.NewTextHandler(o.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})))
	a.conn = conn
	defer a.closeAll()
	select {
	case <-conn.Done():
	case <-ctx.Done():
	}
	return nil
}

type agent struct {
	opts Options
	conn *acp.AgentSideConnection

	mu       sync.Mutex
	sessions map[acp.SessionId]*session
}

var (
	_ acp.Agent       = (*agent)(nil)
	_ acp.AgentLoader = (*agent)(nil)
)

func (a *agent) Initialize(context.Context, acp.InitializeRequest) (acp.InitializeResponse, error) {
	return acp.InitializeResponse{
		ProtocolVersion: acp.ProtocolVersionNumber,
		AgentInfo:       &acp.Implementation{Name: "kandev-mock-agent", Version: "1"},
		AgentCapabilities: acp.AgentCapabilities{
			LoadSession:         !a.opts.NoLoad,
			McpCapabilities:     acp.McpCapabilities{Http: true},
			SessionCapabilities: acp.SessionCapabilities{Close: &acp.SessionCloseCapabilities{}},
		},
		AuthMethods: []acp.AuthMethod{},
	}, nil
}

func (a *agent) Authenticate(context.Context, acp.AuthenticateRequest) (acp.AuthenticateResponse, error) {
	return acp.AuthenticateResponse{}, nil
}

func (a *agent) NewSession(_ context.Context, req acp.NewSessionRequest) (acp.NewSessionResponse, error) {
	var b [8]byte
	_, _ = rand.Read(b[:])
	id := acp.SessionId("mock-" + hex.EncodeToString(b[:]))
	s := a.addSession(id, req.McpServers, req.Cwd)
	return acp.NewSessionResponse{SessionId: id, Modes: a.modeState(s), Models: modelState(s)}, nil
}

// LoadSession resumes a session by id: the mock agent keeps no history, so
// it only reconnects the session's MCP servers.
func (a *agent) LoadSession(_ context.Context, req acp.LoadSessionRequest) (acp.LoadSessionResponse, error) {
	if a.opts.NoLoad {
		return acp.LoadSessionResponse{}, acp.NewMethodNotFound(acp.AgentMethodSessionLoad)
	}
	s := a.addSession(req.SessionId, req.McpServers, req.Cwd)
	return acp.LoadSessionResponse{Modes: a.modeState(s), Models: modelState(s)}, nil
}

// addSession opens a session (again, for a load: it keeps its mode) in
// the working directory cwd (the process's when the client gave none).
func (a *agent) addSession(id acp.SessionId, servers []acp.McpServer, cwd string) *session {
	if cwd == "" {
		wd, err := os.Getwd()
		if err != nil {
			wd = "."
		}
		cwd = wd
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	s := &session{id: id, mode: modeDefault, cwd: cwd}
	if old := a.sessions[id]; old != nil {
		old.tools.close()
		s.mode, s.model = old.currentMode(), old.currentModel()
	}
	s.tools = newToolbox(servers, a.opts.Stderr)
	a.sessions[id] = s
	return s
}

func (a *agent) session(id acp.SessionId) (*session, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	s := a.sessions[id]
	if s == nil {
		return nil, acp.NewInvalidParams(map[string]any{"error": "unknown session"})
	}
	return s, nil
}

func (a *agent) closeAll() {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, s := range a.sessions {
		s.tools.close()
	}
}

// Prompt runs the prompt's directives in order.
func (a *agent) Prompt(ctx context.Context, req acp.PromptRequest) (acp.PromptResponse, error) {
	s, err := a.session(req.SessionId)
	if err != nil {
		return acp.PromptResponse{}, err
	}
	t := &turn{a: a, s: s, ctx: ctx, prompt: req.Prompt, number: s.prompted()}
	for _, d := range Parse(req.Prompt) {
		if stop, done := t.run(d); done {
			return acp.PromptResponse{StopReason: stop, Usage: t.usage}, nil
		}
	}
	return acp.PromptResponse{StopReason: acp.StopReasonEndTurn, Usage: t.usage}, nil
}

// Cancel needs nothing more: the connection cancels the prompt's context.
func (a *agent) Cancel(context.Context, acp.CancelNotification) error { return nil }

func (a *agent) CloseSession(_ context.Context, req acp.CloseSessionRequest) (acp.CloseSessionResponse, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if s := a.sessions[req.SessionId]; s != nil {
		s.tools.close()
		delete(a.sessions, req.SessionId)
	}
	return acp.CloseSessionResponse{}, nil
}

func (a *agent) ListSessions(context.Context, acp.ListSessionsRequest) (acp.ListSessionsResponse, error) {
	return acp.ListSessionsResponse{}, acp.NewMethodNotFound(acp.AgentMethodSessionList)
}

func (a *agent) ResumeSession(context.Context, acp.ResumeSessionRequest) (acp.ResumeSessionResponse, error) {
	return acp.ResumeSessionResponse{}, acp.NewMethodNotFound(acp.AgentMethodSessionResume)
}

func (a *agent) SetSessionConfigOption(context.Context, acp.SetSessionConfigOptionRequest) (acp.SetSessionConfigOptionResponse, error) {
	return acp.SetSessionConfigOptionResponse{}, acp.NewMethodNotFound(acp.AgentMethodSessionSetConfigOption)
}

type session struct {
	id    acp.SessionId
	tools *toolbox
	cwd   string // where @write and @sh work

	mu      sync.Mutex
	mode    acp.SessionModeId
	model   string // "": Models[0]
	prompts int    // prompts this session received
}

func (s *session) currentMode() acp.SessionModeId {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.mode
}

func (s *session) setMode(m acp.SessionModeId) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.mode = m
}

// prompted counts a prompt and returns its number in the session.
func (s *session) prompted() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.prompts++
	return s.prompts
}

func (s *session) String() string { return fmt.Sprint(s.id) }
