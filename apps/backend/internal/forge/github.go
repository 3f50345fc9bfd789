package forge

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/go-github/v93/github"

	"github.com/kandev/kandev/apps/backend/internal/credential"
	"github.com/kandev/kandev/apps/backend/internal/kanban"
	"github.com/kandev/kandev/apps/backend/internal/redact"
)

// DefaultGitHubAPI is github.com's REST API root.
const DefaultGitHubAPI = "https://api.github.com/"

// DefaultTimeout bounds one forge request.
const DefaultTimeout = 30 * time.Second

// maxRequested bounds a pull request's requested reviewers (GitHub allows
// 15 users and teams together).
const maxRequested = 50

// GitHubConfig is server configuration of one GitHub account.
type GitHubConfig struct {
	// APIURL is the REST API root: DefaultGitHubAPI when empty, or a
	// GitHub Enterprise Server's https://HOST/api/v3/. http:// is taken
	// for a loopback host only (tests).
	APIURL string
	// Token is the server-side token (credential.Source.Load).
	Token credential.Token
	// Transport carries the requests (default: a clone of
	// http.DefaultTransport).
	Transport http.RoundTripper
	// Timeout bounds each request (DefaultTimeout).
	Timeout time.Duration
	// UserAgent is sent with every request ("kandev" when empty).
	UserAgent string
}

// GitHub is a Forge on GitHub's REST API.
type GitHub struct {
	c      *github.Client
	logs   *http.Client // fetches pre-signed log URLs, never with the token
	redact *redact.Redactor
}

var _ Forge = (*GitHub)(nil)

// NewGitHub checks cfg and makes a client. Its errors name configuration
// keys, never the token or the URL.
func NewGitHub(cfg GitHubConfig) (*GitHub, error) {
	api := cfg.APIURL
	if api == "" {
		api = DefaultGitHubAPI
	}
	if err := checkAPIURL(api); err != nil {
		return nil, err
	}
	if !strings.HasSuffix(api, "/") {
		api += "/"
	}
	if cfg.Token.IsZero() {
		return nil, errors.New("the GitHub forge needs a token (token_env or token_file)")
	}
	timeout := cfg.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	transport := cfg.Transport
	if transport == nil {
		transport = http.DefaultTransport.(*http.Transport).Clone()
	}
	ua := cfg.UserAgent
	if ua == "" {
		ua = "kandev"
	}
	httpClient := &http.Client{Transport: newConditional(transport), Timeout: timeout}
	c, err := github.NewClient(github.WithHTTPClient(httpClient), github.WithAuthToken(cfg.Token.Reveal()),
		github.WithURLs(&api, &api), github.WithUserAgent(ua))
	if err != nil {
		return nil, errors.New("the GitHub client could not be made from the configuration")
	}
	logs := &http.Client{Transport: transport, Timeout: timeout, CheckRedirect: func(*http.Request, []*http.Request) error {
		return http.ErrUseLastResponse
	}}
	return &GitHub{c: c, logs: logs, redact: redact.New(cfg.Token.Reveal())}, nil
}

// checkAPIURL accepts https URLs, and http for loopback hosts.
func checkAPIURL(raw string) error {
	u, err := url.Parse(raw)
	bad := errors.New("api_url must be an https URL (http only for a loopback host), without credentials, query or fragment")
	if err != nil || u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return bad
	}
	if u.Scheme == "https" {
		return nil
	}
	if u.Scheme == "http" && isLoopback(u.Hostname()) {
		return nil
	}
	return bad
}

func isLoopback(host string) bool {
	ip := net.ParseIP(host)
	return host == "localhost" || ip != nil && ip.IsLoopback()
}

// OpenPR opens a pull request from in.Head into in.Base.
func (g *GitHub) OpenPR(ctx context.Context, repo Repo, in NewPR) (*PR, error) {
	if err := checkRepo(repo); err != nil {
		return nil, err
	}
	if err := in.check(); err != nil {
		return nil, err
	}
	req := github.CreatePullRequest{Title: &in.Title, Head: in.Head, Base: in.Base, Draft: &in.Draft}
	if in.Body != "" {
		req.Body = &in.Body
	}
	p, _, err := g.c.PullRequests.Create(ctx, repo.Owner, repo.Name, req)
	if err != nil {
		return nil, mapError("the repository", err, g.redact)
	}
	return prOf(p, false), nil
}

// PR reads a pull request (conditionally).
func (g *GitHub) PR(ctx context.Context, repo Repo, number int) (*PR, error) {
	if err := checkRepo(repo); err != nil {
		return nil, err
	}
	if err := checkNumber(number); err != nil {
		return nil, err
	}
	p, resp, err := g.c.PullRequests.Get(ctx, repo.Owner, repo.Name, number)
	if err != nil {
		return nil, mapError("the pull request", err, g.redact)
	}
	if bodiless(resp) {
		return &PR{NotModified: true}, nil
	}
	return prOf(p, notModified(resp)), nil
}

// Merge merges a pull request.
func (g *GitHub) Merge(ctx context.Context, repo Repo, number int, in MergeRequest) (*MergeResult, error) {
	if err := checkRepo(repo); err != nil {
		return nil, err
	}
	if err := checkNumber(number); err != nil {
		return nil, err
	}
	if err := in.check(); err != nil {
		return nil, err
	}
	opts := &github.PullRequestOptions{MergeMethod: string(in.Method), SHA: in.ExpectedHeadSHA, CommitTitle: in.CommitTitle}
	res, _, err := g.c.PullRequests.Merge(ctx, repo.Owner, repo.Name, number, in.CommitMessage, opts)
	if err != nil {
		return nil, mapError("the pull request", err, g.redact)
	}
	if !res.GetMerged() {
		return nil, newError(kanban.CodeConflict, "the forge did not merge the pull request")
	}
	return &MergeResult{Merged: true, SHA: res.GetSHA()}, nil
}

func prOf(p *github.PullRequest, nm bool) *PR {
	out := &PR{
		Number: p.GetNumber(), Title: p.GetTitle(), URL: p.GetHTMLURL(),
		Head: p.GetHead().GetRef(), Base: p.GetBase().GetRef(), HeadSHA: p.GetHead().GetSHA(),
		Mergeable: p.Mergeable, MergeableState: p.GetMergeableState(), UpdatedAt: p.GetUpdatedAt().Time,
		NotModified: nm,
	}
	for _, u := range p.RequestedReviewers {
		if l := u.GetLogin(); l != "" && len(out.RequestedReviewers) < maxRequested {
			out.RequestedReviewers = append(out.RequestedReviewers, boundText(l, 100))
		}
	}
	switch {
	case p.GetMerged() || p.MergedAt != nil:
		out.State = PRMerged
		t := p.GetMergedAt().Time
		out.MergedAt = &t
	case p.GetState() == "closed":
		out.State = PRClosed
	case p.GetDraft():
		out.State = PRDraft
	default:
		out.State = PROpen
	}
	return out
}

// Input checks. Owner and name reach URL paths: they are held to GitHub's
// own character rules, so no "..", "/" or "?" can change the request.

func checkRepo(r Repo) error {
	if r.Owner == "" || len(r.Owner) > 39 || !nameChars(r.Owner, "-") || r.Owner[0] == '-' {
		return invalid("repo.owner", "must be a GitHub user or organization name (letters, digits, -; at most 39)")
	}
	if r.Name == "" || len(r.Name) > 100 || !nameChars(r.Name, "-_.") || r.Name == "." || r.Name == ".." {
		return invalid("repo.name", "must be a GitHub repository name (letters, digits, - _ .; at most 100)")
	}
	return nil
}

func nameChars(s, punct string) bool {
	for _, c := range s {
		if (c < 'a' || c > 'z') && (c < 'A' || c > 'Z') && (c < '0' || c > '9') && !strings.ContainsRune(punct, c) {
			return false
		}
	}
	return true
}

func checkNumber(n int) error {
	if n < 1 || n > 1<<31-1 {
		return invalid("number", "must be a pull request number")
	}
	return nil
}

func checkSHA(field, s string) error {
	if (len(s) != 40 && len(s) != 64) || strings.Trim(s, "0123456789abcdef") != "" {
		return invalid(field, "must be a full commit id (40 or 64 lowercase hex digits)")
	}
	return nil
}

// checkRef refuses a head or base that is empty or that
// kanban.CheckBranch refuses (a pull request's head is the task branch of
// the same repository, so "owner:branch" fork heads are not taken).
func checkRef(field, s string) error {
	if s == "" {
		return invalid(field, "is required")
	}
	var ke *kanban.Error
	if err := kanban.CheckBranch(field, s); errors.As(err, &ke) {
		return &Error{Safe: ke}
	} else if err != nil {
		return err
	}
	return nil
}

func checkText(field, s string, maxLen int, multiline bool) error {
	switch {
	case len(s) > maxLen:
		return invalid(field, "is too long")
	case !utf8.ValidString(s) || strings.ContainsRune(s, 0):
		return invalid(field, "must be valid UTF-8 without NUL")
	case !multiline && strings.ContainsAny(s, "\r\n"):
		return invalid(field, "must be a single line")
	}
	return nil
}

func (in NewPR) check() error {
	if strings.TrimSpace(in.Title) == "" {
		return invalid("title", "is required")
	}
	if err := checkText("title", in.Title, 256, false); err != nil {
		return err
	}
	if err := checkText("body", in.Body, 65536, true); err != nil {
		return err
	}
	if err := checkRef("head", in.Head); err != nil {
		return err
	}
	return checkRef("base", in.Base)
}

func (in MergeRequest) check() error {
	switch in.Method {
	case MergeCommit, MergeSquash, MergeRebase:
	default:
		return invalid("method", `must be "merge", "squash" or "rebase"`)
	}
	if in.ExpectedHeadSHA != "" {
		if err := checkSHA("expected_head_sha", in.ExpectedHeadSHA); err != nil {
			return err
		}
	}
	if err := checkText("commit_title", in.CommitTitle, 256, false); err != nil {
		return err
	}
	return checkText("commit_message", in.CommitMessage, 65536, true)
}

// boundText cuts s to at most n bytes at a rune boundary.
func boundText(s string, n int) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}
