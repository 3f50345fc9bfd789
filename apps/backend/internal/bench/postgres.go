package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/kandev/kandev/apps/backend/internal/action"
	"github.com/kandev/kandev/apps/backend/internal/kanban"
	"github.com/kandev/kandev/apps/backend/internal/pgtest"
	"github.com/kandev/kandev/apps/backend/internal/ws"
)

// PostgresRun is section 11: the same round trips on a backend on
// PostgreSQL and one on SQLite, measured back to back in the same run,
// and the latency of an event from one backend to the subscribers of
// another on the same database.
type PostgresRun struct {
	Server    string        `json:"server"` // the PostgreSQL version the throwaway cluster ran
	RoundTrip []EnginePoint `json:"round_trip"`
	// CrossBackend runs from a task.create call on backend A to its
	// task.created event on a subscription to backend B; SameBackend to
	// the same event on a subscription to A; Relay is the difference per
	// event (what going through the database adds).
	CrossBackend LatencyStat `json:"cross_backend"`
	SameBackend  LatencyStat `json:"same_backend"`
	Relay        LatencyStat `json:"relay"`
	// Scale is section 5's big board on PostgreSQL (nil when section 5's
	// board is too small to have deep pages).
	Scale *PostgresScale `json:"scale,omitempty"`
}

// EnginePoint is one call at one client count on both engines.
type EnginePoint struct {
	Tool     string   `json:"tool"`
	Args     string   `json:"args"`
	Clients  int      `json:"clients"`
	SQLite   LoadStat `json:"sqlite"`
	Postgres LoadStat `json:"postgres"`
	// PostgresOverSQLite is PostgreSQL's calls/s over SQLite's, paired
	// per repetition.
	PostgresOverSQLite float64 `json:"postgres_over_sqlite"`
}

// crossSamples is how many events the cross-backend latency is made of.
const crossSamples = 300

// MeasurePostgres runs section 11 on a throwaway PostgreSQL cluster. Where
// none can start (no PostgreSQL installed) it returns nil and the reason.
func MeasurePostgres(ctx context.Context, cfg Config) (*PostgresRun, string, error) {
	cl, err := pgtest.Start(ctx)
	if err != nil {
		return nil, "Section 11 (PostgreSQL) was not measured: " + err.Error(), nil
	}
	defer func() { _ = cl.Stop() }()
	out := &PostgresRun{}
	if out.Server, err = cl.Version(ctx); err != nil {
		return nil, "", err
	}
	if out.RoundTrip, err = measureEngines(ctx, cfg, cl); err != nil {
		return nil, "", err
	}
	if err := measureCrossBackend(ctx, cfg, cl, out); err != nil {
		return nil, "", err
	}
	if out.Scale, err = measurePostgresScale(ctx, cfg, cl); err != nil {
		return nil, "", fmt.Errorf("store scale: %w", err)
	}
	cfg.Logf("postgres: cross-backend event p50 %.2f ms (same backend %.2f ms)", out.CrossBackend.P50Ms, out.SameBackend.P50Ms)
	return out, "", nil
}

// measureEngines measures create_task and a 5-task list_tasks on a
// backend on SQLite and one on PostgreSQL, alternating per point.
func measureEngines(ctx context.Context, cfg Config, cl *pgtest.Cluster) ([]EnginePoint, error) {
	_, url, err := cl.CreateDatabase(ctx)
	if err != nil {
		return nil, err
	}
	liteDir, err1 := mkdir(cfg, "engines-sqlite")
	pgDir, err2 := mkdir(cfg, "engines-postgres")
	if err1 != nil || err2 != nil {
		return nil, fmt.Errorf("engines: %w", errors.Join(err1, err2))
	}
	lite, err := startBackend(ctx, cfg, "serve-sqlite", liteDir)
	if err != nil {
		return nil, err
	}
	defer lite.stop()
	pg, err := startBackendWith(ctx, cfg, "serve-postgres", pgDir, "--launch-agents=false", "--database", url)
	if err != nil {
		return nil, err
	}
	defer pg.stop()
	maxN := slices.Max(cfg.Clients)
	hc := newHTTPClient(3 * maxN)
	var pairs []enginePair
	for _, c := range []call{listSmallCall, createCall} {
		var p enginePair
		if p.lite, err = engineTarget(ctx, lite, c, hc, maxN); err != nil {
			return nil, err
		}
		if p.pg, err = engineTarget(ctx, pg, c, hc, maxN); err != nil {
			return nil, err
		}
		pairs = append(pairs, p)
	}
	point := time.Duration(cfg.Point * float64(time.Second))
	for rep := range cfg.Reps {
		for _, n := range cfg.Clients {
			cfg.Logf("postgres: repetition %d/%d, %d clients", rep+1, cfg.Reps, n)
			for _, p := range pairs {
				for _, t := range []*target{p.lite, p.pg} {
					r, err := runLoad(ctx, t.ep, t.c, n, point)
					if err != nil {
						return nil, err
					}
					t.runs[n] = append(t.runs[n], r)
				}
			}
			if err := errors.Join(lite.alive(), pg.alive()); err != nil {
				return nil, err
			}
		}
	}
	return enginePoints(cfg, pairs), nil
}

// enginePair is one call's targets on the SQLite and the PostgreSQL
// backend.
type enginePair struct{ lite, pg *target }

// engineTarget is call c's target on backend be, checked and warmed up
// (on a prefilled board for the list).
func engineTarget(ctx context.Context, be *backendProc, c call, hc *http.Client, maxN int) (*target, error) {
	ep, err := newEndpoint(ctx, be.name, be.base+"/mcp", be.token, hc, maxN)
	if err != nil {
		return nil, err
	}
	if c.tool == listSmallCall.tool {
		if _, err := prefill(ctx, ep); err != nil {
			return nil, err
		}
	}
	t := &target{key: c.tool, ep: ep, c: c, runs: map[int][]loadRun{}}
	if _, _, err := checkCall(ctx, ep, c); err != nil {
		return nil, err
	}
	if _, err := runLoad(ctx, ep, c, min(8, maxN), 300*time.Millisecond); err != nil { // warm-up
		return nil, err
	}
	return t, nil
}

// enginePoints is each pair's figures per client count.
func enginePoints(cfg Config, pairs []enginePair) []EnginePoint {
	var out []EnginePoint
	for _, p := range pairs {
		for _, n := range cfg.Clients {
			out = append(out, EnginePoint{Tool: p.lite.c.tool, Args: string(p.lite.c.args), Clients: n,
				SQLite: loadStat(p.lite.runs[n]), Postgres: loadStat(p.pg.runs[n]),
				PostgresOverSQLite: PairedRatios(runsField(p.pg.runs[n], loadRun.callsPerSec), runsField(p.lite.runs[n], loadRun.callsPerSec))})
		}
	}
	return out
}

// measureCrossBackend runs two backends on one database and times
// task.created from a call on A to subscribers of A and of B.
func measureCrossBackend(ctx context.Context, cfg Config, cl *pgtest.Cluster, out *PostgresRun) error {
	_, url, err := cl.CreateDatabase(ctx)
	if err != nil {
		return err
	}
	tok := newToken()
	var bes []*backendProc
	for _, name := range []string{"cross-a", "cross-b"} {
		dir, err := mkdir(cfg, name)
		if err != nil {
			return err
		}
		be, err := startBackendToken(ctx, cfg, name, dir, tok, "--launch-agents=false", "--database", url)
		if err != nil {
			return err
		}
		defer be.stop()
		bes = append(bes, be)
	}
	arrivals := []*arrivalLog{newArrivalLog(), newArrivalLog()}
	var clients []*ws.Client
	for i, be := range bes {
		c, err := ws.Dial(ctx, ws.ClientConfig{URL: "ws" + strings.TrimPrefix(be.base, "http") + "/ws", Token: tok,
			OnNotification: arrivals[i].note})
		if err != nil {
			return err
		}
		defer func() { _ = c.Close() }()
		clients = append(clients, c)
	}
	var wss struct {
		Items []struct{ ID string } `json:"items"`
	}
	if err := clients[0].Call(ctx, kanban.ActionWorkspaceList, map[string]any{}, &wss); err != nil || len(wss.Items) == 0 {
		return fmt.Errorf("cross backend: workspace.list: %w (or no workspace)", err)
	}
	for _, c := range clients {
		if err := c.Call(ctx, kanban.ActionSubscribe, map[string]any{"topics": []string{"workspace:" + wss.Items[0].ID}}, nil); err != nil {
			return err
		}
	}
	var cross, same, relay []time.Duration
	no := false
	for i := range crossSamples + 10 {
		start := time.Now()
		var created action.TaskCreateOut
		if err := clients[0].Call(ctx, kanban.ActionTaskCreate, action.TaskCreateIn{Title: fmt.Sprintf("relay %d", i), StartAgent: &no}, &created); err != nil {
			return err
		}
		atA, errA := arrivals[0].wait(created.Task.ID)
		atB, errB := arrivals[1].wait(created.Task.ID)
		if err := errors.Join(errA, errB); err != nil {
			return err
		}
		if i < 10 {
			continue // warm-up
		}
		cross, same, relay = append(cross, atB.Sub(start)), append(same, atA.Sub(start)), append(relay, atB.Sub(atA))
	}
	out.CrossBackend, out.SameBackend, out.Relay = Latency(cross), Latency(same), Latency(relay)
	return errors.Join(bes[0].alive(), bes[1].alive())
}

// arrivalLog records when each task.created event arrived.
type arrivalLog struct {
	mu sync.Mutex
	at map[string]chan time.Time
}

func newArrivalLog() *arrivalLog { return &arrivalLog{at: map[string]chan time.Time{}} }

func (l *arrivalLog) ch(id string) chan time.Time {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.at[id] == nil {
		l.at[id] = make(chan time.Time, 1)
	}
	return l.at[id]
}

func (l *arrivalLog) note(name string, payload json.RawMessage) {
	now := time.Now()
	var t struct{ ID string }
	if name == kanban.EventTaskCreated.Name() && json.Unmarshal(payload, &t) == nil {
		select {
		case l.ch(t.ID) <- now:
		default:
		}
	}
}

func (l *arrivalLog) wait(id string) (time.Time, error) {
	select {
	case at := <-l.ch(id):
		return at, nil
	case <-time.After(10 * time.Second):
		return time.Time{}, fmt.Errorf("cross backend: task.created of %s never arrived", id)
	}
}
