package app

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"time"

	"github.com/kandev/kandev/apps/backend/internal/action"
	"github.com/kandev/kandev/apps/backend/internal/cluster"
	"github.com/kandev/kandev/apps/backend/internal/kanban"
	"github.com/kandev/kandev/apps/backend/internal/store"
)

// listenWait bounds how long a starting backend waits to listen for the
// other backends' events before it gives up.
const listenWait = 30 * time.Second

// shared is what a backend on a PostgreSQL database shares with the other
// backends on it (nil parts on SQLite, where one process owns the data).
type shared struct {
	id      string // this backend, as the owner of its sessions
	st      *store.Store
	log     *slog.Logger
	beat    time.Duration
	ttl     time.Duration
	bus     *cluster.Bus
	members *cluster.Members
	stopBus context.CancelFunc
}

// newShared builds the bus of a backend on PostgreSQL (nil on SQLite);
// start runs it once the backend listens.
func newShared(cfg Config, st *store.Store, local kanban.Publisher) *shared {
	sh := &shared{id: kanban.NewID(), st: st, log: cfg.Logger, beat: cfg.LeaseBeat, ttl: cfg.LeaseTTL}
	if sh.ttl <= 0 {
		sh.ttl = cluster.DefaultTTL
	}
	if st.Engine() == store.Postgres {
		sh.bus = cluster.NewBus(st, local, sh.id, cfg.Logger)
		sh.members = cluster.NewMembers(cluster.MembersConfig{Store: st, ID: sh.id, Beat: sh.beat, TTL: sh.ttl, Log: cfg.Logger})
	}
	return sh
}

// start relays events and begins this backend's lease, before its agents
// resume: takeOver (the runtime's Resume; nil without agents) then runs
// after every renewal.
func (sh *shared) start(ctx context.Context, url string, takeOver func(context.Context) error) error {
	if sh.bus == nil {
		return nil
	}
	busCtx, stop := context.WithCancel(context.WithoutCancel(ctx))
	sh.stopBus = stop
	go sh.bus.Run(busCtx)
	fail := func(err error) error {
		stop()
		<-sh.bus.Done()
		sh.stopBus = nil
		return err
	}
	select {
	case <-sh.bus.Listening():
	case <-time.After(listenWait):
		return fail(fmt.Errorf("could not listen for the other backends' events within %s", listenWait))
	case <-ctx.Done():
		return fail(ctx.Err())
	}
	if err := sh.members.Start(ctx, url, takeOver); err != nil {
		return fail(err)
	}
	go sh.members.Run(busCtx)
	return nil
}

// stop ends the lease (after the agents stopped: the others take over
// their sessions at once) and the bus, once it has sent what is queued.
func (sh *shared) stop(ctx context.Context) {
	if sh.bus == nil || sh.stopBus == nil {
		return
	}
	if err := sh.members.Stop(ctx); err != nil {
		sh.log.Warn("cluster: end lease", "err", err)
	}
	sh.stopBus()
	select {
	case <-sh.bus.Done():
	case <-ctx.Done():
	}
}

// publisher is where the backend's events go: the bus, or this process's
// subscribers alone.
func (sh *shared) publisher(local kanban.Publisher) kanban.Publisher {
	if sh.bus == nil {
		return local
	}
	return sh.bus
}

// agents is the runtime as the rest of the backend sees it: the local one
// (action.NoAgents when this backend runs none), relayed to the other
// backends on PostgreSQL.
func (sh *shared) agents(local action.Agents) action.Agents {
	if sh.bus == nil {
		return local
	}
	return cluster.NewRelay(local, sh.bus)
}

// wire connects what other backends do to this backend's waiters: a
// question answered through another backend wakes the question.ask
// waiting here.
func (sh *shared) wire(svc *action.Service) {
	if sh.bus == nil {
		return
	}
	sh.bus.Handle(kanban.EventQuestionAnswered.Name(), func(p json.RawMessage) {
		var q struct {
			ID string `json:"id"`
		}
		if json.Unmarshal(p, &q) == nil && q.ID != "" {
			svc.WakeQuestion(q.ID)
		}
	})
}

// once is the workflow engine's guard of work that runs on one backend
// at a time (nil on SQLite).
func (sh *shared) once() func(ctx context.Context, name string, fn func()) {
	if sh.bus == nil {
		return nil
	}
	return func(ctx context.Context, name string, fn func()) {
		if _, err := cluster.Once(ctx, sh.st, name, fn); err != nil && ctx.Err() == nil {
			sh.log.Warn("cluster: "+name, "err", err)
		}
	}
}
