package forgetest

import (
	"crypto/sha1" // #nosec G505 -- a fake commit id, not security
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// SetBranch makes a branch exist on the forge with its head commit (a pull
// request can only be opened from an existing branch).
func (g *GitHub) SetBranch(owner, repo, branch, sha string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.branches == nil {
		g.branches = map[string]string{}
	}
	g.branches[owner+"/"+repo+":"+branch] = sha
}

// route answers the endpoints the layer models; handled is false for the
// others, which get Prism's answer.
func (g *GitHub) route(w http.ResponseWriter, r *http.Request, body []byte, tmpl any) (status int, obj any, handled bool) {
	p := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	if len(p) < 4 || p[0] != "repos" {
		return 0, nil, false
	}
	owner, repo, rest := p[1], p[2], p[3:]
	g.mu.Lock()
	defer g.mu.Unlock()
	switch {
	case r.Method == http.MethodPost && len(rest) == 1 && rest[0] == "pulls":
		return g.createPR(owner, repo, body, tmpl)
	case len(rest) >= 2 && rest[0] == "pulls":
		n, err := strconv.Atoi(rest[1])
		pr, ok := g.prs[prKey(owner, repo, n)]
		if err != nil || !ok {
			return http.StatusNotFound, notFound(), true
		}
		switch {
		case r.Method == http.MethodGet && len(rest) == 2:
			return http.StatusOK, prJSON(g.URL, pr, tmpl), true
		case r.Method == http.MethodPut && len(rest) == 3 && rest[2] == "merge":
			return g.merge(pr, body)
		case r.Method == http.MethodGet && len(rest) == 3 && rest[2] == "reviews":
			return g.listReviews(w, r, pr, tmpl)
		case r.Method == http.MethodGet && len(rest) == 3 && rest[2] == "comments":
			return g.listComments(w, r, pr, tmpl)
		}
	case r.Method == http.MethodGet && len(rest) == 3 && rest[0] == "commits" && rest[2] == "check-runs":
		return g.listChecks(w, r, owner, repo, rest[1], tmpl)
	case r.Method == http.MethodGet && len(rest) == 3 && rest[0] == "commits" && rest[2] == "status":
		return g.combinedStatus(owner, repo, rest[1], tmpl)
	case r.Method == http.MethodGet && len(rest) == 4 && rest[0] == "actions" && rest[1] == "jobs" && rest[3] == "logs":
		id, err := strconv.ParseInt(rest[2], 10, 64)
		if _, ok := g.logs[id]; err != nil || !ok {
			return http.StatusNotFound, notFound(), true
		}
		w.Header().Set("Location", g.URL+"_blob/logs/"+rest[2]+"?sig=test")
		return http.StatusFound, nil, true
	}
	return 0, nil, false
}

func notFound() map[string]any {
	return map[string]any{"message": "Not Found", "documentation_url": "https://docs.github.com/rest", "status": "404"}
}

func validationFailed(field, code, msg string) map[string]any {
	e := map[string]any{"resource": "PullRequest", "code": code}
	if field != "" {
		e["field"] = field
	}
	if msg != "" {
		e["message"] = msg
	}
	return map[string]any{"message": "Validation Failed", "errors": []any{e}, "documentation_url": "https://docs.github.com/rest/pulls/pulls#create-a-pull-request", "status": "422"}
}

func (g *GitHub) createPR(owner, repo string, body []byte, tmpl any) (int, any, bool) {
	var in struct {
		Title, Head, Base, Body string
		Draft                   bool
	}
	if err := json.Unmarshal(body, &in); err != nil {
		return http.StatusBadRequest, map[string]any{"message": "Problems parsing JSON"}, true
	}
	sha, ok := g.branches[owner+"/"+repo+":"+in.Head]
	if !ok {
		return http.StatusUnprocessableEntity, validationFailed("head", "invalid", ""), true
	}
	if _, ok := g.branches[owner+"/"+repo+":"+in.Base]; !ok {
		return http.StatusUnprocessableEntity, validationFailed("base", "invalid", ""), true
	}
	for _, pr := range g.prs {
		if pr.Owner == owner && pr.Repo == repo && pr.Head == in.Head && pr.Base == in.Base && !pr.Closed {
			return http.StatusUnprocessableEntity, validationFailed("", "custom", "A pull request already exists for "+owner+":"+in.Head+"."), true
		}
	}
	yes := true
	now := time.Now().UTC().Truncate(time.Second)
	pr := &PullRequest{Owner: owner, Repo: repo, Number: g.nextNumber, Title: in.Title, Body: in.Body, Head: in.Head, Base: in.Base,
		HeadSHA: sha, Draft: in.Draft, Mergeable: &yes, MergeableState: "clean", UpdatedAt: now}
	g.nextNumber++
	g.prs[prKey(owner, repo, pr.Number)] = pr
	return http.StatusCreated, prJSON(g.URL, pr, tmpl), true
}

func (g *GitHub) merge(pr *PullRequest, body []byte) (int, any, bool) {
	var in struct {
		SHA         string `json:"sha"`
		MergeMethod string `json:"merge_method"`
	}
	_ = json.Unmarshal(body, &in)
	switch {
	case pr.Merged || pr.Closed || pr.Draft || pr.Mergeable == nil || !*pr.Mergeable:
		return http.StatusMethodNotAllowed, map[string]any{"message": "Pull Request is not mergeable", "documentation_url": "https://docs.github.com/rest/pulls/pulls#merge-a-pull-request", "status": "405"}, true
	case in.SHA != "" && in.SHA != pr.HeadSHA:
		return http.StatusConflict, map[string]any{"message": "Head branch was modified. Review and try the merge again.", "documentation_url": "https://docs.github.com/rest/pulls/pulls#merge-a-pull-request", "status": "409"}, true
	}
	sum := sha1.Sum([]byte(pr.HeadSHA + in.MergeMethod)) // #nosec G401 -- a fake commit id
	pr.Merged, pr.Closed, pr.MergeMethod, pr.MergeCommitSHA = true, true, in.MergeMethod, hex.EncodeToString(sum[:])
	pr.MergedAt = time.Now().UTC().Truncate(time.Second)
	pr.UpdatedAt = pr.MergedAt
	pr.MergeableState = "unknown"
	return http.StatusOK, map[string]any{"sha": pr.MergeCommitSHA, "merged": true, "message": "Pull Request successfully merged"}, true
}

// prJSON lays a pull request's state over Prism's generated one.
func prJSON(base string, pr *PullRequest, tmpl any) map[string]any {
	m := object(tmpl)
	state := "open"
	if pr.Closed || pr.Merged {
		state = "closed"
	}
	html := strings.TrimSuffix(base, "/") + "/" + pr.Owner + "/" + pr.Repo + "/pull/" + strconv.Itoa(pr.Number)
	set(m, map[string]any{
		"number": pr.Number, "state": state, "title": pr.Title, "body": pr.Body, "draft": pr.Draft, "merged": pr.Merged,
		"mergeable": pr.Mergeable, "mergeable_state": pr.MergeableState, "html_url": html,
		"url":       base + "repos/" + pr.Owner + "/" + pr.Repo + "/pulls/" + strconv.Itoa(pr.Number),
		"merged_at": timeOrNil(pr.MergedAt), "closed_at": timeOrNil(pr.MergedAt), "updated_at": pr.UpdatedAt.Format(time.RFC3339),
		"merge_commit_sha": nilIfEmpty(pr.MergeCommitSHA),
	})
	reviewers := []any{}
	for _, login := range pr.RequestedReviewers {
		reviewers = append(reviewers, user(m["user"], login)) // the author's generated user: every field GitHub documents
	}
	m["requested_reviewers"], m["requested_teams"] = reviewers, []any{}
	head, baseRef := object(m["head"]), object(m["base"])
	set(head, map[string]any{"ref": pr.Head, "sha": pr.HeadSHA, "label": pr.Owner + ":" + pr.Head})
	set(baseRef, map[string]any{"ref": pr.Base, "label": pr.Owner + ":" + pr.Base})
	m["head"], m["base"] = head, baseRef
	return m
}

func (g *GitHub) listReviews(w http.ResponseWriter, r *http.Request, pr *PullRequest, tmpl any) (int, any, bool) {
	all := g.reviews[prKey(pr.Owner, pr.Repo, pr.Number)]
	start, end := paginate(w, r, len(all))
	out := []any{}
	for _, rv := range all[start:end] {
		m := object(cloneJSON(item(tmpl))) // a copy per item: they must not share maps
		set(m, map[string]any{"id": rv.ID, "body": rv.Body, "state": rv.State, "commit_id": rv.CommitID,
			"submitted_at": timeOrNil(rv.SubmittedAt), "user": user(m["user"], rv.User)})
		out = append(out, m)
	}
	return http.StatusOK, out, true
}

func (g *GitHub) listComments(w http.ResponseWriter, r *http.Request, pr *PullRequest, tmpl any) (int, any, bool) {
	var all []ReviewComment
	since, _ := time.Parse(time.RFC3339, r.URL.Query().Get("since"))
	for _, c := range g.comments[prKey(pr.Owner, pr.Repo, pr.Number)] {
		if !c.UpdatedAt.Before(since) { // GitHub: updated at or after since
			all = append(all, c)
		}
	}
	start, end := paginate(w, r, len(all))
	out := []any{}
	for _, c := range all[start:end] {
		m := object(cloneJSON(item(tmpl))) // a copy per item: they must not share maps
		set(m, map[string]any{"id": c.ID, "pull_request_review_id": c.ReviewID, "body": c.Body, "path": c.Path, "commit_id": c.CommitID,
			"line": intOrNil(c.Line), "start_line": intOrNil(c.StartLine), "side": nilIfEmpty(c.Side), "in_reply_to_id": c.InReplyTo,
			"created_at": c.CreatedAt.Format(time.RFC3339), "updated_at": c.UpdatedAt.Format(time.RFC3339), "user": user(m["user"], c.User)})
		if c.InReplyTo == 0 {
			delete(m, "in_reply_to_id")
		}
		out = append(out, m)
	}
	return http.StatusOK, out, true
}

func (g *GitHub) listChecks(w http.ResponseWriter, r *http.Request, owner, repo, sha string, tmpl any) (int, any, bool) {
	all := g.checks[owner+"/"+repo+"@"+sha]
	start, end := paginate(w, r, len(all))
	m := object(tmpl)
	runTmpl := item(m["check_runs"])
	runs := []any{}
	for _, c := range all[start:end] {
		run := object(cloneJSON(runTmpl))
		out := object(run["output"])
		set(out, map[string]any{"title": nilIfEmpty(c.Title), "summary": nilIfEmpty(c.Summary), "text": nilIfEmpty(c.Text)})
		app := object(run["app"])
		if c.AppSlug != "" {
			set(app, map[string]any{"slug": c.AppSlug})
		}
		set(run, map[string]any{"id": c.ID, "name": c.Name, "status": c.Status, "conclusion": nilIfEmpty(c.Conclusion), "head_sha": sha,
			"details_url": nilIfEmpty(c.DetailsURL), "html_url": nilIfEmpty(c.DetailsURL), "output": out, "app": app,
			"started_at": timeOrNil(c.StartedAt), "completed_at": timeOrNil(c.CompletedAt)})
		runs = append(runs, run)
	}
	set(m, map[string]any{"total_count": len(all), "check_runs": runs})
	return http.StatusOK, m, true
}

func (g *GitHub) combinedStatus(owner, repo, sha string, tmpl any) (int, any, bool) {
	all := g.statuses[owner+"/"+repo+"@"+sha]
	m := object(tmpl)
	stTmpl := item(m["statuses"])
	state := "success"
	if len(all) == 0 {
		state = "pending" // GitHub's combined state of a commit without statuses
	}
	list := []any{}
	for _, s := range all {
		switch {
		case s.State == "failure" || s.State == "error":
			state = "failure"
		case s.State == "pending" && state != "failure":
			state = "pending"
		}
		st := object(cloneJSON(stTmpl))
		set(st, map[string]any{"context": s.Context, "state": s.State, "description": nilIfEmpty(s.Description), "target_url": nilIfEmpty(s.TargetURL)})
		list = append(list, st)
	}
	set(m, map[string]any{"state": state, "sha": sha, "total_count": len(all), "statuses": list})
	return http.StatusOK, m, true
}

// paginate applies page/per_page (GitHub's defaults: 30, at most 100)
// and sets the Link header a client follows.
func paginate(w http.ResponseWriter, r *http.Request, n int) (start, end int) {
	q := r.URL.Query()
	per, err := strconv.Atoi(q.Get("per_page"))
	if err != nil || per <= 0 {
		per = 30
	}
	per = min(per, 100)
	page, err := strconv.Atoi(q.Get("page"))
	if err != nil || page <= 0 {
		page = 1
	}
	start = min((page-1)*per, n)
	end = min(start+per, n)
	if end < n {
		next := *r.URL
		q.Set("page", strconv.Itoa(page+1))
		q.Set("per_page", strconv.Itoa(per))
		next.RawQuery = q.Encode()
		u := url.URL{Scheme: "http", Host: r.Host, Path: next.Path, RawQuery: next.RawQuery}
		w.Header().Set("Link", "<"+u.String()+`>; rel="next"`)
	}
	return start, end
}

func object(v any) map[string]any {
	if m, ok := v.(map[string]any); ok {
		return m
	}
	return map[string]any{}
}

// item returns a list's first element as the template of its items.
func item(v any) any {
	if l, ok := v.([]any); ok && len(l) > 0 {
		return l[0]
	}
	return nil
}

func set(m map[string]any, kv map[string]any) {
	for k, v := range kv {
		m[k] = v
	}
}

func user(tmpl any, login string) map[string]any {
	u := object(cloneJSON(tmpl))
	u["login"] = login
	u["type"] = "User"
	return u
}

func cloneJSON(v any) any {
	b, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	var out any
	_ = json.Unmarshal(b, &out)
	return out
}

func timeOrNil(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t.UTC().Format(time.RFC3339)
}

func nilIfEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func intOrNil(n int) any {
	if n == 0 {
		return nil
	}
	return n
}
