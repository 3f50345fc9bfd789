package forge

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"

	gitlab "gitlab.com/gitlab-org/api/client-go/v2"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// Checks combines the latest status of each name on a commit
// (docs.gitlab.com/api/commits/#list-the-statuses-of-a-commit): GitLab
// records every CI job of every pipeline of the commit as one, and every
// status an external CI set. A job allowed to fail passes; a manual job
// that is not allowed to fail blocks (pending).
func (g *GitLab) Checks(ctx context.Context, repo Repo, sha string) (*Checks, error) {
	pid, err := projectID(repo)
	if err != nil {
		return nil, err
	}
	if err := checkSHA("sha", sha); err != nil {
		return nil, err
	}
	out := &Checks{SHA: sha, NotModified: true}
	anyBodiless := false
	opt := &gitlab.GetCommitStatusesOptions{ListOptions: gitlab.ListOptions{PerPage: gitlabPerPage}}
	for range maxCheckPages {
		st, resp, err := g.c.Commits.GetCommitStatuses(pid, sha, opt, gitlab.WithContext(ctx))
		if glBodiless(resp) {
			anyBodiless = true
		} else if err != nil {
			return nil, mapGitLabError("the commit's statuses", err, g.redact)
		}
		out.NotModified = out.NotModified && glNotModified(resp)
		for _, s := range st {
			out.addGitLabStatus(s)
		}
		if resp == nil || resp.NextPage == 0 {
			break
		}
		opt.Page = resp.NextPage
	}
	return out.finish(anyBodiless, func() (*Checks, error) { return g.Checks(withoutSeeds(ctx), repo, sha) })
}

func (c *Checks) addGitLabStatus(s *gitlab.CommitStatus) {
	if s == nil {
		return
	}
	c.Total++
	switch st := s.Status; {
	case st == "success" || st == "skipped":
		c.Passed++
	case st == "manual" && s.AllowFailure:
		c.Passed++ // an optional manual job: not run, not blocking
	case (st == "failed" || st == "canceled") && s.AllowFailure:
		c.Passed++ // GitLab's "passed with warnings"
	case st == "failed" || st == "canceled":
		c.Failed++
		if len(c.Failing) == maxFailing {
			return
		}
		job := isJobURL(s.TargetURL, s.ID)
		kind := "status"
		if job {
			kind = "job"
		}
		c.Failing = append(c.Failing, FailedCheck{ID: s.ID, Name: boundText(s.Name, 256), Kind: kind, Conclusion: st,
			Summary: boundText(s.Description, MaxTextBytes), URL: s.TargetURL, HasLog: job})
	default: // created, waiting_for_resource, preparing, pending, running, scheduled, manual
		c.Pending++
	}
}

// isJobURL reports whether a status's target is its own CI job's page
// (…/-/jobs/ID, or …/builds/ID on old GitLab): a job has a log, an
// external status does not.
func isJobURL(target string, id int64) bool {
	u, err := url.Parse(target)
	if err != nil || id < 1 {
		return false
	}
	p := strings.TrimSuffix(u.Path, "/")
	want := "/" + strconv.FormatInt(id, 10)
	return strings.HasSuffix(p, "/-/jobs"+want) || strings.HasSuffix(p, "/builds"+want)
}

// errLogTooLong stops reading a log past maxLogRead.
var errLogTooLong = errors.New("the log is longer than the read bound")

// tailWriter keeps the last n bytes written, and refuses more than
// maxLogRead in all.
type tailWriter struct {
	n, total int
	buf      []byte
	dropped  bool
}

func (w *tailWriter) Write(p []byte) (int, error) {
	if w.total+len(p) > maxLogRead {
		p = p[:maxLogRead-w.total]
		w.keep(p)
		return len(p), errLogTooLong
	}
	w.keep(p)
	return len(p), nil
}

func (w *tailWriter) keep(p []byte) {
	w.total += len(p)
	w.buf = append(w.buf, p...)
	if len(w.buf) > 2*w.n {
		w.buf = append(w.buf[:0], w.buf[len(w.buf)-w.n:]...)
		w.dropped = true
	}
}

func (w *tailWriter) tail() ([]byte, bool) {
	if len(w.buf) > w.n {
		return w.buf[len(w.buf)-w.n:], true
	}
	return w.buf, w.dropped
}

// gitlabSection matches the section markers of a GitLab CI log
// (section_start:UNIX:NAME[OPTIONS]\r\e[0K, section_end:…).
var gitlabSection = regexp.MustCompile(`section_(?:start|end):\d+:[A-Za-z0-9_.\-]+(?:\[[^\]\r\n]*\])?\r?(?:\x1b\[0K)?`)

// CheckLog returns the end of a CI job's log
// (docs.gitlab.com/api/jobs/#get-a-log-file), read from the API with the
// token — GitLab serves it itself — at most maxLogRead of it, and
// cleaned of colour codes, section markers, timestamps and credentials.
// NOT_FOUND for an external status (it has no log).
func (g *GitLab) CheckLog(ctx context.Context, repo Repo, checkID int64) (*Log, error) {
	pid, err := projectID(repo)
	if err != nil {
		return nil, err
	}
	if checkID < 1 {
		return nil, invalid("check_id", "must be a CI job id")
	}
	path := "projects/" + gitlab.PathEscape(pid) + "/jobs/" + strconv.FormatInt(checkID, 10) + "/trace"
	req, err := g.c.NewRequest(http.MethodGet, path, nil, []gitlab.RequestOptionFunc{gitlab.WithContext(withoutCache(ctx))})
	if err != nil {
		return nil, newError(kanban.CodeInternal, "the log request could not be made")
	}
	w := &tailWriter{n: logTail}
	_, err = g.c.Do(req, w)
	truncated := false
	switch {
	case errors.Is(err, errLogTooLong):
		truncated = true
	case err != nil:
		return nil, mapGitLabError("the check's log", err, g.redact)
	}
	raw, cut := w.tail()
	text := gitlabSection.ReplaceAllString(string(raw), "")
	text, cut2 := cleanLog(text, cut, g.redact)
	return &Log{Text: text, Truncated: truncated || cut || cut2}, nil
}
