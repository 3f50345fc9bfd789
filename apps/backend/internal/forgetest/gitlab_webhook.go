package forgetest

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"time"
)

// GitLab webhook deliveries, shaped as the payloads of
// docs.gitlab.com/user/project/integrations/webhook_events/ ("Merge
// request events", "Comment on a merge request", "Pipeline events"),
// with the fields those examples carry around the ones a test sets. The
// secret token goes in X-Gitlab-Token as it is (docs:
// user/project/integrations/webhooks/#validate-requests-with-a-secret-token).

// hookTime is the time format of GitLab's note and pipeline events.
const hookTime = "2006-01-02 15:04:05 MST"

func hookProject(path string) map[string]any {
	i := strings.LastIndexByte(path, '/')
	name := path[i+1:]
	return map[string]any{"id": 1, "name": name, "description": "", "web_url": "https://gitlab.example/" + path, "avatar_url": nil,
		"git_ssh_url": "git@gitlab.example:" + path + ".git", "git_http_url": "https://gitlab.example/" + path + ".git",
		"namespace": path[:max(i, 0)], "visibility_level": 0, "path_with_namespace": path, "default_branch": "main",
		"homepage": "https://gitlab.example/" + path, "url": "git@gitlab.example:" + path + ".git",
		"ssh_url": "git@gitlab.example:" + path + ".git", "http_url": "https://gitlab.example/" + path + ".git"}
}

func hookUser(username string) map[string]any {
	return map[string]any{"id": 1, "name": username, "username": username, "avatar_url": "", "email": "[REDACTED]"}
}

func marshalHook(m map[string]any) []byte {
	b, err := json.Marshal(m)
	if err != nil {
		panic(err) // maps of strings, numbers and bools
	}
	return b
}

// MergeRequestHook is a "Merge Request Hook" delivery: action (open,
// close, reopen, update, approved, approval, unapproved, unapproval,
// merge) on merge request iid whose head is sha; oldrev marks an update
// that pushed commits; changes are the "changes" object.
func MergeRequestHook(project string, iid int, action, sha, oldrev string, changes map[string]any) []byte {
	state := map[string]string{"close": "closed", "merge": "merged"}[action]
	if state == "" {
		state = "opened"
	}
	attrs := map[string]any{"id": 90 + iid, "iid": iid, "target_branch": "main", "source_branch": "feature", "source_project_id": 1,
		"author_id": 51, "title": "MS-Viewport", "created_at": "2013-12-03T17:23:34Z", "updated_at": "2013-12-03T17:23:34Z",
		"state": state, "merge_status": "unchecked", "detailed_merge_status": "not_open", "target_project_id": 1,
		"description": "", "url": "https://gitlab.example/" + project + "/-/merge_requests/1", "action": action, "draft": false,
		"work_in_progress": false, "last_commit": map[string]any{"id": sha, "message": "fixed readme", "title": "fixed readme",
			"timestamp": "2012-01-03T23:36:29+02:00", "author": map[string]any{"name": "GitLab dev user", "email": "[REDACTED]"}}}
	if oldrev != "" {
		attrs["oldrev"] = oldrev
	}
	if changes == nil {
		changes = map[string]any{}
	}
	return marshalHook(map[string]any{"object_kind": "merge_request", "event_type": "merge_request", "user": hookUser("alice"),
		"project": hookProject(project), "object_attributes": attrs, "labels": []any{}, "changes": changes,
		"repository": map[string]any{"name": "Gitlab Test", "url": "https://gitlab.example/" + project + ".git"}})
}

// NoteHook is a "Note Hook" delivery of a note on merge request iid
// (head sha): a diff note when n.Path is set.
func NoteHook(project string, iid int, sha string, n GitLabNote) []byte {
	attrs := map[string]any{"id": n.ID, "note": n.Body, "noteable_type": "MergeRequest", "author_id": 1,
		"created_at": n.CreatedAt.UTC().Format(hookTime), "updated_at": n.UpdatedAt.UTC().Format(hookTime), "project_id": 1,
		"attachment": nil, "line_code": nil, "commit_id": "", "noteable_id": 7, "system": n.System, "st_diff": nil,
		"action": "create", "url": "https://gitlab.example/" + project + "/-/merge_requests/1#note_1", "type": nil}
	if n.Path != "" {
		attrs["type"] = "DiffNote"
		attrs["position"] = map[string]any{"base_sha": sha, "start_sha": sha, "head_sha": n.HeadSHA, "old_path": n.Path,
			"new_path": n.Path, "position_type": "text", "old_line": intOrNil(n.OldLine), "new_line": intOrNil(n.NewLine)}
	}
	return marshalHook(map[string]any{"object_kind": "note", "event_type": "note", "user": hookUser(n.Author), "project_id": 1,
		"project": hookProject(project), "object_attributes": attrs, "repository": map[string]any{"name": "Gitlab Test"},
		"merge_request": map[string]any{"id": 7, "iid": iid, "target_branch": "main", "source_branch": "feature", "state": "opened",
			"title": "Tests", "last_commit": map[string]any{"id": sha, "message": "fixed readme", "title": "fixed readme"}}})
}

// PipelineHook is a "Pipeline Hook" delivery of pipeline id on sha, for
// merge request iid (0: a branch pipeline), with its jobs.
func PipelineHook(project string, iid int, id int64, sha, status string, jobs []GitLabStatus) []byte {
	at := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC).Format(hookTime)
	builds := []any{}
	for _, j := range jobs {
		builds = append(builds, map[string]any{"id": j.ID, "stage": "test", "name": j.Name, "status": j.Status, "created_at": at,
			"started_at": at, "finished_at": at, "duration": 17.1, "queued_duration": 3.5, "failure_reason": nil, "when": "on_success",
			"manual": false, "allow_failure": j.AllowFailure, "user": hookUser("alice"), "runner": nil, "artifacts_file": map[string]any{},
			"environment": nil})
	}
	m := map[string]any{"object_kind": "pipeline", "object_attributes": map[string]any{"id": id, "iid": 12, "name": nil, "ref": "feature",
		"tag": false, "sha": sha, "before_sha": sha, "source": "merge_request_event", "status": status, "detailed_status": status,
		"stages": []any{"test"}, "created_at": at, "finished_at": at, "duration": 63, "queued_duration": 12,
		"variables": []any{}, "url": "https://gitlab.example/" + project + "/-/pipelines/" + "1"},
		"user": hookUser("alice"), "project": hookProject(project), "builds": builds,
		"commit": map[string]any{"id": sha, "message": "test", "title": "test", "timestamp": "2016-08-12T17:23:21+02:00"}}
	if iid > 0 {
		m["merge_request"] = map[string]any{"id": 1, "iid": iid, "title": "Test", "source_branch": "feature", "target_branch": "main",
			"state": "opened", "merge_status": "can_be_merged", "detailed_merge_status": "mergeable"}
	}
	return marshalHook(m)
}

// PostGitLabHook sends a delivery to h with the X-Gitlab-Event and (when
// not empty) X-Gitlab-Token headers, and returns the status.
func PostGitLabHook(h http.Handler, event, token string, body []byte) int {
	req := httptest.NewRequest(http.MethodPost, "/webhooks/gitlab", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Gitlab-Event", event)
	if token != "" {
		req.Header.Set("X-Gitlab-Token", token)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec.Code
}
