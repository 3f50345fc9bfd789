package reliability

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// ClientsConfig sizes the misbehaving-clients scenario.
type ClientsConfig struct {
	Sessions   int // MCP sessions opened and never closed
	SessionCap int // the server's --mcp-max-sessions for the run
	SlowBodies int // POSTs whose body trickles in
	IdleConns  int // TCP connections that never send a byte
	HalfOpen   int // WebSockets whose peer vanished (no reads, no pongs)
}

// Bounds the scenario checks, from the server's documented limits.
const (
	bodyBound     = 45 * time.Second  // request bodies must arrive within 30 s
	headerBound   = 20 * time.Second  // request headers within 10 s
	halfOpenBound = 100 * time.Second // pongs within 60 s, pings every 20 s
	sessionsMiB   = 24.0              // memory for Sessions unclosed sessions past the cap
	slowMiB       = 64.0              // memory for all slow and idle clients together
)

// RunClients is the misbehaving-clients scenario.
func RunClients(ctx context.Context, env *Env, cfg ClientsConfig) Scenario {
	sc := newScenario("clients", "Misbehaving clients: unclosed sessions, slow bodies, idle and half-open connections",
		"MCP sessions never closed; request bodies sent a byte a second; TCP connections that send nothing; WebSockets whose peer vanished",
		fmt.Sprintf("%d unclosed sessions (cap %d), %d slow bodies, %d idle connections, %d half-open WebSockets",
			cfg.Sessions, cfg.SessionCap, cfg.SlowBodies, cfg.IdleConns, cfg.HalfOpen))
	dir, err := env.dir("clients")
	if err != nil {
		return sc.fail(err)
	}
	srv, err := startServer(ctx, serverSpec{bin: env.KandevBin, dataDir: dir + "/data", logDir: dir, name: "serve",
		args: []string{"--launch-agents=false", "--mcp-max-sessions", strconv.Itoa(cfg.SessionCap)}})
	if err != nil {
		return sc.fail(err)
	}
	defer srv.close()
	probe, stopProbe, err := startProbe(ctx, srv)
	if err != nil {
		return sc.fail(err)
	}
	if err := unclosedSessions(ctx, sc, srv, cfg); err != nil {
		stopProbe()
		return sc.fail(err)
	}
	base := rssMiB(srv.pid())
	peak := &peakRSS{pid: srv.pid()}
	stopPeak := peak.watch()
	var wg sync.WaitGroup
	wg.Go(func() { slowBodies(ctx, sc, srv, cfg.SlowBodies) })
	wg.Go(func() { idleConns(sc, srv, cfg.IdleConns) })
	wg.Go(func() { halfOpen(ctx, sc, srv, cfg.HalfOpen) })
	wg.Wait()
	stopPeak()
	stopProbe()
	sc.s.Figures["rss_base_mib"], sc.s.Figures["rss_peak_mib"] = base, peak.max()
	sc.checkf("memory bounded under slow and idle clients", peak.max()-base <= slowMiB,
		"server RSS %.0f MiB before, %.0f MiB at the peak (bound +%.0f MiB)", base, peak.max(), slowMiB)
	sc.calls("other clients served meanwhile", probe, false)
	return sc.done()
}

// unclosedSessions opens SessionCap sessions, then Sessions more, none
// closed: the server's memory must not follow, and the first session's
// id must still be served.
func unclosedSessions(ctx context.Context, sc *scenarioRun, srv *server, cfg ClientsConfig) error {
	first, err := openSessions(ctx, srv, cfg.SessionCap)
	if err != nil {
		return err
	}
	before := rssMiB(srv.pid())
	if _, err := openSessions(ctx, srv, cfg.Sessions); err != nil {
		return err
	}
	after := rssMiB(srv.pid())
	sc.s.Figures["sessions_rss_before_mib"], sc.s.Figures["sessions_rss_after_mib"] = before, after
	sc.checkf("unclosed MCP sessions: memory bounded by the session cap", after-before <= sessionsMiB,
		"server RSS %.0f MiB with %d sessions open, %.0f MiB after %d more (bound +%.0f MiB)", before, cfg.SessionCap, after, cfg.Sessions, sessionsMiB)
	_, body, err := mcpPost(ctx, &http.Client{Timeout: callTimeout}, srv, first, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
	sc.checkf("a dropped session's id is still served", err == nil && len(body) > 0, "tools/list with the oldest session's id: %v", err)
	return nil
}

func slowBodies(ctx context.Context, sc *scenarioRun, srv *server, n int) {
	var closed atomic.Int32
	var wg sync.WaitGroup
	var firstErr atomic.Value
	for range n {
		wg.Go(func() {
			if err := slowBody(ctx, srv, bodyBound); err != nil {
				firstErr.CompareAndSwap(nil, err.Error())
				return
			}
			closed.Add(1)
		})
	}
	wg.Wait()
	sc.checkf("slow request bodies are cut off", int(closed.Load()) == n,
		"%d of %d trickling bodies closed by the server within %s; %v", closed.Load(), n, bodyBound, firstErr.Load())
}

func idleConns(sc *scenarioRun, srv *server, n int) {
	var conns []net.Conn
	defer func() {
		for _, c := range conns {
			_ = c.Close()
		}
	}()
	for range n {
		c, err := idleConn(srv)
		if err != nil {
			break
		}
		conns = append(conns, c)
	}
	end := time.Now().Add(headerBound)
	closed := 0
	for _, c := range conns {
		if closedByPeer(c, max(time.Until(end), time.Millisecond)) {
			closed++
		}
	}
	sc.checkf("idle connections are closed", closed == n,
		"%d of %d connections that sent nothing closed by the server within %s", closed, n, headerBound)
}

func halfOpen(ctx context.Context, sc *scenarioRun, srv *server, n int) {
	var conns []net.Conn
	defer func() {
		for _, c := range conns {
			_ = c.Close()
		}
	}()
	for range n {
		c, err := halfOpenWS(ctx, srv)
		if err != nil {
			sc.checkf("half-open WebSockets are closed", false, "dial: %v", err)
			return
		}
		conns = append(conns, c)
	}
	end := time.Now().Add(halfOpenBound)
	closed := 0
	for _, c := range conns {
		if closedByPeer(c, max(time.Until(end), time.Millisecond)) {
			closed++
		}
	}
	sc.checkf("half-open WebSockets are closed", closed == n,
		"%d of %d WebSockets whose peer stopped reading and answering pings closed by the server within %s", closed, n, halfOpenBound)
}

// startProbe makes a list_tasks call every 100 ms on its own /mcp session.
func startProbe(ctx context.Context, srv *server) (*tally, func(), error) {
	m, err := externalMCP(ctx, srv)
	if err != nil {
		return nil, nil, err
	}
	tl := newTally()
	pctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() {
		for pctx.Err() == nil {
			t0 := time.Now()
			oc, d := classifyMCP(m.call(pctx, "list_tasks_kandev", map[string]any{"limit": 5}, nil))
			if pctx.Err() == nil {
				tl.add(time.Since(t0), oc, d)
			}
			sleepCtx(pctx, 100*time.Millisecond)
		}
	})
	return tl, func() { cancel(); wg.Wait(); m.close() }, nil
}

// peakRSS samples a process's RSS every 100 ms.
type peakRSS struct {
	pid int
	mu  sync.Mutex
	top float64
}

func (p *peakRSS) watch() func() {
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			v := rssMiB(p.pid)
			p.mu.Lock()
			p.top = max(p.top, v)
			p.mu.Unlock()
			select {
			case <-stop:
				return
			case <-time.After(100 * time.Millisecond):
			}
		}
	}()
	return func() { close(stop); <-done }
}

func (p *peakRSS) max() float64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.top
}
