package prwatch

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/kandev/kandev/apps/backend/internal/credential"
	"github.com/kandev/kandev/apps/backend/internal/forge"
	"github.com/kandev/kandev/apps/backend/internal/kanban"
	"github.com/kandev/kandev/apps/backend/internal/store"
)

// The watcher's cost per watched pull request and poll on the
// NotModified path (nothing changed: every read is a 304), against an
// in-process GitHub that answers conditional GETs (Prism would measure
// Prism), with a real SQLite store. The baseline, in the same run, is the
// same five conditional GETs made with a bare net/http client: the
// difference is what the watcher adds (its claim and record transactions,
// go-github, the forge layer, the decision).

// notModifiedGitHub serves a pull request's five poll reads with ETags,
// answering 304 to a matching If-None-Match.
func notModifiedGitHub(b *testing.B) *httptest.Server {
	bodies := map[string]string{
		"/repos/o/r/pulls/1": `{"number":1,"state":"open","draft":false,"merged":false,"mergeable":true,"html_url":"https://github.com/o/r/pull/1",` +
			`"title":"t","head":{"ref":"kandev/x","sha":"` + sha1 + `"},"base":{"ref":"main"},"updated_at":"2026-12-01T10:00:00Z"}`,
		"/repos/o/r/pulls/1/reviews":                 `[]`,
		"/repos/o/r/pulls/1/comments":                `[]`,
		"/repos/o/r/commits/" + sha1 + "/check-runs": `{"total_count":1,"check_runs":[{"id":1,"name":"build","status":"completed","conclusion":"success"}]}`,
		"/repos/o/r/commits/" + sha1 + "/status":     `{"state":"success","total_count":0,"statuses":[]}`,
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
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
	b.Cleanup(srv.Close)
	return srv
}

func BenchmarkPollNotModified(b *testing.B) {
	srv := notModifiedGitHub(b)
	paths := []string{"/repos/o/r/pulls/1", "/repos/o/r/pulls/1/reviews?per_page=100", "/repos/o/r/pulls/1/comments?direction=asc&per_page=100&sort=updated",
		"/repos/o/r/commits/" + sha1 + "/check-runs?filter=latest&per_page=100", "/repos/o/r/commits/" + sha1 + "/status?per_page=100"}

	b.Run("baseline_bare_304s", func(b *testing.B) { benchBare304s(b, srv.URL, paths) })
	b.Run("watcher_poll", func(b *testing.B) { benchWatcherPoll(b, srv.URL) })
}

// benchBare304s is the floor: conditional GETs of paths on base, each
// answered 304, with nothing else done.
func benchBare304s(b *testing.B, base string, paths []string) {
	client := &http.Client{}
	etags := map[string]string{}
	get := func(p string) int {
		req, _ := http.NewRequest(http.MethodGet, base+p, nil)
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
	for _, p := range paths {
		get(p)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		for _, p := range paths {
			if get(p) != http.StatusNotModified {
				b.Fatal("not a 304")
			}
		}
	}
}

// benchWatcherPoll is the watcher's poll of one pull request whose every
// read on base is a 304.
func benchWatcherPoll(b *testing.B, base string) {
	ctx := context.Background()
	st, err := store.Open(ctx, b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = st.Close() })
	pr := benchPR(b, st)
	tok, _ := credential.Parse(apiToken)
	client, err := forge.NewGitHub(forge.GitHubConfig{APIURL: base + "/", Token: tok})
	if err != nil {
		b.Fatal(err)
	}
	w, err := New(Config{Store: st, Forges: ForgesFunc(func(context.Context, kanban.PullRequest) (forge.Forge, error) { return client, nil }),
		Sink: SinkFunc(func(context.Context, Event) error { return nil }), Backend: "bench", Interval: time.Nanosecond})
	if err != nil {
		b.Fatal(err)
	}
	w.step(ctx) // the first poll reads everything (200s) and keeps the ETags
	before := mustRecord(b, st, pr)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		w.poll(ctx)
		w.running.Wait()
	}
	b.StopTimer()
	after := mustRecord(b, st, pr)
	if after.Watch.Version-before.Watch.Version < int64(b.N) || after.Watch.Failures != 0 {
		b.Fatalf("polls recorded: %d versions for %d polls, failures %d", after.Watch.Version-before.Watch.Version, b.N, after.Watch.Failures)
	}
	if l, _ := st.ListPREvents(ctx, pr, kanban.Page{}); len(l.Items) != 1 { // checks_passing, from the first poll
		b.Fatalf("the NotModified polls recorded events: %d", len(l.Items))
	}
}

// BenchmarkRoundNotModified: one round of the watcher over 100 watched
// pull requests, all unchanged (claimed in batches, polled four at a
// time); ns/pr is the cost per pull request and poll.
func BenchmarkRoundNotModified(b *testing.B) {
	srv := notModifiedGitHub(b)
	ctx := context.Background()
	st, err := store.Open(ctx, b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = st.Close() })
	const prs = 100
	for range prs {
		benchPR(b, st)
	}
	tok, _ := credential.Parse(apiToken)
	client, err := forge.NewGitHub(forge.GitHubConfig{APIURL: srv.URL + "/", Token: tok})
	if err != nil {
		b.Fatal(err)
	}
	w, err := New(Config{Store: st, Forges: ForgesFunc(func(context.Context, kanban.PullRequest) (forge.Forge, error) { return client, nil }),
		Sink: SinkFunc(func(context.Context, Event) error { return nil }), Backend: "bench", Interval: time.Nanosecond})
	if err != nil {
		b.Fatal(err)
	}
	round := func() {
		for polled := 0; polled < prs; {
			due, err := st.ClaimDuePullRequests(ctx, time.Now(), time.Minute, w.cfg.Concurrency)
			if err != nil {
				b.Fatal(err)
			}
			for _, p := range due {
				acquire(ctx, w.polls)
				w.running.Add(1)
				go func() {
					defer w.running.Done()
					defer func() { <-w.polls }()
					w.pollOne(ctx, p)
				}()
			}
			polled += len(due)
		}
		w.running.Wait()
	}
	round() // the first reads everything and keeps the ETags
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		round()
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*prs), "ns/pr")
}

// benchPR links a pull request #1 of o/r to a new task and returns its id.
func benchPR(b *testing.B, st *store.Store) string {
	ctx := context.Background()
	ws, err := st.CreateWorkspace(ctx, "Bench", "")
	if err != nil {
		b.Fatal(err)
	}
	wf, _ := st.CreateWorkflow(ctx, kanban.Workflow{WorkspaceID: ws.ID, Name: "Kanban"})
	if _, err := st.CreateStep(ctx, kanban.WorkflowStep{WorkflowID: wf.ID, Name: "Review"}); err != nil {
		b.Fatal(err)
	}
	repo, _ := st.CreateRepository(ctx, kanban.Repository{WorkspaceID: ws.ID, Name: "r", RemoteURL: "https://github.com/o/r.git"})
	task, _, err := st.CreateTask(ctx, kanban.TaskCreate{WorkspaceID: ws.ID, Title: "t", Repository: &kanban.TaskRepositoryInput{RepositoryID: repo.ID}})
	if err != nil {
		b.Fatal(err)
	}
	pr, err := st.LinkPullRequest(ctx, kanban.PullRequest{TaskID: task.ID, RepositoryID: repo.ID, Forge: kanban.ForgeGitHub, ForgeRepo: "o/r",
		Number: 1, State: kanban.PROpen, HeadSHA: sha1})
	if err != nil {
		b.Fatal(err)
	}
	return pr.ID
}

func mustRecord(b *testing.B, st *store.Store, id string) *kanban.PullRequest {
	p, err := st.GetPullRequest(context.Background(), id)
	if err != nil {
		b.Fatal(err)
	}
	if !strings.HasPrefix(p.Watch.ChecksReported, "passing:") {
		b.Fatalf("the first poll did not read the checks: %+v", p.Watch)
	}
	return p
}
