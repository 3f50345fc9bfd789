package forgetest

import (
	"bytes"
	"encoding/json"
	"mime"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// glParam is a query or body parameter as a docs page describes it.
type glParam struct {
	kind     string   // int, bool, string, enum, ints, strings
	enum     []string // for enum
	required bool
}

var (
	pInt    = glParam{kind: "int"}
	pBool   = glParam{kind: "bool"}
	pString = glParam{kind: "string"}
	pInts   = glParam{kind: "ints"}
	pSort   = glParam{kind: "enum", enum: []string{"asc", "desc"}}
	pPage   = map[string]glParam{"page": pInt, "per_page": pInt}
)

func required(p glParam) glParam { p.required = true; return p }

func with(m map[string]glParam, more map[string]glParam) map[string]glParam {
	out := map[string]glParam{}
	for k, v := range m {
		out[k] = v
	}
	for k, v := range more {
		out[k] = v
	}
	return out
}

// call is a validated request.
type call struct {
	params map[string]string // path parameters, unescaped
	query  url.Values
	body   map[string]any
}

// glRoute is one endpoint: its method, path (":name" segments are
// parameters), parameters and handler.
type glRoute struct {
	method  string
	pattern string
	query   map[string]glParam
	body    map[string]glParam // nil: no body
	handle  func(g *GitLab, c call) result
}

// gitlabRoutes are the endpoints the fixture serves; each follows the
// docs page named above it.
var gitlabRoutes = []glRoute{
	// docs.gitlab.com/api/merge_requests/#create-mr
	{method: http.MethodPost, pattern: "projects/:id/merge_requests", body: map[string]glParam{
		"title": required(pString), "source_branch": required(pString), "target_branch": required(pString),
		"description": pString, "assignee_id": pInt, "assignee_ids": pInts, "reviewer_ids": pInts, "labels": pString,
		"milestone_id": pInt, "remove_source_branch": pBool, "squash": pBool, "allow_collaboration": pBool,
		"allow_maintainer_to_push": pBool, "target_project_id": pInt, "approvals_before_merge": pInt, "merge_after": pString,
	}, handle: (*GitLab).createMR},
	// docs.gitlab.com/api/merge_requests/#get-single-mr
	{method: http.MethodGet, pattern: "projects/:id/merge_requests/:iid", query: map[string]glParam{
		"render_html": pBool, "include_diverged_commits_count": pBool, "include_rebase_in_progress": pBool,
	}, handle: (*GitLab).getMR},
	// docs.gitlab.com/api/merge_requests/#merge-a-merge-request
	{method: http.MethodPut, pattern: "projects/:id/merge_requests/:iid/merge", body: map[string]glParam{
		"merge_commit_message": pString, "squash_commit_message": pString, "squash": pBool, "should_remove_source_branch": pBool,
		"merge_when_pipeline_succeeds": pBool, "auto_merge": pBool, "sha": pString,
	}, handle: (*GitLab).mergeMR},
	// docs.gitlab.com/api/notes/#list-all-merge-request-notes
	{method: http.MethodGet, pattern: "projects/:id/merge_requests/:iid/notes", query: with(pPage, map[string]glParam{
		"sort": pSort, "order_by": {kind: "enum", enum: []string{"created_at", "updated_at"}},
	}), handle: (*GitLab).listNotes},
	// docs.gitlab.com/api/merge_request_approvals/#single-merge-request-approval
	{method: http.MethodGet, pattern: "projects/:id/merge_requests/:iid/approvals", handle: (*GitLab).approvalsOf},
	// docs.gitlab.com/api/commits/#list-the-statuses-of-a-commit
	{method: http.MethodGet, pattern: "projects/:id/repository/commits/:sha/statuses", query: with(pPage, map[string]glParam{
		"ref": pString, "stage": pString, "name": pString, "pipeline_id": pInt, "all": pBool,
		"order_by": {kind: "enum", enum: []string{"id", "pipeline_id"}}, "sort": pSort,
	}), handle: (*GitLab).listStatuses},
	// docs.gitlab.com/api/jobs/#get-a-log-file
	{method: http.MethodGet, pattern: "projects/:id/jobs/:job_id/trace", handle: (*GitLab).trace},
}

// match finds the route of r, answering 404 or 405 (a violation) when
// there is none.
func (g *GitLab) match(w http.ResponseWriter, r *http.Request) (glRoute, map[string]string, bool) {
	rest, ok := strings.CutPrefix(r.URL.EscapedPath(), "/api/v4/")
	if !ok {
		g.violation(r, "not under GitLab's API root /api/v4/")
		writeJSON(w, http.StatusNotFound, map[string]any{"error": "404 Not Found"})
		return glRoute{}, nil, false
	}
	segs := strings.Split(strings.TrimSuffix(rest, "/"), "/")
	methods := []string{}
	for _, rt := range gitlabRoutes {
		params, ok := matchPattern(rt.pattern, segs)
		if !ok {
			continue
		}
		if rt.method == r.Method {
			return rt, params, true
		}
		methods = append(methods, rt.method)
	}
	if len(methods) > 0 {
		g.violation(r, "method not allowed (GitLab's docs allow "+strings.Join(methods, ", ")+")")
		w.Header().Set("Allow", strings.Join(methods, ", "))
		writeJSON(w, http.StatusMethodNotAllowed, map[string]any{"error": "405 Not Allowed"})
		return glRoute{}, nil, false
	}
	g.violation(r, "no such endpoint in GitLab's API")
	writeJSON(w, http.StatusNotFound, map[string]any{"error": "404 Not Found"})
	return glRoute{}, nil, false
}

func matchPattern(pattern string, segs []string) (map[string]string, bool) {
	pat := strings.Split(pattern, "/")
	if len(pat) != len(segs) {
		return nil, false
	}
	params := map[string]string{}
	for i, p := range pat {
		v, err := url.PathUnescape(segs[i])
		if err != nil {
			return nil, false
		}
		if name, ok := strings.CutPrefix(p, ":"); ok {
			params[name] = v
		} else if p != v {
			return nil, false
		}
	}
	return params, true
}

var positiveInt = regexp.MustCompile(`^[1-9][0-9]{0,17}$`)

// validate checks path parameters, the query and the body against the
// route; a failure is a violation answered 400 as GitLab (Grape) would.
func (g *GitLab) validate(w http.ResponseWriter, r *http.Request, rt glRoute, params map[string]string, body []byte) (map[string]any, bool) {
	var problems []string
	for _, name := range []string{"iid", "job_id"} {
		if v, ok := params[name]; ok && !positiveInt.MatchString(v) {
			problems = append(problems, name+" is invalid")
		}
	}
	for k, vs := range r.URL.Query() {
		p, ok := rt.query[k]
		if k == "private_token" || k == "access_token" {
			continue // a violation of its own (ServeHTTP)
		}
		if !ok {
			problems = append(problems, "unknown query parameter "+strconv.Quote(k))
			continue
		}
		for _, v := range vs {
			if !p.accepts(v) {
				problems = append(problems, k+" does not have a valid value")
			}
		}
	}
	in, bodyProblems := checkBody(r, rt, body)
	problems = append(problems, bodyProblems...)
	if len(problems) > 0 {
		g.violation(r, strings.Join(problems, "; "))
		writeJSON(w, http.StatusBadRequest, map[string]any{"error": strings.Join(problems, ", ")})
		return nil, false
	}
	return in, true
}

func checkBody(r *http.Request, rt glRoute, body []byte) (map[string]any, []string) {
	if len(bytes.TrimSpace(body)) == 0 {
		if rt.body == nil {
			return nil, nil
		}
		body = []byte("{}")
	} else if rt.body == nil {
		return nil, []string{"a body on an endpoint that takes none"}
	} else if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
		return nil, []string{"a JSON body without Content-Type: application/json"}
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var in map[string]any
	if err := dec.Decode(&in); err != nil || in == nil {
		return nil, []string{"the body is not a JSON object"}
	}
	var problems []string
	for k, v := range in {
		p, ok := rt.body[k]
		switch {
		case !ok:
			problems = append(problems, "unknown body field "+strconv.Quote(k))
		case !p.acceptsJSON(v):
			problems = append(problems, k+" is invalid")
		}
	}
	for k, p := range rt.body {
		if _, ok := in[k]; p.required && !ok {
			problems = append(problems, k+" is missing")
		}
	}
	slices.Sort(problems)
	return in, problems
}

// accepts checks a query value.
func (p glParam) accepts(v string) bool {
	switch p.kind {
	case "int":
		_, err := strconv.ParseInt(v, 10, 64)
		return err == nil
	case "bool":
		return v == "true" || v == "false"
	case "enum":
		return slices.Contains(p.enum, v)
	}
	return true
}

// acceptsJSON checks a body value.
func (p glParam) acceptsJSON(v any) bool {
	switch p.kind {
	case "int":
		n, ok := v.(json.Number)
		_, err := n.Int64()
		return ok && err == nil
	case "bool":
		_, ok := v.(bool)
		return ok
	case "string":
		s, ok := v.(string)
		return ok && s != ""
	case "enum":
		s, ok := v.(string)
		return ok && slices.Contains(p.enum, s)
	case "ints", "strings":
		l, ok := v.([]any)
		if !ok {
			return false
		}
		for _, x := range l {
			if !(glParam{kind: strings.TrimSuffix(p.kind, "s")}).acceptsJSON(x) {
				return false
			}
		}
		return true
	}
	return false
}
