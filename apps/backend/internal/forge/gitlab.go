package forge

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"

	gitlab "gitlab.com/gitlab-org/api/client-go/v2"

	"github.com/kandev/kandev/apps/backend/internal/credential"
	"github.com/kandev/kandev/apps/backend/internal/kanban"
	"github.com/kandev/kandev/apps/backend/internal/redact"
)

// DefaultGitLabURL is gitlab.com (the client adds /api/v4/).
const DefaultGitLabURL = "https://gitlab.com/"

// draftPrefix marks a draft merge request: GitLab's create call has no
// draft field; a title starting with "Draft:" makes the merge request a
// draft (docs.gitlab.com/user/project/merge_requests/drafts/).
const draftPrefix = "Draft: "

// maxGitLabTitle is GitLab's limit of a merge request's title (255
// characters).
const maxGitLabTitle = 255

// GitLabConfig is server configuration of one GitLab account.
type GitLabConfig struct {
	// URL is the instance's root (DefaultGitLabURL when empty), or its
	// API root ending in /api/v4/. http:// is taken for a loopback host
	// only (tests).
	URL string
	// Token is the server-side token (a personal, project or group access
	// token with the api scope), sent as PRIVATE-TOKEN.
	Token credential.Token
	// Transport carries the requests (default: a clone of
	// http.DefaultTransport).
	Transport http.RoundTripper
	// Timeout bounds each request (DefaultTimeout).
	Timeout time.Duration
	// UserAgent is sent with every request ("kandev" when empty).
	UserAgent string
}

// GitLab is a Forge on GitLab's REST API (v4): a pull request is a merge
// request (PR numbers are MR iids), reviews are approvals, review
// comments are diff notes, checks are the head commit's statuses (every
// CI job is one; so is each external status) and a check's log is a CI
// job's log. A Repo is a project: Owner its namespace path (groups and
// subgroups, "group/sub"), Name the project's path.
type GitLab struct {
	c      *gitlab.Client
	limits *gitlabLimits
	redact *redact.Redactor
}

var _ Forge = (*GitLab)(nil)

// NewGitLab checks cfg and makes a client. Its errors name configuration
// keys, never the token or the URL.
func NewGitLab(cfg GitLabConfig) (*GitLab, error) {
	base := cfg.URL
	if base == "" {
		base = DefaultGitLabURL
	}
	if err := checkAPIURL(base); err != nil {
		return nil, errors.New(strings.Replace(err.Error(), "api_url", "url", 1))
	}
	if cfg.Token.IsZero() {
		return nil, errors.New("the GitLab forge needs a token (token_env or token_file)")
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
	limits := &gitlabLimits{next: newConditional(transport)}
	// Retries and the client's own pacing are off: a rate limit or a
	// failure is the caller's to schedule (Backoff), and a call is never
	// repeated behind its back (a merge is not idempotent).
	c, err := gitlab.NewClient(cfg.Token.Reveal(), gitlab.WithBaseURL(base), gitlab.WithoutRetries(),
		gitlab.WithHTTPClient(&http.Client{Transport: limits, Timeout: timeout}),
		gitlab.WithCustomLimiter(unlimited{}), gitlab.WithUserAgent(ua))
	if err != nil {
		return nil, errors.New("the GitLab client could not be made from the configuration")
	}
	return &GitLab{c: c, limits: limits, redact: redact.New(cfg.Token.Reveal())}, nil
}

// unlimited is a rate limiter that never waits (see NewGitLab).
type unlimited struct{}

func (unlimited) Wait(context.Context) error { return nil }

// OpenPR opens a merge request from in.Head into in.Base; a draft's title
// gets GitLab's "Draft: " prefix.
func (g *GitLab) OpenPR(ctx context.Context, repo Repo, in NewPR) (*PR, error) {
	pid, err := projectID(repo)
	if err != nil {
		return nil, err
	}
	if err := in.check(); err != nil {
		return nil, err
	}
	title := in.Title
	if in.Draft && !isDraftTitle(title) {
		title = draftPrefix + title
	}
	if utf8.RuneCountInString(title) > maxGitLabTitle {
		return nil, invalid("title", "is too long for GitLab (255 characters, with the draft prefix)")
	}
	opt := &gitlab.CreateMergeRequestOptions{Title: &title, SourceBranch: &in.Head, TargetBranch: &in.Base}
	if in.Body != "" {
		opt.Description = &in.Body
	}
	mr, _, err := g.c.MergeRequests.CreateMergeRequest(pid, opt, gitlab.WithContext(ctx))
	if err != nil {
		return nil, mapGitLabError(whatProject, err, g.redact)
	}
	return mrOf(mr, false), nil
}

// PR reads a merge request (conditionally).
func (g *GitLab) PR(ctx context.Context, repo Repo, number int) (*PR, error) {
	pid, err := projectID(repo)
	if err != nil {
		return nil, err
	}
	if err := checkNumber(number); err != nil {
		return nil, err
	}
	mr, resp, err := g.c.MergeRequests.GetMergeRequest(pid, int64(number), nil, gitlab.WithContext(ctx))
	if glBodiless(resp) {
		return &PR{NotModified: true}, nil
	}
	if err != nil {
		return nil, mapGitLabError("the merge request", err, g.redact)
	}
	return mrOf(mr, glNotModified(resp)), nil
}

// Merge merges a merge request. GitLab merges by the project's merge
// method; "squash" squashes first, "rebase" is refused (GitLab rebases
// with a call of its own, not as a way of merging).
func (g *GitLab) Merge(ctx context.Context, repo Repo, number int, in MergeRequest) (*MergeResult, error) {
	pid, err := projectID(repo)
	if err != nil {
		return nil, err
	}
	if err := checkNumber(number); err != nil {
		return nil, err
	}
	if err := in.check(); err != nil {
		return nil, err
	}
	if in.Method == MergeRebase {
		return nil, invalid("method", `GitLab merges by the project's merge method: use "merge" or "squash"`)
	}
	opt := &gitlab.AcceptMergeRequestOptions{}
	if in.ExpectedHeadSHA != "" {
		opt.SHA = &in.ExpectedHeadSHA
	}
	msg := strings.TrimSpace(strings.TrimSpace(in.CommitTitle) + "\n\n" + in.CommitMessage)
	if in.Method == MergeSquash {
		yes := true
		opt.Squash = &yes
		if msg != "" {
			opt.SquashCommitMessage = &msg
		}
	} else if msg != "" {
		opt.MergeCommitMessage = &msg
	}
	mr, _, err := g.c.MergeRequests.AcceptMergeRequest(pid, int64(number), opt, gitlab.WithContext(ctx))
	if err != nil {
		return nil, mapGitLabError("the merge request", err, g.redact)
	}
	if mr.State != "merged" {
		return nil, newError(kanban.CodeConflict, "the forge did not merge the merge request")
	}
	sha := mr.MergeCommitSHA
	if in.Method == MergeSquash && mr.SquashCommitSHA != "" {
		sha = mr.SquashCommitSHA
	}
	if sha == "" {
		sha = mr.SHA // a fast-forward merge: the head is the result
	}
	return &MergeResult{Merged: true, SHA: sha}, nil
}

// isDraftTitle reports whether GitLab takes title as a draft's: it
// starts with "Draft:", "[Draft]" or "(Draft)" in any case.
func isDraftTitle(title string) bool {
	t := strings.ToLower(strings.TrimSpace(title))
	return strings.HasPrefix(t, "draft:") || strings.HasPrefix(t, "[draft]") || strings.HasPrefix(t, "(draft)")
}

func mrOf(mr *gitlab.MergeRequest, nm bool) *PR {
	out := &PR{
		Number: int(mr.IID), Title: mr.Title, URL: mr.WebURL, Head: mr.SourceBranch, Base: mr.TargetBranch,
		HeadSHA: mr.SHA, MergeableState: boundText(mr.DetailedMergeStatus, 100), NotModified: nm,
	}
	if out.HeadSHA == "" {
		out.HeadSHA = mr.DiffRefs.HeadSha
	}
	if mr.UpdatedAt != nil {
		out.UpdatedAt = *mr.UpdatedAt
	}
	out.Mergeable = mergeable(mr.DetailedMergeStatus)
	for _, u := range mr.Reviewers {
		if u != nil && u.Username != "" && len(out.RequestedReviewers) < maxRequested {
			out.RequestedReviewers = append(out.RequestedReviewers, boundText(u.Username, 100))
		}
	}
	switch mr.State {
	case "merged":
		out.State = PRMerged
		if mr.MergedAt != nil {
			t := *mr.MergedAt
			out.MergedAt = &t
		} else if out.UpdatedAt != (time.Time{}) {
			t := out.UpdatedAt
			out.MergedAt = &t
		}
	case "closed":
		out.State = PRClosed
	default: // opened, or locked (being merged)
		out.State = PROpen
		if mr.Draft {
			out.State = PRDraft
		}
	}
	return out
}

// mergeable reads GitLab's detailed_merge_status
// (docs.gitlab.com/api/merge_requests/#merge-status): nil while GitLab is
// still working it out, true only when it says the merge request can be
// merged now.
func mergeable(status string) *bool {
	var v bool
	switch status {
	case "unchecked", "checking", "preparing", "approvals_syncing", "":
		return nil
	case "mergeable":
		v = true
	}
	return &v
}

// projectID checks a GitLab project's namespace and path and returns the
// project's ID for the API ("namespace/path", which the client escapes
// whole into one path segment). Each part is held to GitLab's path
// characters, so nothing in it can change the request.
func projectID(r Repo) (string, error) {
	parts := strings.Split(r.Owner, "/")
	if r.Owner == "" || len(r.Owner) > 200 || len(parts) > 20 {
		return "", invalid("repo.owner", "must be a GitLab namespace path (group/subgroup; letters, digits, - _ .)")
	}
	for _, p := range parts {
		if !gitlabPath(p) {
			return "", invalid("repo.owner", "must be a GitLab namespace path (group/subgroup; letters, digits, - _ .)")
		}
	}
	if !gitlabPath(r.Name) || len(r.Name) > 100 {
		return "", invalid("repo.name", "must be a GitLab project path (letters, digits, - _ .; at most 100)")
	}
	return r.Owner + "/" + r.Name, nil
}

// gitlabPath reports whether s is a GitLab path segment: letters, digits,
// "-", "_" and "."; not starting with "-" or ".", not ending in "." and
// without "..".
func gitlabPath(s string) bool {
	return s != "" && len(s) <= 255 && nameChars(s, "-_.") && s[0] != '-' && s[0] != '.' && !strings.HasSuffix(s, ".") &&
		!strings.Contains(s, "..")
}

// glNotModified reports whether the GitLab client's response came from
// the cache after a 304.
func glNotModified(r *gitlab.Response) bool {
	return r != nil && r.Response != nil && r.Header.Get(notModifiedHeader) != ""
}

// glBodiless reports whether the GitLab client's response is a 304 to a
// caller's validator with nothing cached here (its body is empty).
func glBodiless(r *gitlab.Response) bool {
	return r != nil && r.Response != nil && r.Header.Get(bodilessHeader) != ""
}
