package forge

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"

	"github.com/google/go-github/v93/github"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
	"github.com/kandev/kandev/apps/backend/internal/redact"
)

// Bounds of reading checks.
const (
	maxCheckPages = 10
	maxFailing    = 50
	// logTail is how much of a log's end is fetched (before cleaning and
	// cutting to MaxLogBytes); maxLogRead bounds reading a log whose
	// server ignores Range.
	logTail    = 64 << 10
	maxLogRead = 64 << 20
)

// Checks combines a commit's check runs (the latest of each) and its
// commit statuses.
func (g *GitHub) Checks(ctx context.Context, repo Repo, sha string) (*Checks, error) {
	if err := checkRepo(repo); err != nil {
		return nil, err
	}
	if err := checkSHA("sha", sha); err != nil {
		return nil, err
	}
	out := &Checks{SHA: sha, NotModified: true}
	anyBodiless := false
	latest := "latest"
	opts := &github.ListCheckRunsOptions{Filter: &latest, ListOptions: github.ListOptions{PerPage: perPage}}
	for range maxCheckPages {
		res, resp, err := g.c.Checks.ListCheckRunsForRef(ctx, repo.Owner, repo.Name, sha, opts)
		if err != nil {
			return nil, mapError("the commit's checks", err, g.redact)
		}
		out.NotModified = out.NotModified && notModified(resp)
		anyBodiless = anyBodiless || bodiless(resp)
		for _, run := range res.GetCheckRuns() {
			out.addRun(run)
		}
		if resp.NextPage == 0 {
			break
		}
		opts.Page = resp.NextPage
	}
	sopts := &github.ListOptions{PerPage: perPage}
	for range maxCheckPages {
		st, resp, err := g.c.Repositories.GetCombinedStatus(ctx, repo.Owner, repo.Name, sha, sopts)
		if err != nil {
			return nil, mapError("the commit's statuses", err, g.redact)
		}
		out.NotModified = out.NotModified && notModified(resp)
		anyBodiless = anyBodiless || bodiless(resp)
		for _, s := range st.GetStatuses() {
			out.addStatus(s)
		}
		if resp.NextPage == 0 {
			break
		}
		sopts.Page = resp.NextPage
	}
	return out.finish(anyBodiless, func() (*Checks, error) { return g.Checks(withoutSeeds(ctx), repo, sha) })
}

func (c *Checks) addRun(run *github.CheckRun) {
	c.Total++
	if run.GetStatus() != "completed" {
		c.Pending++
		return
	}
	switch concl := run.GetConclusion(); concl {
	case "success", "neutral", "skipped":
		c.Passed++
	default: // failure, timed_out, cancelled, action_required, startup_failure, stale
		c.Failed++
		if len(c.Failing) == maxFailing {
			return
		}
		o := run.GetOutput()
		var parts []string
		for _, s := range []string{o.GetTitle(), o.GetSummary(), o.GetText()} {
			if s = strings.TrimSpace(s); s != "" {
				parts = append(parts, s)
			}
		}
		u := run.GetDetailsURL()
		if u == "" {
			u = run.GetHTMLURL()
		}
		c.Failing = append(c.Failing, FailedCheck{ID: run.GetID(), Name: boundText(run.GetName(), 256), Kind: "check_run",
			Conclusion: concl, Summary: boundText(strings.Join(parts, "\n\n"), MaxTextBytes), URL: u,
			HasLog: run.GetApp().GetSlug() == "github-actions"})
	}
}

func (c *Checks) addStatus(s *github.RepoStatus) {
	c.Total++
	switch st := s.GetState(); st {
	case "success":
		c.Passed++
	case "pending":
		c.Pending++
	default: // failure, error
		c.Failed++
		if len(c.Failing) < maxFailing {
			c.Failing = append(c.Failing, FailedCheck{Name: boundText(s.GetContext(), 256), Kind: "status", Conclusion: st,
				Summary: boundText(s.GetDescription(), MaxTextBytes), URL: s.GetTargetURL()})
		}
	}
}

// CheckLog fetches the end of a GitHub Actions job's log (the job's ID is
// its check run's): GitHub answers with a short-lived pre-signed URL,
// which is fetched without the token, its last part only (a Range
// request), and cleaned of colour codes and timestamps.
func (g *GitHub) CheckLog(ctx context.Context, repo Repo, checkID int64) (*Log, error) {
	if err := checkRepo(repo); err != nil {
		return nil, err
	}
	if checkID < 1 {
		return nil, invalid("check_id", "must be a check run id")
	}
	u, resp, err := g.c.Actions.GetWorkflowJobLogs(ctx, repo.Owner, repo.Name, checkID, 0)
	if err != nil {
		var er *github.ErrorResponse
		if resp != nil && resp.Response != nil && !errors.As(err, &er) {
			err = &github.ErrorResponse{Response: resp.Response}
		}
		return nil, mapError("the check's log", err, g.redact)
	}
	if u == nil || u.User != nil || u.Host == "" || (u.Scheme != "https" && (u.Scheme != "http" || !isLoopback(u.Hostname()))) {
		return nil, newError(kanban.CodeUnavailable, "the forge gave no usable log location")
	}
	return g.fetchLog(ctx, u)
}

func (g *GitHub) fetchLog(ctx context.Context, u *url.URL) (*Log, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, newError(kanban.CodeUnavailable, "the forge gave no usable log location")
	}
	req.Header.Set("Range", "bytes=-"+strconv.Itoa(logTail))
	resp, err := g.logs.Do(req)
	if err != nil {
		return nil, withDetail(newError(kanban.CodeUnavailable, "the check's log could not be fetched"), err, g.redact)
	}
	defer func() { _ = resp.Body.Close() }()
	var raw []byte
	truncated := false
	switch resp.StatusCode {
	case http.StatusPartialContent:
		raw, err = io.ReadAll(io.LimitReader(resp.Body, logTail+1))
		_, total, _ := strings.Cut(resp.Header.Get("Content-Range"), "/")
		n, convErr := strconv.Atoi(total)
		truncated = convErr != nil || n > len(raw)
	case http.StatusOK:
		raw, truncated, err = tail(io.LimitReader(resp.Body, maxLogRead), logTail)
	default:
		return nil, newError(kanban.CodeUnavailable, "the check's log could not be fetched (HTTP "+strconv.Itoa(resp.StatusCode)+")")
	}
	if err != nil {
		return nil, withDetail(newError(kanban.CodeUnavailable, "the check's log could not be read"), err, g.redact)
	}
	text, cut := cleanLog(string(raw), truncated, g.redact)
	return &Log{Text: text, Truncated: truncated || cut}, nil
}

// tail reads r and keeps its last n bytes.
func tail(r io.Reader, n int) ([]byte, bool, error) {
	buf := make([]byte, 0, 2*n)
	chunk := make([]byte, 32<<10)
	dropped := false
	for {
		k, err := r.Read(chunk)
		buf = append(buf, chunk[:k]...)
		if len(buf) > 2*n {
			buf = append(buf[:0], buf[len(buf)-n:]...)
			dropped = true
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, false, err
		}
	}
	if len(buf) > n {
		buf, dropped = buf[len(buf)-n:], true
	}
	return buf, dropped, nil
}

var (
	ansiEscape   = regexp.MustCompile(`\x1b\[[0-9;?]*[ -/]*[@-~]`)
	logTimestamp = regexp.MustCompile(`(?m)^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z ?`)
)

// cleanLog drops a partial first line (when the start was cut), colour
// codes, timestamps and credentials, and keeps the last MaxLogBytes at a
// line boundary.
func cleanLog(s string, cutStart bool, r *redact.Redactor) (string, bool) {
	if cutStart {
		if i := strings.IndexByte(s, '\n'); i >= 0 {
			s = s[i+1:]
		}
	}
	s = strings.ToValidUTF8(s, "\uFFFD")
	s = ansiEscape.ReplaceAllString(s, "")
	s = logTimestamp.ReplaceAllString(s, "")
	s = strings.ReplaceAll(s, "\r\n", "\n")
	s = r.String(s)
	cut := false
	if len(s) > MaxLogBytes {
		s, cut = s[len(s)-MaxLogBytes:], true
		if i := strings.IndexByte(s, '\n'); i >= 0 {
			s = s[i+1:]
		}
	}
	return s, cut
}
