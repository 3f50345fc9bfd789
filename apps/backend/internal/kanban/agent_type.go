package kanban

import (
	"context"
	"time"
)

// AgentDetection is what a backend knows of one agent type it can
// launch: its launch metadata (never its environment values), whether it
// is installed here, and the models and modes its ACP sessions offered.
type AgentDetection struct {
	Name        string `json:"name"`
	DisplayName string `json:"display_name"`
	// Method is how it is detected: "acp" (an ACP initialize probe of its
	// npx launch, run with --no --offline: it never downloads), "path" (its binary looked up on
	// PATH, then probed), "self" (the kandev binary).
	Method string `json:"method"`
	// Command and Args launch it (server-side metadata only).
	Command string   `json:"command"`
	Args    []string `json:"args,omitempty"`
	Package string   `json:"package,omitempty"`
	// Install is the command that installs it.
	Install string `json:"install"`
	// ModelEnv are the variables it reads for its model API; ModelFlag
	// and ModelVar how a profile's model reaches it besides ACP.
	ModelEnv  []string `json:"model_env,omitempty"`
	ModelFlag string   `json:"model_flag,omitempty"`
	ModelVar  string   `json:"model_var,omitempty"`
	Custom    bool     `json:"custom,omitempty"`
	// Status is "installed", "not_installed" or "unknown" (not probed
	// yet); Version is what its initialize answered; Detail says why it
	// is not installed.
	Status    string     `json:"status"`
	Version   string     `json:"version,omitempty"`
	Detail    string     `json:"detail,omitempty"`
	CheckedAt *time.Time `json:"checked_at,omitempty"`
	// Models and Modes are what its last ACP session offered (ids), and
	// when (nil: no session of it was ever seen on this database).
	Models    []AgentModel `json:"models,omitempty"`
	Modes     []string     `json:"modes,omitempty"`
	OfferedAt *time.Time   `json:"offered_at,omitempty"`
}

// AgentModel is one model an agent offers.
type AgentModel struct {
	ID   string `json:"id"`
	Name string `json:"name,omitempty"`
}

// Bounds of what is kept of an agent session's offer: its models, and its
// modes, at most MaxAgentOffered each, every id and name clipped to
// MaxAgentOfferedLen bytes.
const (
	MaxAgentOffered    = 200
	MaxAgentOfferedLen = 200
)

// AgentOffer is what an agent type's last ACP session offered: its models
// and modes, kept in the database so that a restarted backend (or any
// backend of a shared database) offers them on the board before the
// agent's next session.
type AgentOffer struct {
	Agent     string       `json:"agent"`
	Models    []AgentModel `json:"models"`
	Modes     []string     `json:"modes"`
	OfferedAt time.Time    `json:"offered_at"`
}

// ClipOffer bounds an offer: at most MaxAgentOffered models and modes,
// every id and name clipped to MaxAgentOfferedLen bytes.
func ClipOffer(o AgentOffer) AgentOffer {
	models := make([]AgentModel, 0, min(len(o.Models), MaxAgentOffered))
	for _, m := range o.Models[:min(len(o.Models), MaxAgentOffered)] {
		models = append(models, AgentModel{ID: Clip(m.ID, MaxAgentOfferedLen), Name: Clip(m.Name, MaxAgentOfferedLen)})
	}
	modes := make([]string, 0, min(len(o.Modes), MaxAgentOffered))
	for _, m := range o.Modes[:min(len(o.Modes), MaxAgentOffered)] {
		modes = append(modes, Clip(m, MaxAgentOfferedLen))
	}
	o.Models, o.Modes = models, modes
	return o
}

// AgentOfferService keeps agents' offers.
type AgentOfferService interface {
	// SetAgentOffer replaces the agent type's offer.
	SetAgentOffer(ctx context.Context, o AgentOffer) error
	// AgentOffers returns the offers of the agent types named (at most
	// MaxLimit names; those never offered are absent).
	AgentOffers(ctx context.Context, agents []string) ([]AgentOffer, error)
}

// Agent detection states.
const (
	AgentInstalled    = "installed"
	AgentNotInstalled = "not_installed"
	AgentUnknown      = "unknown"
)

// AgentTypeName names an agent type whose agents row must exist.
type AgentTypeName struct {
	Name        string
	DisplayName string
}
