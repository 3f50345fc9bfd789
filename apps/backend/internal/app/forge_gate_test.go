package app

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/kandev/kandev/apps/backend/internal/action"
	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

const (
	gateGitHubRemote = "https://github.com/gate-org/app.git"
	gateGitLabRemote = "https://gitlab.example.com/gate-group/app.git"
)

// withGateForges configures one GitHub and one GitLab account (tokens in a
// secret file) for the two remotes above, as kandev serve reads them.
func withGateForges(t *testing.T) func(*Config) {
	return func(c *Config) {
		dir := t.TempDir()
		tok, conf := filepath.Join(dir, "token"), filepath.Join(dir, "forges.json")
		writeFile(t, tok, "glpat-gate0123456789abcdef\n")
		writeFile(t, conf, `{"repositories":[{"remote_url":"`+gateGitHubRemote+`","forge":"github","token_file":"`+tok+`"},`+
			`{"remote_url":"`+gateGitLabRemote+`","forge":"gitlab","api_url":"https://gitlab.example.com","token_file":"`+tok+`"}]}`)
		c.ForgesFile = conf
	}
}

// TestForgeToolsGated: over a real MCP client session, a task-mode session
// whose task has no repository of a configured forge is not served the PR
// or MR automation tools, and calling one is refused exactly as an unknown
// tool is (and its action over the session's WebSocket as outside its
// mode). Linking a repository of a GitHub account (task.repository.add)
// sends notifications/tools/list_changed and serves the PR tools only; a
// GitLab one then adds the MR tools; an unconfigured remote changes
// nothing.
func TestForgeToolsGated(t *testing.T) {
	t.Parallel()
	e := newEnvWith(t, withGateForges(t))
	ctx := context.Background()
	s := e.sessionMCP(kanban.ModeTask, "")
	var changed atomic.Int32
	s.Client.OnNotification(func(n mcp.JSONRPCNotification) {
		if n.Method == "notifications/tools/list_changed" {
			changed.Add(1)
		}
	})
	prTools := []string{"get_task_pr_automation_kandev", "update_task_pr_automation_kandev"}
	mrTools := []string{"get_task_mr_automation_kandev", "update_task_mr_automation_kandev"}
	link := func(name, remote string) {
		repo, err := e.b.store.CreateRepository(ctx, kanban.Repository{WorkspaceID: s.WorkspaceID, Name: name, RemoteURL: remote})
		if err != nil {
			t.Fatal(err)
		}
		e.dispatch(kanban.ActionTaskRepositoryAdd, action.TaskBranchIn{TaskID: s.TaskID, RepositoryID: repo.ID, BaseBranch: "main"}, nil)
	}
	all := append(append([]string{}, prTools...), mrTools...)
	e.expectGated(s, all, nil)
	link("elsewhere", "https://example.org/elsewhere/app.git") // no forge account
	e.expectGated(s, all, nil)
	link("on-github", gateGitHubRemote)
	waitFor(t, func() bool { return changed.Load() == 1 })
	e.expectGated(s, mrTools, prTools)
	link("on-gitlab", gateGitLabRemote)
	waitFor(t, func() bool { return changed.Load() == 2 })
	e.expectGated(s, nil, all)
	var got kanban.PRAutomation
	e.decode(e.call(s.Client, "get_task_mr_automation_kandev", `{}`), &got)
	if got.TaskID != s.TaskID {
		t.Fatalf("get_task_mr_automation_kandev: %+v", got)
	}
	title := e.sessionMCP(kanban.ModeTaskTitlePending, s.TaskID)
	e.expectGated(title, nil, all)
	cfg := e.sessionMCP(kanban.ModeConfig, s.TaskID)
	e.expectGated(cfg, all, nil)
	if n := changed.Load(); n != 2 {
		t.Fatalf("got %d list_changed notifications, want 2 (one per forge gained)", n)
	}
}

// expectGated checks that a session is served none of hidden, each refused
// as an unknown tool is and its action refused over the session's
// WebSocket, and every one of shown, its action allowed there.
func (e *env) expectGated(s *session, hidden, shown []string) {
	e.t.Helper()
	names := toolNames(e.t, s.Client)
	_, unknownErr := callErr(s.Client, "no_such_tool_kandev", `{}`)
	if unknownErr == nil {
		e.t.Fatal("an unknown tool is not refused")
	}
	for _, name := range hidden {
		if names[name] {
			e.t.Errorf("%s is served", name)
		}
		_, err := callErr(s.Client, name, `{}`)
		if err == nil || err.Error() != strings.ReplaceAll(unknownErr.Error(), "no_such_tool_kandev", name) {
			e.t.Errorf("%s: got %v, want the unknown tool refusal %v", name, err, unknownErr)
		}
		if err := wsGet(s, name); kanban.ErrorCode(err) != kanban.CodeForbidden {
			e.t.Errorf("%s's action over the session's WebSocket: got %v, want FORBIDDEN", name, err)
		}
	}
	for _, name := range shown {
		if !names[name] {
			e.t.Errorf("%s is not served", name)
		}
		if err := wsGet(s, name); err != nil {
			e.t.Errorf("%s's action over the session's WebSocket: %v", name, err)
		}
	}
}

// wsGet reads the session's task's automation over its WebSocket with the
// get action of a PR (or MR) tool.
func wsGet(s *session, tool string) error {
	act := kanban.ActionTaskPRAutomationGet
	if strings.Contains(tool, "_mr_") {
		act = kanban.ActionTaskMRAutomationGet
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return s.MCP.client.Call(ctx, act, json.RawMessage(`{}`), nil)
}
