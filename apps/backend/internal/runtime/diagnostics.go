package runtime

import (
	"maps"
	"slices"
)

// stderrKeep is how much of an agent's stderr a run keeps.
const stderrKeep = 8 << 10

// Report is what a diagnostic bundle shows of the runtime: its load and
// its configuration (command names and arguments, environment names;
// never environment values).
type Report struct {
	Running   int                `json:"running"`
	Queued    int                `json:"queued"`
	MaxAgents int                `json:"max_agents"`
	Commands  map[string]Command `json:"commands"`
	// EnvAllow is what agents may inherit of the backend's environment.
	EnvAllow []string `json:"env_allow"`
}

// Report returns the runtime's load and configuration.
func (m *Manager) Report() Report {
	m.mu.Lock()
	running, queued := m.active, len(m.queue)
	m.mu.Unlock()
	return Report{Running: running, Queued: queued, MaxAgents: m.cfg.MaxAgents,
		Commands: maps.Clone(m.cfg.Commands), EnvAllow: slices.Clone(m.cfg.EnvAllow)}
}

// StderrTail returns the end of a live session's agent stderr (at most
// the 8 KiB the runtime keeps), redacted as the runtime redacts what it
// records; "" when the session has no live run.
func (m *Manager) StderrTail(sessionID string) string {
	r := m.lookup(sessionID)
	if r == nil {
		return ""
	}
	return r.stderrEnd(stderrKeep)
}
