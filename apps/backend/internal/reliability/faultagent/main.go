// Command faultagent is a misbehaving ACP agent for the reliability
// scenarios (never shipped): it initializes and opens sessions like any
// agent, then does what its prompt's first "@" line says:
//
//	@flood-updates MIB   stream MIB MiB of agent message and thought chunks, then end the turn
//	@flood-stdout        write non-JSON lines to stdout without end
//	@huge-line           write one 20 MiB line (over the client's line limit)
//	@flood-stderr MIB    write MIB MiB to stderr, then exit 3
//	@hang                never answer the prompt, never write
//	@ignore-term         ignore SIGTERM and keep sending thoughts, never ending the turn
//	@cancel-twice        end the turn (cancelled) only at the second session/cancel,
//	                     as an agent that got the first one before the prompt
//
// With --hang-initialize it never answers initialize.
package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	acp "github.com/coder/acp-go-sdk"
)

func main() {
	hangInit := flag.Bool("hang-initialize", false, "never answer initialize")
	flag.Parse()
	a := &agent{hangInit: *hangInit, cancels: make(chan struct{}, 16)}
	a.conn = acp.NewAgentSideConnection(a, os.Stdout, os.Stdin)
	<-a.conn.Done()
}

type agent struct {
	hangInit bool
	conn     *acp.AgentSideConnection
	cancels  chan struct{} // one per session/cancel
}

func (a *agent) Initialize(ctx context.Context, _ acp.InitializeRequest) (acp.InitializeResponse, error) {
	if a.hangInit {
		select {}
	}
	return acp.InitializeResponse{ProtocolVersion: acp.ProtocolVersionNumber,
		AgentInfo: &acp.Implementation{Name: "faultagent", Version: "1"}, AuthMethods: []acp.AuthMethod{}}, nil
}

func (a *agent) Authenticate(context.Context, acp.AuthenticateRequest) (acp.AuthenticateResponse, error) {
	return acp.AuthenticateResponse{}, nil
}

func (a *agent) NewSession(context.Context, acp.NewSessionRequest) (acp.NewSessionResponse, error) {
	return acp.NewSessionResponse{SessionId: "fault-1"}, nil
}

func (a *agent) Prompt(ctx context.Context, req acp.PromptRequest) (acp.PromptResponse, error) {
	verb, mib := command(req.Prompt)
	switch verb {
	case "@flood-updates":
		if err := a.floodUpdates(ctx, req.SessionId, mib); err != nil {
			return acp.PromptResponse{}, err
		}
		return acp.PromptResponse{StopReason: acp.StopReasonEndTurn}, nil
	case "@flood-stdout":
		line := bytes.Repeat([]byte("not json "), 100)
		line = append(line, '\n')
		for {
			if _, err := os.Stdout.Write(line); err != nil {
				select {}
			}
		}
	case "@huge-line":
		_, _ = os.Stdout.Write(bytes.Repeat([]byte("x"), 20<<20))
		select {}
	case "@flood-stderr":
		buf := bytes.Repeat([]byte("stderr flood line\n"), 1<<16/18)
		for n := 0; n < mib<<20; n += len(buf) {
			_, _ = os.Stderr.Write(buf)
		}
		os.Exit(3)
	case "@cancel-twice":
		<-a.cancels
		<-a.cancels
		return acp.PromptResponse{StopReason: acp.StopReasonCancelled}, nil
	case "@ignore-term":
		signal.Ignore(syscall.SIGTERM)
		// Busy, not silent: a thought every half second, whatever the
		// client says (session/cancel included), until it kills us.
		tick := time.NewTicker(500 * time.Millisecond)
		for {
			select {
			case <-a.conn.Done():
				os.Exit(0)
			case <-tick.C:
				_ = a.conn.SessionUpdate(context.WithoutCancel(ctx), acp.SessionNotification{SessionId: req.SessionId,
					Update: acp.UpdateAgentThoughtText("still working")})
			}
		}
	}
	select {}
}

// command is the prompt's first line starting with @ (the verb) and its
// number argument (MiB).
func command(prompt []acp.ContentBlock) (verb string, mib int) {
	var text strings.Builder
	for _, b := range prompt {
		if b.Text != nil {
			text.WriteString(b.Text.Text + "\n")
		}
	}
	for _, line := range strings.Split(text.String(), "\n") {
		if strings.HasPrefix(line, "@") {
			_, _ = fmt.Sscanf(line, "%s %d", &verb, &mib)
			break
		}
	}
	return verb, mib
}

// floodUpdates sends about mib MiB of session updates.
func (a *agent) floodUpdates(ctx context.Context, session acp.SessionId, mib int) error {
	chunk := strings.Repeat("flood ", 64<<10/6)
	for i := range mib * 16 {
		// Alternating messages and thoughts makes each chunk a message
		// of its own, so the flood meets the session's recording limit.
		u := acp.UpdateAgentMessageText(chunk)
		if i%2 == 1 {
			u = acp.UpdateAgentThoughtText(chunk)
		}
		if err := a.conn.SessionUpdate(ctx, acp.SessionNotification{SessionId: session, Update: u}); err != nil {
			return err
		}
	}
	return nil
}

func (a *agent) Cancel(context.Context, acp.CancelNotification) error {
	select {
	case a.cancels <- struct{}{}:
	default:
	}
	return nil
}

func (a *agent) CloseSession(context.Context, acp.CloseSessionRequest) (acp.CloseSessionResponse, error) {
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

func (a *agent) SetSessionMode(context.Context, acp.SetSessionModeRequest) (acp.SetSessionModeResponse, error) {
	return acp.SetSessionModeResponse{}, acp.NewMethodNotFound(acp.AgentMethodSessionSetMode)
}
