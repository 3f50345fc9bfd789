package app

import (
	"context"

	"github.com/kandev/kandev/apps/backend/internal/flow"
	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// newFlow builds the workflow engine of a backend and connects it to the
// action layer (task moves) and the runtime (agent turns).
func (b *backend) newFlow(cfg Config) {
	b.flow = flow.New(flow.Config{Store: b.store, Service: b.svc, Logger: cfg.Logger, Clock: cfg.Clock, SweepInterval: cfg.ArchiveSweep,
		Once: b.shared.once()})
	b.svc.SetWorkflow(b.flow)
}

// onTurn forwards the runtime's turn events to the engine (set once the
// engine exists; the runtime starts no agent before the backend serves).
func (b *backend) onTurn(ev kanban.TurnEvent) {
	if b.flow != nil {
		b.flow.Turn(ev)
	}
}

// runFlow runs the engine's auto-archive sweeps until ctx ends.
func (b *backend) runFlow(ctx context.Context) {
	go b.flow.Run(ctx)
}

// stopFlow lets running automations finish, bounded by ctx.
func (b *backend) stopFlow(ctx context.Context) {
	b.flow.Close(ctx)
}
