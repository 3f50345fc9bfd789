package mockagent

import (
	"context"
	"slices"

	acp "github.com/coder/acp-go-sdk"
)

// Models are the models the mock agent offers in every session (ACP
// session/new "models"), the first being a new session's; it answers
// session/set_model for them and refuses any other. @model says the
// session's model.
var Models = []string{"mock-fast", "mock-smart"}

// modelState is what a session/new or session/load answer says of models.
func modelState(s *session) *acp.SessionModelState {
	st := &acp.SessionModelState{CurrentModelId: acp.ModelId(s.currentModel())}
	for _, m := range Models {
		st.AvailableModels = append(st.AvailableModels, acp.ModelInfo{ModelId: acp.ModelId(m), Name: "Mock " + m[len("mock-"):]})
	}
	return st
}

// UnstableSetSessionModel switches the session to one of Models.
func (a *agent) UnstableSetSessionModel(_ context.Context, req acp.UnstableSetSessionModelRequest) (acp.UnstableSetSessionModelResponse, error) {
	s, err := a.session(req.SessionId)
	if err != nil {
		return acp.UnstableSetSessionModelResponse{}, err
	}
	if !slices.Contains(Models, string(req.ModelId)) {
		return acp.UnstableSetSessionModelResponse{}, acp.NewInvalidParams(map[string]any{"error": "unknown model"})
	}
	s.mu.Lock()
	s.model = string(req.ModelId)
	s.mu.Unlock()
	return acp.UnstableSetSessionModelResponse{}, nil
}

func (s *session) currentModel() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.model == "" {
		return Models[0]
	}
	return s.model
}
