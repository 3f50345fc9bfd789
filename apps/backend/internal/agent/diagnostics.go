package agent

import (
	"maps"
	"os"
	"slices"
	"strings"
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
	// EnvAllow is what agents may inherit of the backend's environment;
	// EnvInherited the names (only) of the variables they inherit now.
	EnvAllow     []string `json:"env_allow"`
	EnvInherited []string `json:"env_inherited"`
}

// Report returns the runtime's load and configuration.
func (m *Manager) Report() Report {
	m.mu.Lock()
	running, queued := m.active, len(m.queue)
	m.mu.Unlock()
	var names []string
	for _, kv := range agentEnv(os.Environ(), m.cfg.EnvAllow) {
		k, _, _ := strings.Cut(kv, "=")
		names = append(names, k)
	}
	slices.Sort(names)
	return Report{Running: running, Queued: queued, MaxAgents: m.cfg.MaxAgents,
		Commands: maps.Clone(m.cfg.Commands), EnvAllow: slices.Clone(m.cfg.EnvAllow), EnvInherited: names}
}

// StderrTail returns the end of a live session's agent stderr (at most
// the 8 KiB the runtime keeps), redacted as the runtime redacts what it
// records; "" when the session has no live run.
func (m *Manager) StderrTail(sessionID string) string {
	r := m.lookup(sessionID)
	if r == nil {
		return ""
	}
	return stderrEnd(r.launched.Load(), stderrKeep)
}
