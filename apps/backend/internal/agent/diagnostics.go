package agent

import (
	"os"
	"slices"
	"strings"

	"github.com/kandev/kandev/apps/backend/internal/redact"
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
	for _, kv := range agentEnv(os.Environ(), m.envAllow(nil)) {
		k, _, _ := strings.Cut(kv, "=")
		names = append(names, k)
	}
	slices.Sort(names)
	return Report{Running: running, Queued: queued, MaxAgents: m.cfg.MaxAgents,
		Commands: m.commands(), EnvAllow: slices.Clone(m.envAllow(nil)), EnvInherited: names}
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

// commands are the launch commands by agent type.
func (m *Manager) commands() map[string]Command {
	out := make(map[string]Command, len(m.types))
	for name, t := range m.types {
		out[name] = Command{Path: t.Command.Path, Args: slices.Clone(t.Command.Args)}
	}
	return out
}

// SafeArgs is args with the value after a secret-named flag ("--api-key
// V") replaced; "--api-key=V" is the redactor's to catch.
func SafeArgs(args []string) []string {
	out := slices.Clone(args)
	for i := 1; i < len(out); i++ {
		if strings.HasPrefix(args[i-1], "-") && !strings.Contains(args[i-1], "=") && redact.SecretName(args[i-1]) {
			out[i] = redact.Mark
		}
	}
	return out
}
