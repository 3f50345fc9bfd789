package mockagent

import (
	"context"

	acp "github.com/coder/acp-go-sdk"
)

// The session modes the mock agent offers (unless Options.NoModes): it
// starts every session in default.
const (
	modeDefault acp.SessionModeId = "default"
	modePlan    acp.SessionModeId = "plan"
)

var mockModes = []acp.SessionMode{
	{Id: modeDefault, Name: "Default", Description: acp.Ptr("Works on the task.")},
	{Id: modePlan, Name: "Plan", Description: acp.Ptr("Plans only; changes nothing.")},
}

// modeState is what a session/new or session/load answer says of modes.
func (a *agent) modeState(s *session) *acp.SessionModeState {
	if a.opts.NoModes {
		return nil
	}
	return &acp.SessionModeState{AvailableModes: mockModes, CurrentModeId: s.currentMode()}
}

func knownMode(id acp.SessionModeId) bool {
	for _, m := range mockModes {
		if m.Id == id {
			return true
		}
	}
	return false
}

// SetSessionMode switches a session to one of the modes it offers.
func (a *agent) SetSessionMode(_ context.Context, req acp.SetSessionModeRequest) (acp.SetSessionModeResponse, error) {
	if a.opts.NoModes {
		return acp.SetSessionModeResponse{}, acp.NewMethodNotFound(acp.AgentMethodSessionSetMode)
	}
	s, err := a.session(req.SessionId)
	if err != nil {
		return acp.SetSessionModeResponse{}, err
	}
	if !knownMode(req.ModeId) {
		return acp.SetSessionModeResponse{}, acp.NewInvalidParams(map[string]any{"error": "unknown mode"})
	}
	s.setMode(req.ModeId)
	return acp.SetSessionModeResponse{}, nil
}

// mode says the session's mode (@mode), or switches to one by itself and
// tells the client with a current_mode_update (@mode ID).
func (t *turn) mode(arg string) {
	if t.a.opts.NoModes {
		t.say("mode: none (this agent offers no session modes)\n")
		return
	}
	if arg == "" {
		t.say("mode: " + string(t.s.currentMode()) + "\n")
		return
	}
	id := acp.SessionModeId(arg)
	if !knownMode(id) {
		t.say("mock agent: @mode takes default or plan")
		return
	}
	t.s.setMode(id)
	t.update(acp.SessionUpdate{CurrentModeUpdate: &acp.SessionCurrentModeUpdate{CurrentModeId: id, SessionUpdate: "current_mode_update"}})
	t.say("mode: " + arg + "\n")
}
