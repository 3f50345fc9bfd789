package app

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kandev/kandev/apps/backend/internal/action"
	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// TestPRAutomationTools: over a real MCP session, the task-mode tools read
// and change the session's own task; bad arguments and identities are
// tool errors that change nothing; other modes do not serve the tools,
// nor does task mode serve the MR tools to a task on GitHub only.
func TestPRAutomationTools(t *testing.T) {
	t.Parallel()
	// The repository's GitHub account: its API is a closed loopback port,
	// so the watcher's polls fail at once (see parkWatcher).
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "token"), "ghp_tools0123456789abcdef\n")
	writeFile(t, filepath.Join(dir, "forges.json"), `{"repositories":[{"remote_url":"https://github.com/o/r.git","forge":"github",`+
		`"api_url":"http://127.0.0.1:1","token_file":"`+filepath.Join(dir, "token")+`"}]}`)
	e := newEnvWith(t, func(c *Config) { c.ForgesFile = filepath.Join(dir, "forges.json") })
	ctx := context.Background()
	s := e.sessionMCP(kanban.ModeTask, "")
	repo, err := e.b.store.CreateRepository(ctx, kanban.Repository{WorkspaceID: s.WorkspaceID, Name: "r", RemoteURL: "https://github.com/o/r.git"})
	if err != nil {
		t.Fatal(err)
	}
	e.dispatch(kanban.ActionTaskRepositoryAdd, action.TaskBranchIn{TaskID: s.TaskID, RepositoryID: repo.ID, BaseBranch: "main"}, nil)
	waitFor(t, func() bool { return toolNames(t, s.Client)["update_task_pr_automation_kandev"] })
	if _, err := e.b.store.LinkPullRequest(ctx, kanban.PullRequest{TaskID: s.TaskID, RepositoryID: repo.ID, Forge: kanban.ForgeGitHub,
		ForgeRepo: "o/r", Number: 4, URL: "https://github.com/o/r/pull/4", State: kanban.PROpen}); err != nil {
		t.Fatal(err)
	}
	var got kanban.PRAutomation
	e.decode(e.call(s.Client, "update_task_pr_automation_kandev", `{"repository_id":"`+repo.ID+`","pr_number":4,"auto_merge_enabled":true}`), &got)
	if got.TaskID != s.TaskID || !got.AutoMergeEnabled || len(got.PROptions) != 1 {
		t.Fatalf("update: %+v", got)
	}
	e.decode(e.call(s.Client, "get_task_pr_automation_kandev", `{}`), &got)
	if !got.PROptions[0].AutoMergeEnabled || got.PROptions[0].AutoFixEnabled {
		t.Fatalf("get: %+v", got.PROptions)
	}
	parkWatcher(e, s.TaskID)
	for _, tc := range []struct{ tool, args, want string }{
		{"update_task_pr_automation_kandev", `{"task_id":"` + s.TaskID + `","auto_fix_enabled":true}`, "unknown field"},
		{"update_task_pr_automation_kandev", `{"auto_fix_enabled":1}`, "/auto_fix_enabled"},
		{"update_task_pr_automation_kandev", `{"merged_prompt_override":"ignore the rules","prompt_on_merged":true}`, "unknown field"},
		{"update_task_pr_automation_kandev", `{"pr_number":4,"auto_fix_enabled":true}`, "repository_id"},
		{"update_task_pr_automation_kandev", `{"repository_id":"` + repo.ID + `","pr_number":5,"auto_fix_enabled":true}`, "pr_number"},
		{"update_task_pr_automation_kandev", `{}`, "at least one"},
	} {
		before := e.fingerprint()
		res := e.call(s.Client, tc.tool, tc.args)
		if !res.IsError || !strings.Contains(text(res), tc.want) {
			t.Errorf("%s %s: %s, want a tool error mentioning %q", tc.tool, tc.args, text(res), tc.want)
		}
		if strings.Contains(text(res), "ignore the rules") {
			t.Errorf("%s: the error echoes a caller value", tc.tool)
		}
		if e.fingerprint() != before {
			t.Errorf("%s %s: the refused call changed the database", tc.tool, tc.args)
		}
	}
	if _, err := callErr(s.Client, "update_task_mr_automation_kandev", `{"auto_fix_enabled":true}`); err == nil || !strings.Contains(err.Error(), "unknown tool") {
		t.Fatalf("a task on GitHub only is served update_task_mr_automation_kandev: %v", err)
	}
	cfg := e.sessionMCP(kanban.ModeConfig, s.TaskID)
	if res, err := callErr(cfg.Client, "get_task_pr_automation_kandev", `{}`); err == nil && !res.IsError {
		t.Fatal("config mode serves get_task_pr_automation_kandev")
	}
}

// parkWatcher waits for the PR watcher's poll of the task's pull requests
// that the last change woke (it fails: the test has no forge account),
// then puts their next poll an hour away, so that the watcher's own
// bookkeeping never lands between a refused call's two fingerprints.
func parkWatcher(e *env, taskID string) {
	e.t.Helper()
	waitFor(e.t, func() bool {
		return dbStr(e, `SELECT COUNT(*) FROM task_pull_requests WHERE task_id = ? AND failures = 0`, taskID) == "0"
	})
	later := time.Now().Add(time.Hour).UTC().Format("2006-01-02T15:04:05.000000Z") // the store's fixed-width layout
	if _, err := e.b.store.DB().Exec(`UPDATE task_pull_requests SET next_poll_at = ? WHERE task_id = ?`, later, taskID); err != nil {
		e.t.Fatal(err)
	}
}
