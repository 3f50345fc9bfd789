package bench

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/kandev/kandev/apps/backend/internal/credential"
	"github.com/kandev/kandev/apps/backend/internal/forge"
	"github.com/kandev/kandev/apps/backend/internal/kanban"
	"github.com/kandev/kandev/apps/backend/internal/prwatch"
	"github.com/kandev/kandev/apps/backend/internal/store"
)

// PRWatchRun is section 12: the PR watcher's cost per watched pull
// request and poll when nothing changed (every read a 304, the path a
// quiet pull request takes every minute), in process: PRWatchPRs pull
// requests on the real SQLite store, polled through go-github and the
// forge layer from an in-process GitHub that answers conditional GETs.
// Baseline, paired in the same run: the same five conditional GETs per
// pull request made with a bare net/http client, so Ratio is what the
// watcher adds (claim and record transactions, the client, the decision).
type PRWatchRun struct {
	PRs        int     `json:"prs"`
	WatcherNs  float64 `json:"watcher_ns_per_pr"`
	BaselineNs float64 `json:"baseline_ns_per_pr"`
	Ratio      float64 `json:"watcher_over_baseline"`
	AllocsPer  float64 `json:"watcher_allocs_per_pr"`
}

// prWatchPRs is how many pull requests one round polls.
const prWatchPRs = 100

const benchSHA = "1111111111111111111111111111111111111111"

// MeasurePRWatch runs section 12.
func MeasurePRWatch(ctx context.Context, cfg Config) (*PRWatchRun, error) {
	srv := notModifiedForge()
	defer srv.Close()
	dir, err := mkdir(cfg, "prwatch")
	if err != nil {
		return nil, err
	}
	st, err := store.Open(ctx, dir)
	if err != nil {
		return nil, err
	}
	defer func() { _ = st.Close() }()
	w, err := benchWatcher(ctx, st, srv.URL)
	if err != nil {
		return nil, err
	}
	watcher := func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if n := w.PollDue(ctx, prWatchPRs); n != prWatchPRs {
				b.Fatalf("polled %d pull requests, want %d", n, prWatchPRs)
			}
		}
	}
	baseline := bareConditionalGets(srv.URL)
	var wr, br []testing.BenchmarkResult
	for rep := range cfg.MicroReps {
		cfg.Logf("prwatch: repetition %d/%d", rep+1, cfg.MicroReps)
		if rep%2 == 0 {
			wr, br = append(wr, testing.Benchmark(watcher)), append(br, testing.Benchmark(baseline))
		} else {
			br, wr = append(br, testing.Benchmark(baseline)), append(wr, testing.Benchmark(watcher))
		}
	}
	per := func(rs []testing.BenchmarkResult) []float64 {
		out := field(rs, nsPerOp)
		for i := range out {
			out[i] /= prWatchPRs
		}
		return out
	}
	out := &PRWatchRun{PRs: prWatchPRs, WatcherNs: Median(per(wr)), BaselineNs: Median(per(br)),
		Ratio: PairedRatios(per(wr), per(br)), AllocsPer: Median(field(wr, allocsPerOp)) / prWatchPRs}
	cfg.Logf("prwatch: %.0f µs per pull request and poll (bare 304s %.0f µs, ×%.1f)", out.WatcherNs/1e3, out.BaselineNs/1e3, out.Ratio)
	return out, nil
}

// benchWatcher links prWatchPRs pull requests and returns a watcher of
// them whose first poll (200s, ETags kept) is done.
func benchWatcher(ctx context.Context, st *store.Store, api string) (*prwatch.Watcher, error) {
	ws, err := st.CreateWorkspace(ctx, "PR watch", "")
	if err != nil {
		return nil, err
	}
	wf, err := st.CreateWorkflow(ctx, kanban.Workflow{WorkspaceID: ws.ID, Name: "Kanban"})
	if err != nil {
		return nil, err
	}
	if _, err := st.CreateStep(ctx, kanban.WorkflowStep{WorkflowID: wf.ID, Name: "Review"}); err != nil {
		return nil, err
	}
	repo, err := st.CreateRepository(ctx, kanban.Repository{WorkspaceID: ws.ID, Name: "r", RemoteURL: "https://github.com/o/r.git"})
	if err != nil {
		return nil, err
	}
	for i := range prWatchPRs {
		t, _, err := st.CreateTask(ctx, kanban.TaskCreate{WorkspaceID: ws.ID, Title: fmt.Sprintf("t%d", i),
			Repository: &kanban.TaskRepositoryInput{RepositoryID: repo.ID}})
		if err != nil {
			return nil, err
		}
		if _, err := st.LinkPullRequest(ctx, kanban.PullRequest{TaskID: t.ID, RepositoryID: repo.ID, Forge: kanban.ForgeGitHub,
			ForgeRepo: "o/r", Number: 1, State: kanban.PROpen, HeadSHA: benchSHA}); err != nil {
			return nil, err
		}
	}
	tok, err := credential.Parse("ghp_BenchT0ken0123456789abcdef0123456789")
	if err != nil {
		return nil, err
	}
	client, err := forge.NewGitHub(forge.GitHubConfig{APIURL: api + "/", Token: tok})
	if err != nil {
		return nil, err
	}
	w, err := prwatch.New(prwatch.Config{Store: st, Backend: "bench", Interval: time.Nanosecond,
		Forges: prwatch.ForgesFunc(func(context.Context, kanban.PullRequest) (forge.Forge, error) { return client, nil }),
		Sink:   prwatch.SinkFunc(func(context.Context, prwatch.Event) error { return nil })})
	if err != nil {
		return nil, err
	}
	if n := w.PollDue(ctx, prWatchPRs); n != prWatchPRs {
		return nil, fmt.Errorf("the first round polled %d pull requests, want %d", n, prWatchPRs)
	}
	return w, nil
}

// forgePaths are the five reads of one poll, as the watcher makes them.
var forgePaths = []string{"/repos/o/r/pulls/1", "/repos/o/r/pulls/1/reviews?per_page=100",
	"/repos/o/r/pulls/1/comments?direction=asc&per_page=100&sort=updated",
	"/repos/o/r/commits/" + benchSHA + "/check-runs?filter=latest&per_page=100", "/repos/o/r/commits/" + benchSHA + "/status?per_page=100"}

// bareConditionalGets is the baseline: per pull request, the five reads
// as conditional GETs with a bare client (each a 304).
func bareConditionalGets(api string) func(*testing.B) {
	return func(b *testing.B) {
		client := &http.Client{}
		etags := map[string]string{}
		get := func(p string) int {
			req, _ := http.NewRequest(http.MethodGet, api+p, nil)
			if e := etags[p]; e != "" {
				req.Header.Set("If-None-Match", e)
			}
			resp, err := client.Do(req)
			if err != nil {
				b.Fatal(err)
			}
			_ = resp.Body.Close()
			etags[p] = resp.Header.Get("ETag")
			return resp.StatusCode
		}
		for _, p := range forgePaths {
			get(p)
		}
		b.ReportAllocs()
		for b.Loop() {
			for range prWatchPRs {
				for _, p := range forgePaths {
					if get(p) != http.StatusNotModified {
						b.Fatal("not a 304")
					}
				}
			}
		}
	}
}

// notModifiedForge serves a pull request's five poll reads with ETags,
// answering 304 to a matching If-None-Match.
func notModifiedForge() *httptest.Server {
	bodies := map[string]string{
		"/repos/o/r/pulls/1": `{"number":1,"state":"open","draft":false,"merged":false,"mergeable":true,"html_url":"https://github.com/o/r/pull/1",` +
			`"title":"t","head":{"ref":"kandev/x","sha":"` + benchSHA + `"},"base":{"ref":"main"},"updated_at":"2026-12-01T10:00:00Z"}`,
		"/repos/o/r/pulls/1/reviews":                     `[]`,
		"/repos/o/r/pulls/1/comments":                    `[]`,
		"/repos/o/r/commits/" + benchSHA + "/check-runs": `{"total_count":1,"check_runs":[{"id":1,"name":"build","status":"completed","conclusion":"success"}]}`,
		"/repos/o/r/commits/" + benchSHA + "/status":     `{"state":"success","total_count":0,"statuses":[]}`,
	}
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, ok := bodies[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		sum := sha256.Sum256([]byte(body))
		etag := `"` + hex.EncodeToString(sum[:8]) + `"`
		w.Header().Set("ETag", etag)
		if r.Header.Get("If-None-Match") == etag {
			w.WriteHeader(http.StatusNotModified)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(body))
	}))
}

func writePRWatch(b *strings.Builder, r *Results) {
	b.WriteString("## 13. The PR watcher\n\n")
	p := r.PRWatch
	if p == nil {
		b.WriteString("Not measured in this run.\n\n")
		return
	}
	fmt.Fprintf(b, "One round polls %d watched pull requests on the real SQLite store, none changed (every read a 304, no rate limit "+
		"spent), through go-github from an in-process GitHub; the baseline, paired in the same run, makes the same five conditional "+
		"GETs per pull request with a bare net/http client.\n\n", p.PRs)
	b.WriteString("| figure | value |\n|---|---|\n")
	fmt.Fprintf(b, "| watcher, per pull request and poll | %.1f µs, %.0f allocs |\n", p.WatcherNs/1e3, p.AllocsPer)
	fmt.Fprintf(b, "| baseline (bare conditional GETs), per pull request | %.1f µs |\n", p.BaselineNs/1e3)
	fmt.Fprintf(b, "| watcher / baseline | ×%.2f |\n\n", p.Ratio)
}
