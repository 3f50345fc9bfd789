package kanban

import "time"

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
	// when (nil: no session seen since this backend started).
	Models    []AgentModel `json:"models,omitempty"`
	Modes     []string     `json:"modes,omitempty"`
	OfferedAt *time.Time   `json:"offered_at,omitempty"`
}

// AgentModel is one model an agent offers.
type AgentModel struct {
	ID   string `json:"id"`
	Name string `json:"name,omitempty"`
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
