package forgetest

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// maxRequestBody bounds a request the layer reads.
const maxRequestBody = 8 << 20

// GitHub is a stateful GitHub REST API for tests, in front of Prism.
//
// Every request the client sends is forwarded to Prism, which validates
// it against GitHub's OpenAPI description (path, method, parameters,
// body). A request Prism finds invalid — or one for an endpoint GitHub
// does not have, or with an Accept header GitHub would refuse — is a
// violation: it is answered as Prism answered it and fails the test at
// cleanup (TakeViolations lets a test that sends one on purpose claim
// it). For the endpoints Kandev uses, the layer then answers from its own
// state, laid over Prism's schema-generated response so every field
// GitHub documents is present: pull requests (create, get, merge),
// reviews, review comments, check runs, commit statuses, Actions job
// logs. Prism alone cannot do this: it is stateless (a merged pull
// request would be open again on the next call) and its data is random.
// The layer also answers conditional GETs (ETag / If-None-Match → 304)
// and can be told to answer rate limits.
type GitHub struct {
	// URL is the API root to give a client (http://127.0.0.1:PORT/).
	URL string
	// Token is the only token the layer accepts (Authorization: Bearer or
	// token).
	Token string

	prism  *Prism
	client *http.Client

	mu         sync.Mutex
	nextNumber int
	nextID     int64
	prs        map[string]*PullRequest // "owner/repo#n"
	checks     map[string][]CheckRun   // "owner/repo@sha"
	statuses   map[string][]Status     // "owner/repo@sha"
	reviews    map[string][]Review     // PR key
	comments   map[string][]ReviewComment
	logs       map[int64]string
	branches   map[string]string // "owner/repo:branch" → head sha
	templates  map[string]any    // path → the first response Prism generated for it
	limits     []RateLimit
	violations []string
	seen       []Seen
}

// PullRequest is the layer's state of one pull request.
type PullRequest struct {
	Owner, Repo    string
	Number         int
	Title, Body    string
	Head, Base     string
	HeadSHA        string
	Draft          bool
	Closed, Merged bool
	// Mergeable is GitHub's mergeable (nil: still being computed);
	// MergeableState its mergeable_state ("clean", "blocked", "dirty", …).
	Mergeable      *bool
	MergeableState string
	// RequestedReviewers are the logins whose review is requested.
	RequestedReviewers []string
	MergeMethod        string // of the merge call
	MergeCommitSHA     string
	MergedAt           time.Time
	UpdatedAt          time.Time
}

// CheckRun is a check run on a commit.
type CheckRun struct {
	ID                     int64
	Name                   string
	Status                 string // queued, in_progress, completed
	Conclusion             string // success, failure, … (completed only)
	Title, Summary, Text   string // its output
	DetailsURL             string
	AppSlug                string // "github-actions" for Actions jobs
	StartedAt, CompletedAt time.Time
}

// Status is a commit status.
type Status struct {
	Context, State, Description, TargetURL string // State: pending, success, failure, error
}

// Review is a pull request review.
type Review struct {
	ID          int64
	User        string
	State       string // APPROVED, CHANGES_REQUESTED, COMMENTED, DISMISSED, PENDING
	Body        string
	CommitID    string
	SubmittedAt time.Time
}

// ReviewComment is a comment on a line of a pull request's diff.
type ReviewComment struct {
	ID, ReviewID, InReplyTo int64
	User, Body, Path        string
	CommitID, Side          string
	Line, StartLine         int
	CreatedAt, UpdatedAt    time.Time
}

// RateLimit is a rate-limit answer the layer gives to the next request:
// primary (403, X-RateLimit-Remaining: 0, reset at Reset) or secondary
// (403 with Retry-After).
type RateLimit struct {
	Secondary  bool
	Reset      time.Time
	RetryAfter time.Duration
}

// Seen is one request the layer received.
type Seen struct {
	Method, Path, IfNoneMatch, Accept string
	Status                            int
}

// NewGitHub serves a layer over prism until the test ends; violations
// left at cleanup fail the test.
func NewGitHub(t testing.TB, prism *Prism, token string) *GitHub {
	t.Helper()
	g := &GitHub{
		Token: token, prism: prism,
		client:     &http.Client{Timeout: 60 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }},
		templates:  map[string]any{},
		nextNumber: 1, nextID: 1000,
		prs: map[string]*PullRequest{}, checks: map[string][]CheckRun{}, statuses: map[string][]Status{},
		reviews: map[string][]Review{}, comments: map[string][]ReviewComment{}, logs: map[int64]string{},
	}
	srv := httptest.NewServer(g)
	g.URL = srv.URL + "/"
	t.Cleanup(func() {
		srv.Close()
		for _, v := range g.TakeViolations() {
			t.Errorf("the GitHub mock caught a request GitHub would not accept (Prism validates against its OpenAPI description), or a credential sent where it must not go: %s", v)
		}
	})
	return g
}

// TakeViolations returns and forgets the violations recorded so far.
func (g *GitHub) TakeViolations() []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	v := g.violations
	g.violations = nil
	return v
}

// Requests returns the requests received so far.
func (g *GitHub) Requests() []Seen {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]Seen(nil), g.seen...)
}

// PR returns a copy of a pull request's state (false if none).
func (g *GitHub) PR(owner, repo string, number int) (PullRequest, bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	pr, ok := g.prs[prKey(owner, repo, number)]
	if !ok {
		return PullRequest{}, false
	}
	return *pr, true
}

// UpdatePR changes a pull request's state (a new head commit, closed by
// someone, mergeable computed…).
func (g *GitHub) UpdatePR(owner, repo string, number int, f func(*PullRequest)) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if pr, ok := g.prs[prKey(owner, repo, number)]; ok {
		f(pr)
		pr.UpdatedAt = time.Now().UTC().Truncate(time.Second)
	}
}

// SetChecks sets the check runs of a commit (IDs are assigned when 0).
func (g *GitHub) SetChecks(owner, repo, sha string, runs ...CheckRun) []CheckRun {
	g.mu.Lock()
	defer g.mu.Unlock()
	for i := range runs {
		if runs[i].ID == 0 {
			runs[i].ID = g.id()
		}
	}
	g.checks[owner+"/"+repo+"@"+sha] = runs
	return runs
}

// SetStatuses sets the commit statuses of a commit.
func (g *GitHub) SetStatuses(owner, repo, sha string, st ...Status) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.statuses[owner+"/"+repo+"@"+sha] = st
}

// AddReview adds a review to a pull request and returns it with its ID.
func (g *GitHub) AddReview(owner, repo string, number int, r Review) Review {
	g.mu.Lock()
	defer g.mu.Unlock()
	r.ID = g.id()
	k := prKey(owner, repo, number)
	g.reviews[k] = append(g.reviews[k], r)
	return r
}

// AddReviewComment adds a review comment and returns it with its ID.
func (g *GitHub) AddReviewComment(owner, repo string, number int, c ReviewComment) ReviewComment {
	g.mu.Lock()
	defer g.mu.Unlock()
	c.ID = g.id()
	if c.UpdatedAt.IsZero() {
		c.UpdatedAt = c.CreatedAt
	}
	k := prKey(owner, repo, number)
	g.comments[k] = append(g.comments[k], c)
	return c
}

// SetJobLog sets the log an Actions job (its check run's ID) returns.
func (g *GitHub) SetJobLog(jobID int64, log string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.logs[jobID] = log
}

// LimitNext makes the next request answered with a rate limit.
func (g *GitHub) LimitNext(l RateLimit) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.limits = append(g.limits, l)
}

func (g *GitHub) id() int64 { g.nextID++; return g.nextID }

func prKey(owner, repo string, n int) string { return owner + "/" + repo + "#" + strconv.Itoa(n) }

// ServeHTTP authenticates, validates through Prism, and answers.
func (g *GitHub) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rec := &statusRecorder{ResponseWriter: w, status: http.StatusOK}
	defer func() {
		g.mu.Lock()
		g.seen = append(g.seen, Seen{Method: r.Method, Path: r.URL.Path, IfNoneMatch: r.Header.Get("If-None-Match"), Accept: r.Header.Get("Accept"), Status: rec.status})
		g.mu.Unlock()
	}()
	if strings.HasPrefix(r.URL.Path, "/_blob/logs/") {
		g.serveLog(rec, r) // the pre-signed log URL a job-logs call redirects to: not the API
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxRequestBody))
	if err != nil {
		http.Error(rec, "read body", http.StatusBadRequest)
		return
	}
	if g.rateLimited(rec) {
		return
	}
	if !g.authorized(r) {
		writeJSON(rec, http.StatusUnauthorized, map[string]any{"message": "Bad credentials", "documentation_url": "https://docs.github.com/rest", "status": "401"})
		return
	}
	if !acceptable(r.Header.Get("Accept")) {
		g.violation(r, "Accept header GitHub does not serve: "+strconv.Quote(r.Header.Get("Accept")))
	}
	pr, err := g.forward(r, body)
	if err != nil {
		http.Error(rec, "prism: "+err.Error(), http.StatusBadGateway)
		return
	}
	if len(pr.requestViolations) > 0 {
		g.violation(r, strings.Join(pr.requestViolations, "; "))
		pr.write(rec)
		return
	}
	status, obj, handled := g.route(rec, r, body, g.template(r.URL.Path, pr.template))
	if !handled {
		pr.write(rec)
		return
	}
	if obj == nil {
		rec.WriteHeader(status)
		return
	}
	writeConditional(rec, r, status, obj)
}

// template keeps the first response Prism generated for a path: its
// random data then stays the same across calls, so an unchanged state
// gives an unchanged body (and ETag).
func (g *GitHub) template(path string, fresh any) any {
	g.mu.Lock()
	defer g.mu.Unlock()
	if t, ok := g.templates[path]; ok {
		return cloneJSON(t)
	}
	if fresh != nil {
		g.templates[path] = cloneJSON(fresh)
	}
	return fresh
}

func (g *GitHub) violation(r *http.Request, what string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.violations = append(g.violations, r.Method+" "+r.URL.RequestURI()+": "+what)
}

func (g *GitHub) authorized(r *http.Request) bool {
	scheme, tok, _ := strings.Cut(r.Header.Get("Authorization"), " ")
	return (strings.EqualFold(scheme, "bearer") || strings.EqualFold(scheme, "token")) && tok == g.Token && g.Token != ""
}

// acceptable reports whether GitHub serves the Accept header: its JSON
// media types (application/vnd.github[.VERSION][+json]), JSON, or any.
func acceptable(accept string) bool {
	for part := range strings.SplitSeq(accept, ",") {
		mt, _, _ := strings.Cut(strings.TrimSpace(part), ";")
		if mt == "application/json" || mt == "*/*" || strings.HasPrefix(mt, "application/vnd.github") {
			return true
		}
	}
	return accept == ""
}

func (g *GitHub) rateLimited(w http.ResponseWriter) bool {
	g.mu.Lock()
	if len(g.limits) == 0 {
		g.mu.Unlock()
		return false
	}
	l := g.limits[0]
	g.limits = g.limits[1:]
	g.mu.Unlock()
	h := w.Header()
	if l.Secondary {
		h.Set("Retry-After", strconv.Itoa(int(l.RetryAfter.Seconds())))
		writeJSON(w, http.StatusForbidden, map[string]any{"message": "You have exceeded a secondary rate limit.",
			"documentation_url": "https://docs.github.com/rest/overview/rate-limits-for-the-rest-api#about-secondary-rate-limits"})
		return true
	}
	h.Set("X-RateLimit-Limit", "5000")
	h.Set("X-RateLimit-Remaining", "0")
	h.Set("X-RateLimit-Used", "5000")
	h.Set("X-RateLimit-Reset", strconv.FormatInt(l.Reset.Unix(), 10))
	h.Set("X-RateLimit-Resource", "core")
	writeJSON(w, http.StatusForbidden, map[string]any{"message": "API rate limit exceeded.", "documentation_url": "https://docs.github.com/rest/overview/rate-limits-for-the-rest-api"})
	return true
}

// serveLog serves a job's log as the pre-signed blob URL GitHub
// redirects to. Such a URL is on another host than the API: a client that
// sends its token there leaks it, and that is a violation.
func (g *GitHub) serveLog(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get("Authorization") != "" {
		g.violation(r, "the client sent its credentials to a pre-signed log URL")
	}
	id, err := strconv.ParseInt(strings.TrimPrefix(r.URL.Path, "/_blob/logs/"), 10, 64)
	g.mu.Lock()
	log, ok := g.logs[id]
	g.mu.Unlock()
	if err != nil || !ok || r.URL.Query().Get("sig") != "test" {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", "text/plain")
	http.ServeContent(w, r, "log.txt", time.Time{}, strings.NewReader(log)) // honours Range
}

// writeConditional writes obj as JSON with an ETag, or 304 when the
// request's If-None-Match names it.
func writeConditional(w http.ResponseWriter, r *http.Request, status int, obj any) {
	b, err := json.Marshal(obj)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	if etagged(w, r, status, b, false) {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

func writeJSON(w http.ResponseWriter, status int, obj any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(obj)
}

type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (s *statusRecorder) WriteHeader(code int) {
	s.status = code
	s.ResponseWriter.WriteHeader(code)
}
