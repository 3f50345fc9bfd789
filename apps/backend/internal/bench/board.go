package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"github.com/kandev/kandev/apps/backend/internal/action"
	"github.com/kandev/kandev/apps/backend/internal/chrome"
	"github.com/kandev/kandev/apps/backend/internal/kanban"
	"github.com/kandev/kandev/apps/backend/internal/store"
)

// Board sizes and repetitions of section 7.
const (
	boardTasks     = 1000
	boardLoads     = 5
	boardLatencies = 30
)

// MeasureBoard loads the board of a 1,000-task workflow in headless
// Chromium (time from navigation to the rendered board, and the bytes the
// backend sent for it, counted by a loopback proxy in front of it), then
// times create_task_kandev over /mcp until the card is on the open board.
func MeasureBoard(ctx context.Context, cfg Config) (*BoardResult, error) {
	dir, err := mkdir(cfg, "board-data")
	if err != nil {
		return nil, err
	}
	if err := seedBoard(ctx, dir, boardTasks); err != nil {
		return nil, err
	}
	be, err := startBackend(ctx, cfg, "serve-board", dir)
	if err != nil {
		return nil, err
	}
	defer be.stop()
	px, err := newCountingProxy(be.base[len("http://"):])
	if err != nil {
		return nil, err
	}
	defer px.close()
	br, err := chrome.Start(ctx)
	if err != nil {
		return nil, err
	}
	defer br.Close()
	tab, cancel := br.Tab()
	defer cancel()
	tab, cancelT := context.WithTimeout(tab, 5*time.Minute)
	defer cancelT()
	res := &BoardResult{Tasks: boardTasks}
	if err := signIn(tab, px.url, be.token); err != nil {
		return nil, err
	}
	if res.LoadMs, res.Bytes, err = timeLoads(tab, px); err != nil {
		return nil, err
	}
	cfg.Logf("board: %d tasks rendered in %.0f ms (median of %d), %d bytes", boardTasks, res.LoadMs, boardLoads, res.Bytes)
	if res.CardLatency, err = timeCards(ctx, tab, be); err != nil {
		return nil, err
	}
	return res, be.alive()
}

func seedBoard(ctx context.Context, dir string, n int) error {
	st, err := store.Open(ctx, dir)
	if err != nil {
		return err
	}
	defer func() { _ = st.Close() }()
	if err := action.Seed(ctx, st); err != nil {
		return err
	}
	b, err := findBoard(ctx, st)
	if err != nil {
		return err
	}
	if err := seedTasks(ctx, st, b, n); err != nil {
		return err
	}
	return seedBoardPRs(ctx, st, b)
}

// seedBoardPRs links a pull request to every task of the board (states,
// checks and reviews mixed): every card carries a badge. None is due to
// be polled during the run: this section measures the board, section 13
// the watcher (and these pull requests have no forge to be polled on).
func seedBoardPRs(ctx context.Context, st *store.Store, b bigBoard) error {
	repo, err := st.CreateRepository(ctx, kanban.Repository{WorkspaceID: b.workspace, Name: "app", RemoteURL: "https://github.com/octo-org/app.git"})
	if err != nil {
		return err
	}
	ids, err := taskIDs(ctx, st, b.workflow)
	if err != nil {
		return err
	}
	states := []kanban.PRState{kanban.PROpen, kanban.PRDraft, kanban.PRMerged, kanban.PRClosed}
	for i, id := range ids {
		if _, err := st.SetTaskRepository(ctx, kanban.TaskRepository{TaskID: id, RepositoryID: repo.ID, BaseBranch: "main"}); err != nil {
			return err
		}
		if _, err := st.LinkPullRequest(ctx, kanban.PullRequest{TaskID: id, RepositoryID: repo.ID, Forge: kanban.ForgeGitHub,
			ForgeRepo: "octo-org/app", Number: i + 1, URL: fmt.Sprintf("https://github.com/octo-org/app/pull/%d", i+1),
			Title: fmt.Sprintf("Seeded pull request %d", i), HeadBranch: fmt.Sprintf("kandev/seed%04d", i), BaseBranch: "main",
			State: states[i%len(states)], HeadSHA: fmt.Sprintf("%040x", i+1), Checks: kanban.ChecksStates[i%len(kanban.ChecksStates)],
			Review: kanban.ReviewStates[i%len(kanban.ReviewStates)]}); err != nil {
			return err
		}
	}
	later := kanban.Now().Add(24 * time.Hour).UTC().Format(seedTimeLayout)
	_, err = st.DB().ExecContext(ctx, `UPDATE task_pull_requests SET next_poll_at = ?`, later)
	return err
}

func taskIDs(ctx context.Context, st *store.Store, workflowID string) ([]string, error) {
	rows, err := st.DB().QueryContext(ctx, `SELECT id FROM tasks WHERE workflow_id = ? ORDER BY position`, workflowID)
	if err != nil {
		return nil, err
	}
	defer func() { _ = rows.Close() }()
	var out []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		out = append(out, id)
	}
	return out, rows.Err()
}

func signIn(tab context.Context, base, token string) error {
	return chromedp.Do(tab, chromedp.Navigate(base+"/"), chromedp.WaitVisible(chromedp.ID("token")),
		chromedp.SetValue(chromedp.ID("token"), token), chromedp.Submit(chromedp.ID("token")),
		chromedp.WaitVisible(chromedp.ID("columns")))
}

// timeLoads reloads the board with the browser cache off and returns the
// median time to the "board-rendered" mark and the median bytes sent.
func timeLoads(tab context.Context, px *countingProxy) (float64, int64, error) {
	noCache := chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		if _, err := cdp.Call(ctx, t, network.Enable, network.EnableParams{}); err != nil {
			return err
		}
		_, err := cdp.Call(ctx, t, network.SetCacheDisabled, network.SetCacheDisabledParams{CacheDisabled: true})
		return err
	})
	if err := chromedp.Do(tab, noCache); err != nil {
		return 0, 0, err
	}
	var times []float64
	var sizes []float64
	for range boardLoads {
		px.reset()
		if err := chromedp.Do(tab, chromedp.Navigate(px.url+"/")); err != nil {
			return 0, 0, err
		}
		ms, err := waitNumber(tab, `(performance.getEntriesByName('board-rendered')[0] || {}).startTime`)
		if err != nil {
			return 0, 0, err
		}
		n, err := waitNumber(tab, `document.querySelectorAll('.card').length`)
		if err != nil {
			return 0, 0, err
		}
		if int(n) != boardTasks {
			return 0, 0, fmt.Errorf("board shows %v cards, want %d", n, boardTasks)
		}
		badges, err := waitNumber(tab, `document.querySelectorAll('.card .pr-badge').length`)
		if err != nil {
			return 0, 0, err
		}
		if int(badges) != boardTasks {
			return 0, 0, fmt.Errorf("board shows %v pull request badges, want %d", badges, boardTasks)
		}
		times = append(times, ms)
		sizes = append(sizes, float64(px.sent.Load()))
	}
	return Median(times), int64(Median(sizes)), nil
}

// timeCards creates tasks over MCP and measures until each card is on the
// board (the page stamps each new card with the wall clock).
func timeCards(ctx context.Context, tab context.Context, be *backendProc) (LatencyStat, error) {
	const watch = `window.__seen = {}; new MutationObserver((ms) => { for (const m of ms) for (const n of m.addedNodes) {
		const a = n.querySelector && n.querySelector('.title'); if (a && !window.__seen[a.textContent]) window.__seen[a.textContent] = performance.timeOrigin + performance.now(); } })
		.observe(document.getElementById('columns'), {childList: true, subtree: true}); true`
	if _, err := chromedp.Run(tab, chromedp.Evaluate[bool](watch)); err != nil {
		return LatencyStat{}, err
	}
	s, err := openSession(ctx, newHTTPClient(1), be.base+"/mcp", be.token)
	if err != nil {
		return LatencyStat{}, err
	}
	var lat []time.Duration
	for i := range boardLatencies {
		title := fmt.Sprintf("Latency probe %d", i)
		args, _ := json.Marshal(map[string]any{"title": title, "start_agent": false}) // strings and a bool: cannot fail
		t0 := time.Now()
		if _, err := s.call(ctx, "create_task_kandev", args); err != nil {
			return LatencyStat{}, err
		}
		seen, err := waitNumber(tab, fmt.Sprintf(`window.__seen[%q]`, title))
		if err != nil {
			return LatencyStat{}, err
		}
		lat = append(lat, time.Duration((seen-float64(t0.UnixNano())/1e6)*float64(time.Millisecond)))
	}
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	return LatencyStat{P50Ms: ms(Percentile(lat, 50)), P99Ms: ms(Percentile(lat, 99)), Samples: len(lat)}, nil
}

// waitNumber polls an expression until it is a number (bounded: 30 s).
func waitNumber(tab context.Context, expr string) (float64, error) {
	deadline := time.Now().Add(30 * time.Second)
	for {
		v, err := chromedp.Run(tab, chromedp.Evaluate[*float64](expr))
		if err == nil && v != nil {
			return *v, nil
		}
		if time.Now().After(deadline) {
			return 0, fmt.Errorf("timed out waiting for %s (last error: %v)", expr, err) //nolint:errorlint // err may be nil: a number never came
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// countingProxy forwards loopback TCP connections to the backend and
// counts the bytes the backend sends (compressed, as on the wire).
type countingProxy struct {
	ln   net.Listener
	url  string
	sent atomic.Int64
	wg   sync.WaitGroup
}

func newCountingProxy(target string) (*countingProxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &countingProxy{ln: ln, url: "http://" + ln.Addr().String()}
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			p.wg.Add(1)
			go func() { defer p.wg.Done(); p.pipe(c, target) }()
		}
	}()
	return p, nil
}

func (p *countingProxy) pipe(c net.Conn, target string) {
	defer func() { _ = c.Close() }()
	up, err := net.DialTimeout("tcp", target, 5*time.Second)
	if err != nil {
		return
	}
	defer func() { _ = up.Close() }()
	done := make(chan struct{})
	go func() {
		_, _ = io.Copy(up, c)
		_ = up.Close()
		close(done)
	}()
	_, _ = io.Copy(countingWriter{c, &p.sent}, up)
	_ = c.Close()
	<-done
}

func (p *countingProxy) reset() { p.sent.Store(0) }

func (p *countingProxy) close() {
	_ = p.ln.Close()
	p.wg.Wait()
}

// countingWriter counts what it writes as it writes it (a WebSocket stays
// open across the measurement).
type countingWriter struct {
	w io.Writer
	n *atomic.Int64
}

func (c countingWriter) Write(b []byte) (int, error) {
	n, err := c.w.Write(b)
	c.n.Add(int64(n))
	return n, err
}

func writeBoard(b *strings.Builder, r *Results) {
	b.WriteString("## 7. The board in a browser\n\n")
	if r.Board == nil {
		b.WriteString("Not measured in this run.\n\n")
		return
	}
	x := r.Board
	fmt.Fprintf(b, "Debian's headless Chromium opens the board of a workflow holding %d tasks (seeded like section 5) with its cache "+
		"off. Load time runs from navigation start to the page's `board-rendered` mark (every card drawn), median of %d loads; "+
		"bytes are what the backend sent for one load (page, modules, WebSocket frames), counted on the wire by a loopback proxy. "+
		"Card latency runs from the `create_task_kandev` call over `/mcp` to the card's insertion on the open board, %d calls.\n\n",
		x.Tasks, boardLoads, x.CardLatency.Samples)
	b.WriteString("| measure | value |\n|---|---|\n")
	fmt.Fprintf(b, "| load, %d tasks (median) | %.0f ms |\n| bytes sent for one load | %d B |\n| create over MCP → card visible, p50 / p99 | %.1f / %.1f ms |\n\n",
		x.Tasks, x.LoadMs, x.Bytes, x.CardLatency.P50Ms, x.CardLatency.P99Ms)
}
