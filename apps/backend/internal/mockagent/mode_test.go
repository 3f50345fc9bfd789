package mockagent

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	acp "github.com/coder/acp-go-sdk"
)

// acpClient is the ACP client side of a test: it keeps the agent's messages
// and mode updates.
type acpClient struct {
	mu       sync.Mutex
	messages []string
	modes    []acp.SessionModeId
	// tools are the tool call updates with a status (the end of a call).
	tools []acp.SessionToolCallUpdate
}

func (c *acpClient) SessionUpdate(_ context.Context, n acp.SessionNotification) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch u := n.Update; {
	case u.AgentMessageChunk != nil && u.AgentMessageChunk.Content.Text != nil:
		c.messages = append(c.messages, u.AgentMessageChunk.Content.Text.Text)
	case u.CurrentModeUpdate != nil:
		c.modes = append(c.modes, u.CurrentModeUpdate.CurrentModeId)
	case u.ToolCallUpdate != nil && u.ToolCallUpdate.Status != nil:
		c.tools = append(c.tools, *u.ToolCallUpdate)
	}
	return nil
}

// said returns what the agent said since the last call, joined.
func (c *acpClient) said() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := strings.Join(c.messages, "")
	c.messages = nil
	return s
}

func (c *acpClient) RequestPermission(context.Context, acp.RequestPermissionRequest) (acp.RequestPermissionResponse, error) {
	return acp.RequestPermissionResponse{Outcome: acp.RequestPermissionOutcome{Cancelled: &acp.RequestPermissionOutcomeCancelled{}}}, nil
}
func (c *acpClient) ReadTextFile(context.Context, acp.ReadTextFileRequest) (acp.ReadTextFileResponse, error) {
	return acp.ReadTextFileResponse{}, acp.NewMethodNotFound(acp.ClientMethodFsReadTextFile)
}
func (c *acpClient) WriteTextFile(context.Context, acp.WriteTextFileRequest) (acp.WriteTextFileResponse, error) {
	return acp.WriteTextFileResponse{}, acp.NewMethodNotFound(acp.ClientMethodFsWriteTextFile)
}
func (c *acpClient) CreateTerminal(context.Context, acp.CreateTerminalRequest) (acp.CreateTerminalResponse, error) {
	return acp.CreateTerminalResponse{}, acp.NewMethodNotFound(acp.ClientMethodTerminalCreate)
}
func (c *acpClient) KillTerminal(context.Context, acp.KillTerminalRequest) (acp.KillTerminalResponse, error) {
	return acp.KillTerminalResponse{}, acp.NewMethodNotFound(acp.ClientMethodTerminalKill)
}
func (c *acpClient) TerminalOutput(context.Context, acp.TerminalOutputRequest) (acp.TerminalOutputResponse, error) {
	return acp.TerminalOutputResponse{}, acp.NewMethodNotFound(acp.ClientMethodTerminalOutput)
}
func (c *acpClient) ReleaseTerminal(context.Context, acp.ReleaseTerminalRequest) (acp.ReleaseTerminalResponse, error) {
	return acp.ReleaseTerminalResponse{}, acp.NewMethodNotFound(acp.ClientMethodTerminalRelease)
}
func (c *acpClient) WaitForTerminalExit(context.Context, acp.WaitForTerminalExitRequest) (acp.WaitForTerminalExitResponse, error) {
	return acp.WaitForTerminalExitResponse{}, acp.NewMethodNotFound(acp.ClientMethodTerminalWaitForExit)
}

// connect runs the mock agent on pipes and returns a client connection to
// it with one new session; the agent stops when the test ends.
func connect(tb testing.TB, o Options) (*acp.ClientSideConnection, *acpClient, acp.NewSessionResponse) {
	tb.Helper()
	return connectIn(tb, o, tb.TempDir())
}

// connectIn is connect with the session's working directory dir.
func connectIn(tb testing.TB, o Options, dir string) (*acp.ClientSideConnection, *acpClient, acp.NewSessionResponse) {
	tb.Helper()
	toAgent, agentIn := io.Pipe()
	agentOut, fromAgent := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = Run(ctx, toAgent, fromAgent, o)
	}()
	tb.Cleanup(func() {
		cancel()
		_ = agentIn.Close()
		_ = fromAgent.Close()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			tb.Error("the mock agent did not stop")
		}
	})
	c := &acpClient{}
	conn := acp.NewClientSideConnection(c, agentIn, agentOut)
	conn.SetLogger(slog.New(slog.DiscardHandler))
	if _, err := conn.Initialize(ctx, acp.InitializeRequest{ProtocolVersion: acp.ProtocolVersionNumber}); err != nil {
		tb.Fatal(err)
	}
	ns, err := conn.NewSession(ctx, acp.NewSessionRequest{Cwd: dir, McpServers: []acp.McpServer{}})
	if err != nil {
		tb.Fatal(err)
	}
	return conn, c, ns
}

func prompt(tb testing.TB, conn *acp.ClientSideConnection, sid acp.SessionId, text string) {
	tb.Helper()
	if _, err := conn.Prompt(context.Background(), acp.PromptRequest{SessionId: sid, Prompt: []acp.ContentBlock{acp.TextBlock(text)}}); err != nil {
		tb.Fatal(err)
	}
}

// TestModes: sessions start in default with default and plan offered;
// session/set_mode switches (an unknown mode is refused and changes
// nothing); @mode ID switches by itself and tells the client; @session
// counts the session's prompts.
func TestModes(t *testing.T) {
	t.Parallel()
	conn, c, ns := connect(t, Options{})
	if ns.Modes == nil || ns.Modes.CurrentModeId != modeDefault || len(ns.Modes.AvailableModes) != 2 {
		t.Fatalf("modes %+v", ns.Modes)
	}
	ctx := context.Background()
	if _, err := conn.SetSessionMode(ctx, acp.SetSessionModeRequest{SessionId: ns.SessionId, ModeId: "yolo"}); err == nil {
		t.Fatal("an unknown mode was accepted")
	}
	prompt(t, conn, ns.SessionId, "@mode")
	if got := c.said(); got != "mode: default\n" {
		t.Fatalf("got %q, want mode: default", got)
	}
	if _, err := conn.SetSessionMode(ctx, acp.SetSessionModeRequest{SessionId: ns.SessionId, ModeId: modePlan}); err != nil {
		t.Fatal(err)
	}
	prompt(t, conn, ns.SessionId, "@mode\n@session")
	if got, want := c.said(), "mode: plan\nsession: "+string(ns.SessionId)+", prompt 2\n"; got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
	prompt(t, conn, ns.SessionId, "@mode default")
	if got := c.said(); got != "mode: default\n" || len(c.modes) != 1 || c.modes[0] != modeDefault {
		t.Fatalf("self switch: said %q, updates %v", got, c.modes)
	}
	other, err := conn.NewSession(ctx, acp.NewSessionRequest{Cwd: t.TempDir(), McpServers: []acp.McpServer{}})
	if err != nil || other.SessionId == ns.SessionId || other.Modes.CurrentModeId != modeDefault {
		t.Fatalf("second session %+v, %v", other, err)
	}
	prompt(t, conn, other.SessionId, "@session")
	if got, want := c.said(), "session: "+string(other.SessionId)+", prompt 1\n"; got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
}

// TestNoModes: with NoModes the agent offers none and refuses set_mode.
func TestNoModes(t *testing.T) {
	t.Parallel()
	conn, c, ns := connect(t, Options{NoModes: true})
	if ns.Modes != nil {
		t.Fatalf("modes %+v", ns.Modes)
	}
	if _, err := conn.SetSessionMode(context.Background(), acp.SetSessionModeRequest{SessionId: ns.SessionId, ModeId: modePlan}); err == nil {
		t.Fatal("set_mode accepted")
	}
	prompt(t, conn, ns.SessionId, "@mode")
	if got := c.said(); !strings.HasPrefix(got, "mode: none") {
		t.Fatalf("got %q", got)
	}
}

// TestPromptDirective: @prompt says the blocks and their first lines.
func TestPromptDirective(t *testing.T) {
	t.Parallel()
	conn, c, ns := connect(t, Options{})
	_, err := conn.Prompt(context.Background(), acp.PromptRequest{SessionId: ns.SessionId, Prompt: []acp.ContentBlock{
		acp.TextBlock("<kandev-system>PLAN MODE ACTIVE:\nmore"), acp.TextBlock("Step prompt\n@prompt")}})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := c.said(), "prompt: 2 text blocks\n1: <kandev-system>PLAN MODE ACTIVE:\n2: Step prompt\n"; got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
}

// BenchmarkSetMode is one ACP session/set_mode round trip to the mock
// agent over pipes; BenchmarkPromptBaseline, an empty prompt turn on the
// same transport, is its baseline.
func BenchmarkSetMode(b *testing.B) {
	conn, _, ns := connect(b, Options{})
	modes := []acp.SessionModeId{modePlan, modeDefault}
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		if _, err := conn.SetSessionMode(context.Background(), acp.SetSessionModeRequest{SessionId: ns.SessionId, ModeId: modes[i%2]}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkPromptBaseline(b *testing.B) {
	conn, _, ns := connect(b, Options{})
	b.ResetTimer()
	for b.Loop() {
		prompt(b, conn, ns.SessionId, "")
	}
}
