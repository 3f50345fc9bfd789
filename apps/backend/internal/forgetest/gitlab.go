package forgetest

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// GitLab is a FIXTURE SERVER of GitLab's REST API (v4) on loopback, for
// tests — not a mock generated from an official description. GitLab
// does publish one (doc/api/openapi/openapi_v3.yaml in gitlab-org/gitlab,
// OpenAPI 3.0, 3.9 MB), but on no package registry this project can
// install from, so it cannot be pinned here the way @octokit/openapi is.
// Instead each endpoint below cites the GitLab REST API documentation
// page its request and response shapes follow (docs.gitlab.com/api/…),
// and requests are validated strictly against those pages: a wrong
// method, an unknown path, query parameter or body field, a parameter of
// the wrong type or outside its enumeration, a missing required
// parameter, a token in the URL or a request without a token is a
// violation, answered as GitLab would (400, 404, 405) and failing the
// test at cleanup (TakeViolations lets a test that sends one on purpose
// claim it). State is held here: projects and their branches, merge
// requests, notes, approvals, commit statuses and CI job logs, changed
// by the test between calls.
//
// Two behaviours are the fixture's assumptions, not documented API: GETs
// answer with a weak ETag and 304 to a matching If-None-Match (what
// Rails' conditional GET does), and the HTTP status of a merge request
// refused for a missing source branch (409, as for a duplicate, which
// GitLab reports under the same validation).
//
// Endpoints (docs.gitlab.com):
//   - POST /projects/:id/merge_requests — api/merge_requests/#create-mr
//   - GET /projects/:id/merge_requests/:iid — api/merge_requests/#get-single-mr
//   - PUT /projects/:id/merge_requests/:iid/merge — api/merge_requests/#merge-a-merge-request
//   - GET /projects/:id/merge_requests/:iid/notes — api/notes/#list-all-merge-request-notes
//   - GET /projects/:id/merge_requests/:iid/approvals — api/merge_request_approvals/#single-merge-request-approval
//   - GET /projects/:id/repository/commits/:sha/statuses — api/commits/#list-the-statuses-of-a-commit
//   - GET /projects/:id/jobs/:job_id/trace — api/jobs/#get-a-log-file
//
// Authentication is the PRIVATE-TOKEN header or a Bearer token
// (api/rest/authentication/); errors are GitLab's {"message": …} or
// {"error": …} documents with the statuses of api/rest/troubleshooting/;
// pagination is offset pagination with the X-Page, X-Per-Page, X-Total,
// X-Total-Pages, X-Next-Page and X-Prev-Page headers (api/rest/#pagination);
// a rate limit is 429 with Retry-After and the RateLimit-* headers
// (user/gitlab_com/#rate-limits-on-gitlabcom).
type GitLab struct {
	// URL is the instance root to give a client (http://127.0.0.1:PORT/);
	// the API is under api/v4/.
	URL string
	// Token is the only token the fixture accepts.
	Token string

	mu         sync.Mutex
	nextID     int64
	projects   map[string]*GitLabProject // "group/sub/name"
	logs       map[int64]string          // job ID → its log
	limits     []GitLabLimit
	violations []string
	seen       []Seen
}

// GitLabProject is a project's state.
type GitLabProject struct {
	ID   int64
	Path string // "group/sub/name"
	// ApprovalsRequired is how many approvals a merge request needs to be
	// mergeable (1 when the project is made).
	ApprovalsRequired int
	// PipelineMustSucceed makes a merge request mergeable only when its
	// head's statuses all passed (on when the project is made).
	PipelineMustSucceed bool
	branches            map[string]string // branch → head sha
	mrs                 map[int]*GitLabMR
	notes               map[int][]GitLabNote
	approvals           map[int][]GitLabApproval
	statuses            map[string][]GitLabStatus // sha → statuses
}

// GitLabMR is a merge request's state.
type GitLabMR struct {
	ID, IID                    int64
	Title, Description         string
	SourceBranch, TargetBranch string
	SHA                        string // the source branch's head
	State                      string // opened, closed, merged
	Reviewers                  []string
	// DetailedMergeStatus, when set, is reported as it is; empty: it is
	// worked out from the state (draft, approvals, statuses).
	DetailedMergeStatus          string
	Squash                       bool   // of the merge call
	MergeSHAParam                string // the sha the merge call sent ("": none)
	MergeCommitSHA, SquashCommit string
	CreatedAt, UpdatedAt         time.Time
	MergedAt                     time.Time
}

// GitLabNote is a note on a merge request: a diff note when Path is set.
type GitLabNote struct {
	ID                   int64
	Author, Body         string
	System               bool
	Path                 string
	NewLine, OldLine     int
	StartLine            int // of a multi-line comment
	HeadSHA              string
	CreatedAt, UpdatedAt time.Time
}

// GitLabApproval is an approval of a merge request.
type GitLabApproval struct {
	UserID     int64
	Username   string
	ApprovedAt time.Time
}

// GitLabStatus is a commit status: a CI job (Job) or an external one.
type GitLabStatus struct {
	ID           int64
	Name         string
	Status       string // created, pending, running, success, failed, canceled, skipped, manual
	AllowFailure bool
	Description  string
	Job          bool // a CI job: its target is its job page, it has a log
	PipelineID   int64
	CreatedAt    time.Time // set by SetStatuses when zero
}

// GitLabLimit is a 429 the fixture gives to the next request.
type GitLabLimit struct {
	RetryAfter time.Duration // Retry-After (0: the header is left out)
	Reset      time.Time     // RateLimit-Reset
}

// NewGitLab serves a fixture until the test ends; violations left at
// cleanup fail the test.
func NewGitLab(t testing.TB, token string) *GitLab {
	t.Helper()
	g := &GitLab{Token: token, nextID: 5000, projects: map[string]*GitLabProject{}, logs: map[int64]string{}}
	srv := httptest.NewServer(g)
	g.URL = srv.URL + "/"
	t.Cleanup(func() {
		srv.Close()
		for _, v := range g.TakeViolations() {
			t.Errorf("the GitLab fixture caught a request GitLab's API docs do not allow: %s", v)
		}
	})
	return g
}

// AddProject makes a project with its branches (name → head sha).
func (g *GitLab) AddProject(path string, branches map[string]string) *GitLabProject {
	g.mu.Lock()
	defer g.mu.Unlock()
	p := &GitLabProject{ID: g.id(), Path: path, ApprovalsRequired: 1, PipelineMustSucceed: true, branches: map[string]string{},
		mrs: map[int]*GitLabMR{}, notes: map[int][]GitLabNote{}, approvals: map[int][]GitLabApproval{}, statuses: map[string][]GitLabStatus{}}
	for b, sha := range branches {
		p.branches[b] = sha
	}
	g.projects[path] = p
	return p
}

// MR returns a copy of a merge request's state (false if none).
func (g *GitLab) MR(project string, iid int) (GitLabMR, bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if p := g.projects[project]; p != nil && p.mrs[iid] != nil {
		return *p.mrs[iid], true
	}
	return GitLabMR{}, false
}

// UpdateMR changes a merge request (a push, a close, a title…).
func (g *GitLab) UpdateMR(project string, iid int, f func(*GitLabMR)) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if p := g.projects[project]; p != nil && p.mrs[iid] != nil {
		f(p.mrs[iid])
		p.mrs[iid].UpdatedAt = now()
	}
}

// AddNote adds a note to a merge request and returns it with its ID.
func (g *GitLab) AddNote(project string, iid int, n GitLabNote) GitLabNote {
	g.mu.Lock()
	defer g.mu.Unlock()
	n.ID = g.id()
	if n.UpdatedAt.IsZero() {
		n.UpdatedAt = n.CreatedAt
	}
	p := g.projects[project]
	p.notes[iid] = append(p.notes[iid], n)
	return n
}

// Approve adds an approval of a merge request.
func (g *GitLab) Approve(project string, iid int, a GitLabApproval) {
	g.mu.Lock()
	defer g.mu.Unlock()
	p := g.projects[project]
	p.approvals[iid] = append(p.approvals[iid], a)
}

// Unapprove withdraws a user's approval.
func (g *GitLab) Unapprove(project string, iid int, username string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	p := g.projects[project]
	var kept []GitLabApproval
	for _, a := range p.approvals[iid] {
		if a.Username != username {
			kept = append(kept, a)
		}
	}
	p.approvals[iid] = kept
}

// SetStatuses sets the statuses of a commit (IDs assigned when 0) and
// returns them.
func (g *GitLab) SetStatuses(project, sha string, st ...GitLabStatus) []GitLabStatus {
	g.mu.Lock()
	defer g.mu.Unlock()
	for i := range st {
		if st[i].ID == 0 {
			st[i].ID = g.id()
		}
		if st[i].CreatedAt.IsZero() {
			st[i].CreatedAt = now()
		}
	}
	g.projects[project].statuses[sha] = st
	return st
}

// SetJobLog sets a CI job's log.
func (g *GitLab) SetJobLog(jobID int64, log string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.logs[jobID] = log
}

// LimitNext makes the next request answered 429.
func (g *GitLab) LimitNext(l GitLabLimit) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.limits = append(g.limits, l)
}

// TakeViolations returns and forgets the violations recorded so far.
func (g *GitLab) TakeViolations() []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	v := g.violations
	g.violations = nil
	return v
}

// Requests returns the requests received so far.
func (g *GitLab) Requests() []Seen {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]Seen(nil), g.seen...)
}

func (g *GitLab) id() int64 { g.nextID++; return g.nextID }

func now() time.Time { return time.Now().UTC().Truncate(time.Millisecond) }

// ServeHTTP limits, authenticates, validates and answers.
func (g *GitLab) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rec := &statusRecorder{ResponseWriter: w, status: http.StatusOK}
	defer func() {
		g.mu.Lock()
		g.seen = append(g.seen, Seen{Method: r.Method, Path: r.URL.EscapedPath(), IfNoneMatch: r.Header.Get("If-None-Match"),
			Accept: r.Header.Get("Accept"), Status: rec.status})
		g.mu.Unlock()
	}()
	body, err := io.ReadAll(io.LimitReader(r.Body, maxRequestBody))
	if err != nil {
		http.Error(rec, "read body", http.StatusBadRequest)
		return
	}
	if g.rateLimited(rec) {
		return
	}
	if r.URL.Query().Has("private_token") || r.URL.Query().Has("access_token") {
		g.violation(r, "a token in the URL (it would be logged by every proxy); send PRIVATE-TOKEN")
	}
	if !g.authorized(r) {
		writeJSON(rec, http.StatusUnauthorized, map[string]any{"message": "401 Unauthorized"})
		return
	}
	rt, params, ok := g.match(rec, r)
	if !ok {
		return
	}
	in, ok := g.validate(rec, r, rt, params, body)
	if !ok {
		return
	}
	g.mu.Lock()
	res := rt.handle(g, call{params: params, query: r.URL.Query(), body: in})
	g.mu.Unlock()
	res.write(rec, r)
}

func (g *GitLab) authorized(r *http.Request) bool {
	tok := r.Header.Get("PRIVATE-TOKEN")
	if tok == "" {
		if scheme, t, _ := strings.Cut(r.Header.Get("Authorization"), " "); strings.EqualFold(scheme, "bearer") {
			tok = t
		}
	}
	return g.Token != "" && tok == g.Token
}

func (g *GitLab) violation(r *http.Request, what string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.violations = append(g.violations, r.Method+" "+r.URL.EscapedPath()+": "+what)
}

func (g *GitLab) rateLimited(w http.ResponseWriter) bool {
	g.mu.Lock()
	if len(g.limits) == 0 {
		g.mu.Unlock()
		return false
	}
	l := g.limits[0]
	g.limits = g.limits[1:]
	g.mu.Unlock()
	h := w.Header()
	h.Set("RateLimit-Limit", "2000")
	h.Set("RateLimit-Observed", "2001")
	h.Set("RateLimit-Remaining", "0")
	if !l.Reset.IsZero() {
		h.Set("RateLimit-Reset", strconv.FormatInt(l.Reset.Unix(), 10))
		h.Set("RateLimit-ResetTime", l.Reset.UTC().Format(http.TimeFormat))
	}
	if l.RetryAfter > 0 {
		h.Set("Retry-After", strconv.Itoa(int(l.RetryAfter.Seconds())))
	}
	h.Set("Content-Type", "text/plain")
	w.WriteHeader(http.StatusTooManyRequests)
	_, _ = io.WriteString(w, "Retry later\n")
	return true
}

// result is a handler's answer: JSON (obj), text, or a bare status.
type result struct {
	status int
	obj    any
	text   *string
	header http.Header
}

func jsonResult(status int, obj any) result { return result{status: status, obj: obj} }

func message(status int, msg any) result { return jsonResult(status, map[string]any{"message": msg}) }

// write answers, making a GET's 200 conditional on its weak ETag.
func (res result) write(w http.ResponseWriter, r *http.Request) {
	for k, v := range res.header {
		w.Header()[k] = v
	}
	var b []byte
	ctype := "application/json"
	switch {
	case res.text != nil:
		b, ctype = []byte(*res.text), "text/plain; charset=utf-8"
	case res.obj != nil:
		var err error
		if b, err = json.Marshal(res.obj); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
	default:
		w.WriteHeader(res.status)
		return
	}
	if r.Method == http.MethodGet && res.status == http.StatusOK && etagged(w, r, res.status, b, true) {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	w.Header().Set("Content-Type", ctype)
	w.WriteHeader(res.status)
	_, _ = w.Write(b) //nolint:gosec // G705: JSON or a log to a test client
}

// paginate applies page/per_page (GitLab's defaults: 20, at most 100) and
// sets GitLab's pagination headers.
func paginateGitLab(res *result, q url.Values, n int) (start, end int) {
	per, err := strconv.Atoi(q.Get("per_page"))
	if err != nil || per <= 0 {
		per = 20
	}
	per = min(per, 100)
	page, err := strconv.Atoi(q.Get("page"))
	if err != nil || page <= 0 {
		page = 1
	}
	pages := max((n+per-1)/per, 1)
	start = min((page-1)*per, n)
	end = min(start+per, n)
	h := http.Header{}
	h.Set("X-Page", strconv.Itoa(page))
	h.Set("X-Per-Page", strconv.Itoa(per))
	h.Set("X-Total", strconv.Itoa(n))
	h.Set("X-Total-Pages", strconv.Itoa(pages))
	next, prev := "", ""
	if page < pages {
		next = strconv.Itoa(page + 1)
	}
	if page > 1 {
		prev = strconv.Itoa(page - 1)
	}
	h.Set("X-Next-Page", next)
	h.Set("X-Prev-Page", prev)
	res.header = h
	return start, end
}
