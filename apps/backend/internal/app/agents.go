package app

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/kandev/kandev/apps/backend/internal/agent"
	"github.com/kandev/kandev/apps/backend/internal/docker"
	"github.com/kandev/kandev/apps/backend/internal/fsguard"
	"github.com/kandev/kandev/apps/backend/internal/kanban"
	"github.com/kandev/kandev/apps/backend/internal/mcp/toolserver"
)

// AgentsConfig configures how `kandev serve` runs agents.
type AgentsConfig struct {
	// Launch makes sessions that tasks start run their agents. Off, they
	// wait for agents an operator connects by hand.
	Launch bool
	// MaxAgents bounds the agents that run at once (default 4).
	MaxAgents int
	// File is the operator's agents file: launch overrides of built-in
	// agent types and custom ones (default: the data dir's agents.json,
	// when present).
	File string
	// EnvAllow replaces the default list of environment variables agents
	// inherit (names, or prefixes ending in "*"); nil keeps the default.
	EnvAllow []string
	// Executable is the kandev binary agents' MCP servers and the mock
	// agent run from (default: this process's executable).
	Executable string
	// StopGrace is the time between SIGTERM and SIGKILL (default 5s).
	StopGrace time.Duration
	// StartTimeout bounds an agent's ACP initialize and session/new
	// (default 2m); SilenceTimeout fails a session whose agent sends
	// nothing for that long during a turn (default 30m).
	StartTimeout, SilenceTimeout time.Duration
	// Docker runs the Docker executor's containers (default: the docker
	// CLI on PATH, with the backend's DOCKER_HOST; none: Docker profiles
	// fail to launch, saying so).
	Docker *docker.Client
}

// runtimeDeps are the parts the agent runtime is built from.
type runtimeDeps struct {
	store     kanban.Store
	pub       kanban.Publisher
	events    *kanban.DomainEvents
	guard     *fsguard.Policy
	token     string // the operator token, redacted from what agents print
	backendID string
	url       string // where the backend listens: sessions' MCP servers connect there
	clones    agent.Clones
	// secret resolves "secret:NAME" references (the named secrets).
	secret func(ctx context.Context, ref string) (string, error)
}

// newRuntime builds the agent runtime of a backend, living within ctx, or
// nil when it launches no agents.
func newRuntime(ctx context.Context, cfg Config, d runtimeDeps) (*agent.Manager, error) {
	a := cfg.Agents
	file := a.File
	if file == "" {
		file = filepath.Join(cfg.DataDir, agent.AgentsFile)
	}
	types, err := agent.LoadTypes(file)
	if err != nil {
		return nil, err
	}
	// Every agent type has its row (and so its profiles), launched here
	// or not: another backend of the same database may launch it.
	names := make([]kanban.AgentTypeName, 0, len(types))
	for _, t := range types {
		names = append(names, kanban.AgentTypeName{Name: t.Name, DisplayName: t.DisplayName})
	}
	if err := d.store.EnsureAgents(ctx, names); err != nil {
		return nil, fmt.Errorf("add the agent types: %w", err)
	}
	if !a.Launch {
		return nil, nil
	}
	exe := a.Executable
	if exe == "" {
		if exe, err = os.Executable(); err != nil {
			return nil, fmt.Errorf("locate the kandev binary: %w", err)
		}
	}
	return agent.New(ctx, agent.Config{
		BackendURL: d.url, Store: d.store, Publisher: d.pub, Events: d.events, Logger: cfg.Logger, Guard: d.guard,
		Executable: exe, Version: toolserver.Version, Types: types, EnvAllow: a.EnvAllow, MaxAgents: a.MaxAgents, PermissionWait: cfg.QuestionWait,
		StopGrace: a.StopGrace, OperatorToken: d.token, StartTimeout: a.StartTimeout, SilenceTimeout: a.SilenceTimeout,
		BackendID: d.backendID, LeaseTTL: cfg.LeaseTTL, Clones: d.clones,
		Docker: cmp.Or(a.Docker, docker.New()), Secret: d.secret,
	}), nil
}

// startAgents resumes what a previous process left running.
func (b *backend) startAgents() error {
	if b.agents == nil {
		return nil
	}
	return b.agents.Resume(b.life.ctx)
}

// stopAgents stops every agent (their sessions resume on the next start)
// and waits for them, bounded by ctx.
func (b *backend) stopAgents(ctx context.Context) {
	if b.agents == nil {
		return
	}
	if err := b.agents.Shutdown(ctx); err != nil {
		b.log.Warn("stop agents", "err", err)
	}
}
