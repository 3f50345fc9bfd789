package agent

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// ProbeConfig configures ProbeTypes.
type ProbeConfig struct {
	// Executable is the kandev binary (the built-in mock agent's command).
	Executable string
	// Version is the client version the probes announce.
	Version string
	// Timeout bounds each probe (default 45s).
	Timeout time.Duration
	// EnvAllow is what the probes inherit of this environment
	// (DefaultEnvAllow when nil).
	EnvAllow []string
}

// ProbeTypes detects each of types as a runtime's detection does — its
// binary on PATH, then an ACP initialize bounded by cfg.Timeout — without
// a runtime (kandev doctor), probeParallel at a time; the detections come
// in the order of types.
func ProbeTypes(ctx context.Context, types []Type, cfg ProbeConfig) []kanban.AgentDetection {
	c := Config{Executable: cfg.Executable, Version: cfg.Version, ProbeTimeout: cfg.Timeout, EnvAllow: cfg.EnvAllow, Types: types}
	if c.ProbeTimeout <= 0 {
		c.ProbeTimeout = defaultProbeTimeout
	}
	m := &Manager{cfg: c, acpLog: slog.New(slog.DiscardHandler)}
	out := make([]kanban.AgentDetection, len(types))
	sem := make(chan struct{}, probeParallel)
	var wg sync.WaitGroup
	for i, t := range types {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			out[i] = m.probe(ctx, t)
		}()
	}
	wg.Wait()
	return out
}
