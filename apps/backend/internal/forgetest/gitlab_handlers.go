package forgetest

import (
	"crypto/sha1" // #nosec G505 -- a fake commit id, not security
	"encoding/hex"
	"hash/fnv"
	"slices"
	"strconv"
	"strings"
	"time"
)

// project finds a project by its URL-encoded path or numeric ID
// (docs.gitlab.com/api/rest/#namespaced-paths). Callers hold g.mu.
func (g *GitLab) project(id string) *GitLabProject {
	if p := g.projects[id]; p != nil {
		return p
	}
	for _, p := range g.projects {
		if strconv.FormatInt(p.ID, 10) == id {
			return p
		}
	}
	return nil
}

func notFoundGL(what string) result { return message(404, "404 "+what+" Not Found") }

// mrOf finds the call's project and merge request.
func (g *GitLab) mrOf(c call) (*GitLabProject, *GitLabMR, *result) {
	p := g.project(c.params["id"])
	if p == nil {
		r := notFoundGL("Project")
		return nil, nil, &r
	}
	iid, _ := strconv.Atoi(c.params["iid"])
	mr := p.mrs[iid]
	if mr == nil {
		r := message(404, "404 Not found")
		return p, nil, &r
	}
	return p, mr, nil
}

func (g *GitLab) createMR(c call) result {
	p := g.project(c.params["id"])
	if p == nil {
		return notFoundGL("Project")
	}
	str := func(k string) string { s, _ := c.body[k].(string); return s }
	src, dst := str("source_branch"), str("target_branch")
	if src == dst {
		return message(422, []string{"You can't use same project/branch for source and target"})
	}
	sha, ok := p.branches[src]
	if !ok {
		return message(409, []string{`Source branch "` + src + `" does not exist`})
	}
	if _, ok := p.branches[dst]; !ok {
		return message(409, []string{`Target branch "` + dst + `" does not exist`})
	}
	for _, mr := range p.mrs {
		if mr.State == "opened" && mr.SourceBranch == src && mr.TargetBranch == dst {
			return message(409, []string{"Another open merge request already exists for this source branch: !" + strconv.FormatInt(mr.IID, 10)})
		}
	}
	t := now()
	mr := &GitLabMR{ID: g.id(), IID: int64(len(p.mrs) + 1), Title: str("title"), Description: str("description"), SourceBranch: src,
		TargetBranch: dst, SHA: sha, State: "opened", CreatedAt: t, UpdatedAt: t}
	p.mrs[int(mr.IID)] = mr
	return jsonResult(201, g.mrJSON(p, mr))
}

func (g *GitLab) getMR(c call) result {
	p, mr, res := g.mrOf(c)
	if res != nil {
		return *res
	}
	return jsonResult(200, g.mrJSON(p, mr))
}

// mergeMR refuses as GitLab's merge endpoint does, in its order: 405 when
// the merge request cannot be merged now, 409 when sha is not its head.
func (g *GitLab) mergeMR(c call) result {
	p, mr, res := g.mrOf(c)
	if res != nil {
		return *res
	}
	if mr.State != "opened" || detailedStatus(p, mr) != "mergeable" {
		return message(405, "405 Method Not Allowed")
	}
	if sha, ok := c.body["sha"].(string); ok && sha != mr.SHA {
		return message(409, "SHA does not match HEAD of source branch: "+mr.SHA)
	}
	squash, _ := c.body["squash"].(bool)
	mr.MergeSHAParam, _ = c.body["sha"].(string)
	t := now()
	sum := sha1.Sum([]byte(mr.SHA + "merge")) // #nosec G401 -- a fake commit id
	mr.State, mr.Squash, mr.MergedAt, mr.UpdatedAt, mr.MergeCommitSHA = "merged", squash, t, t, hex.EncodeToString(sum[:])
	if squash {
		sq := sha1.Sum([]byte(mr.SHA + "squash")) // #nosec G401
		mr.SquashCommit = hex.EncodeToString(sq[:])
	}
	return jsonResult(200, g.mrJSON(p, mr))
}

// detailedStatus works out detailed_merge_status
// (docs.gitlab.com/api/merge_requests/#merge-status) from the state.
func detailedStatus(p *GitLabProject, mr *GitLabMR) string {
	switch {
	case mr.DetailedMergeStatus != "":
		return mr.DetailedMergeStatus
	case mr.State != "opened":
		return "not_open"
	case draftTitle(mr.Title):
		return "draft_status"
	case len(p.approvals[int(mr.IID)]) < p.ApprovalsRequired:
		return "not_approved"
	}
	if p.PipelineMustSucceed {
		st := p.statuses[mr.SHA]
		if len(st) == 0 {
			return "ci_must_pass"
		}
		for _, s := range st {
			switch {
			case s.Status == "success" || s.Status == "skipped" || s.AllowFailure:
			case s.Status == "failed" || s.Status == "canceled":
				return "ci_must_pass"
			default:
				return "ci_still_running"
			}
		}
	}
	return "mergeable"
}

func draftTitle(t string) bool {
	t = strings.ToLower(strings.TrimSpace(t))
	return strings.HasPrefix(t, "draft:") || strings.HasPrefix(t, "[draft]") || strings.HasPrefix(t, "(draft)")
}

func (g *GitLab) listNotes(c call) result {
	_, mr, res := g.mrOf(c)
	if res != nil {
		return *res
	}
	p := g.project(c.params["id"])
	notes := slices.Clone(p.notes[int(mr.IID)])
	byUpdated := c.query.Get("order_by") == "updated_at"
	asc := c.query.Get("sort") == "asc" // GitLab's default: desc
	slices.SortStableFunc(notes, func(a, b GitLabNote) int {
		x, y := a.CreatedAt, b.CreatedAt
		if byUpdated {
			x, y = a.UpdatedAt, b.UpdatedAt
		}
		if d := x.Compare(y); d != 0 {
			if asc {
				return d
			}
			return -d
		}
		if asc == (a.ID < b.ID) {
			return -1
		}
		return 1
	})
	out := result{status: 200}
	start, end := paginateGitLab(&out, c.query, len(notes))
	list := []any{}
	for _, n := range notes[start:end] {
		list = append(list, g.noteJSON(p, mr, n))
	}
	out.obj = list
	return out
}

func (g *GitLab) approvalsOf(c call) result {
	p, mr, res := g.mrOf(c)
	if res != nil {
		return *res
	}
	by := []any{}
	for _, a := range p.approvals[int(mr.IID)] {
		u := userJSON(a.Username)
		if a.UserID != 0 {
			u["id"] = a.UserID
		}
		by = append(by, map[string]any{"user": u, "approved_at": stamp(a.ApprovedAt)})
	}
	left := max(p.ApprovalsRequired-len(by), 0)
	return jsonResult(200, map[string]any{
		"id": mr.ID, "iid": mr.IID, "project_id": p.ID, "title": mr.Title, "description": mr.Description, "state": mr.State,
		"created_at": stamp(mr.CreatedAt), "updated_at": stamp(mr.UpdatedAt), "merge_status": legacyStatus(p, mr),
		"approved": left == 0, "approvals_required": p.ApprovalsRequired, "approvals_left": left, "approved_by": by,
	})
}

func (g *GitLab) listStatuses(c call) result {
	p := g.project(c.params["id"])
	if p == nil {
		return notFoundGL("Project")
	}
	var all []GitLabStatus
	for _, s := range p.statuses[c.params["sha"]] {
		if n := c.query.Get("name"); n != "" && s.Name != n {
			continue
		}
		if id := c.query.Get("pipeline_id"); id != "" && strconv.FormatInt(s.PipelineID, 10) != id {
			continue
		}
		all = append(all, s)
	}
	out := result{status: 200}
	start, end := paginateGitLab(&out, c.query, len(all))
	list := []any{}
	for _, s := range all[start:end] {
		target := "https://ci.example/status/" + strconv.FormatInt(s.ID, 10)
		if s.Job {
			target = strings.TrimSuffix(g.URL, "/") + "/" + p.Path + "/-/jobs/" + strconv.FormatInt(s.ID, 10)
		}
		list = append(list, map[string]any{
			"id": s.ID, "sha": c.params["sha"], "ref": nil, "status": s.Status, "name": s.Name, "target_url": target,
			"description": nilIfEmpty(s.Description), "created_at": stamp(s.CreatedAt), "started_at": nil, "finished_at": nil,
			"allow_failure": s.AllowFailure, "coverage": nil, "pipeline_id": s.PipelineID, "author": userJSON("ci-runner"),
		})
	}
	out.obj = list
	return out
}

func (g *GitLab) trace(c call) result {
	if g.project(c.params["id"]) == nil {
		return notFoundGL("Project")
	}
	id, _ := strconv.ParseInt(c.params["job_id"], 10, 64)
	log, ok := g.logs[id]
	if !ok {
		return message(404, "404 Not found")
	}
	return result{status: 200, text: &log}
}

// mrJSON is a merge request as GitLab's single-MR response documents it.
func (g *GitLab) mrJSON(p *GitLabProject, mr *GitLabMR) map[string]any {
	reviewers := []any{}
	for _, r := range mr.Reviewers {
		reviewers = append(reviewers, userJSON(r))
	}
	web := strings.TrimSuffix(g.URL, "/") + "/" + p.Path + "/-/merge_requests/" + strconv.FormatInt(mr.IID, 10)
	ref := "!" + strconv.FormatInt(mr.IID, 10)
	base := p.branches[mr.TargetBranch]
	closedAt := any(nil)
	if mr.State == "closed" {
		closedAt = stamp(mr.UpdatedAt)
	}
	return map[string]any{
		"id": mr.ID, "iid": mr.IID, "project_id": p.ID, "title": mr.Title, "description": mr.Description, "state": mr.State,
		"created_at": stamp(mr.CreatedAt), "updated_at": stamp(mr.UpdatedAt), "merged_at": stampOrNil(mr.MergedAt),
		"merge_user": nil, "merged_by": nil, "closed_at": closedAt, "closed_by": nil,
		"target_branch": mr.TargetBranch, "source_branch": mr.SourceBranch, "user_notes_count": len(p.notes[int(mr.IID)]),
		"upvotes": 0, "downvotes": 0, "author": userJSON("kandev-bot"), "assignees": []any{}, "assignee": nil, "reviewers": reviewers,
		"source_project_id": p.ID, "target_project_id": p.ID, "labels": []any{}, "draft": draftTitle(mr.Title),
		"work_in_progress": draftTitle(mr.Title), "milestone": nil, "merge_when_pipeline_succeeds": false,
		"merge_status": legacyStatus(p, mr), "detailed_merge_status": detailedStatus(p, mr), "sha": mr.SHA,
		"merge_commit_sha": nilIfEmpty(mr.MergeCommitSHA), "squash_commit_sha": nilIfEmpty(mr.SquashCommit),
		"discussion_locked": nil, "should_remove_source_branch": nil, "force_remove_source_branch": false,
		"prepared_at": stamp(mr.CreatedAt), "reference": ref,
		"references": map[string]any{"short": ref, "relative": ref, "full": p.Path + ref},
		"web_url":    web, "time_stats": map[string]any{"time_estimate": 0, "total_time_spent": 0, "human_time_estimate": nil, "human_total_time_spent": nil},
		"squash": mr.Squash, "squash_on_merge": mr.Squash, "task_completion_status": map[string]any{"count": 0, "completed_count": 0},
		"has_conflicts": false, "blocking_discussions_resolved": true, "subscribed": false, "changes_count": "1",
		"latest_build_started_at": nil, "latest_build_finished_at": nil, "first_deployed_to_production_at": nil,
		"pipeline": nil, "head_pipeline": nil, "merge_error": nil, "first_contribution": false,
		"diff_refs": map[string]any{"base_sha": base, "head_sha": mr.SHA, "start_sha": base},
		"user":      map[string]any{"can_merge": true},
	}
}

// legacyStatus is the deprecated merge_status beside detailed_merge_status.
func legacyStatus(p *GitLabProject, mr *GitLabMR) string {
	if detailedStatus(p, mr) == "mergeable" {
		return "can_be_merged"
	}
	return "cannot_be_merged"
}

// noteJSON is a note as the notes API documents it (a diff note with its
// position, docs.gitlab.com/api/discussions/#create-a-new-thread-in-the-merge-request-diff).
func (g *GitLab) noteJSON(p *GitLabProject, mr *GitLabMR, n GitLabNote) map[string]any {
	m := map[string]any{
		"id": n.ID, "type": nil, "body": n.Body, "attachment": nil, "author": userJSON(n.Author), "created_at": stamp(n.CreatedAt),
		"updated_at": stamp(n.UpdatedAt), "system": n.System, "noteable_id": mr.ID, "noteable_type": "MergeRequest",
		"noteable_iid": mr.IID, "project_id": p.ID, "resolvable": false, "confidential": false, "internal": false,
		"commands_changes": map[string]any{},
	}
	if n.Path != "" {
		base := p.branches[mr.TargetBranch]
		pos := map[string]any{"base_sha": base, "start_sha": base, "head_sha": n.HeadSHA, "old_path": n.Path, "new_path": n.Path,
			"position_type": "text", "old_line": intOrNil(n.OldLine), "new_line": intOrNil(n.NewLine), "line_range": nil}
		if n.StartLine > 0 {
			pos["line_range"] = map[string]any{
				"start": map[string]any{"line_code": "x_" + strconv.Itoa(n.StartLine), "type": "new", "old_line": nil, "new_line": n.StartLine},
				"end":   map[string]any{"line_code": "x_" + strconv.Itoa(n.NewLine), "type": "new", "old_line": nil, "new_line": n.NewLine},
			}
		}
		m["type"], m["position"], m["resolvable"], m["resolved"] = "DiffNote", pos, true, false
	}
	return m
}

// userJSON is GitLab's basic user entity; its ID is the username's hash.
func userJSON(username string) map[string]any {
	h := fnv.New32a()
	_, _ = h.Write([]byte(username))
	return map[string]any{"id": int64(h.Sum32() % 10_000_000), "username": username, "name": username, "state": "active",
		"locked": false, "avatar_url": nil, "web_url": "https://gitlab.example/" + username}
}

// stamp is GitLab's API time format (ISO 8601 with milliseconds, UTC).
func stamp(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }

func stampOrNil(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return stamp(t)
}
