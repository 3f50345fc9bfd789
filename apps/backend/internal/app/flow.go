package app

import (
	"github.com/kandev/kandev/apps/backend/internal/flow"
)

// newFlow builds the workflow engine of a backend, reacting to the domain
// events of the action layer (task moves) and the runtime (agent turns).
func (b *backend) newFlow(cfg Config) {
	b.flow = flow.New(b.life.ctx, flow.Config{Store: b.store, Service: b.svc, Logger: cfg.Logger, Clock: cfg.Clock, SweepInterval: cfg.ArchiveSweep,
		Once: b.shared.once(), Events: b.events})
}

// runFlow runs the engine's auto-archive sweeps until the backend stops.
func (b *backend) runFlow() {
	go b.flow.Run(b.life.ctx)
}
