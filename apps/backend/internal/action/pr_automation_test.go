package action

import (
	"context"
	"strings"
	"testing"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// linkPR links a pull request on forge f to task in a new repository of
// the workspace (through the store: opening one is another action's).
func (h *harness) linkPR(task *kanban.Task, f kanban.ForgeKind, forgeRepo string, number int) *kanban.PullRequest {
	h.t.Helper()
	ctx := context.Background()
	repo, err := h.st.CreateRepository(ctx, kanban.Repository{WorkspaceID: h.ws, Name: forgeRepo, RemoteURL: "https://example.com/" + forgeRepo + ".git"})
	if err != nil {
		h.t.Fatal(err)
	}
	if _, err := h.st.SetTaskRepository(ctx, kanban.TaskRepository{TaskID: task.ID, RepositoryID: repo.ID, BaseBranch: "main"}); err != nil {
		h.t.Fatal(err)
	}
	pr, err := h.st.LinkPullRequest(ctx, kanban.PullRequest{TaskID: task.ID, RepositoryID: repo.ID, Forge: f, ForgeRepo: forgeRepo,
		Number: number, URL: "https://example.com/" + forgeRepo + "/pull/1", State: kanban.PROpen})
	if err != nil {
		h.t.Fatal(err)
	}
	return pr
}

// TestPRAutomationScopesAndSwitches: a session changes its own task's
// switches, on one pull request or on all; reads see them per PR and in
// aggregate; GitHub and GitLab settings stay apart.
func TestPRAutomationScopesAndSwitches(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	task := h.task("Ship it")
	one, two := h.linkPR(task, kanban.ForgeGitHub, "o/a", 7), h.linkPR(task, kanban.ForgeGitHub, "o/b", 7)
	mr := h.linkPR(task, kanban.ForgeGitLab, "g/p", 3)
	s := h.session(task, kanban.ModeTask)

	got := call[kanban.PRAutomation](h, s, kanban.ActionTaskPRAutomationUpdate,
		`{"repository_id":"`+one.RepositoryID+`","pr_number":7,"auto_fix_enabled":true}`)
	if got.AutoFixEnabled || len(got.PROptions) != 2 || !got.PROptions[0].AutoFixEnabled || got.PROptions[1].AutoFixEnabled {
		t.Fatalf("after scoping to one PR: aggregate %v, options %+v", got.AutoFixEnabled, got.PROptions)
	}
	got = call[kanban.PRAutomation](h, s, kanban.ActionTaskPRAutomationUpdate, `{"auto_fix_enabled":true,"auto_merge_enabled":true,"auto_fix_prompt_override":"Fix it: {{pr.feedback}}"}`)
	if !got.AutoFixEnabled || !got.AutoMergeEnabled || got.AutoFixPromptOverride == nil || got.EffectiveAutoFixPrompt != "Fix it: {{pr.feedback}}" {
		t.Fatalf("after every PR: %+v", got)
	}
	if pr, _ := h.st.GetPullRequest(context.Background(), two.ID); !pr.Options.AutoMergeEnabled {
		t.Fatal("the second PR's auto-merge is off in the store")
	}
	gl := call[kanban.PRAutomation](h, s, kanban.ActionTaskMRAutomationGet, `{}`)
	if len(gl.PROptions) != 1 || gl.PROptions[0].AutoMergeEnabled || gl.PROptions[0].PRNumber != 3 {
		t.Fatalf("GitLab options changed with GitHub's: %+v", gl.PROptions)
	}
	gl = call[kanban.PRAutomation](h, s, kanban.ActionTaskMRAutomationUpdate,
		`{"repository_id":"`+mr.RepositoryID+`","project_path":"g/p","mr_iid":3,"prompt_on_merged":true}`)
	if !gl.PromptOnMerged {
		t.Fatalf("MR switch: %+v", gl)
	}
	// The operator names the task.
	op := call[kanban.PRAutomation](h, operator, kanban.ActionTaskPRAutomationGet, `{"task_id":"`+task.ID+`"}`)
	if op.TaskID != task.ID || !op.AutoMergeEnabled {
		t.Fatalf("operator read: %+v", op)
	}
}

// TestPRAutomationRefusals: another task's session, bad arguments and
// partial identities are refused with nothing written.
func TestPRAutomationRefusals(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	task, other := h.task("Mine"), h.task("Theirs")
	pr := h.linkPR(task, kanban.ForgeGitHub, "o/a", 7)
	mr := h.linkPR(task, kanban.ForgeGitLab, "g/p", 3)
	h.linkPR(other, kanban.ForgeGitHub, "o/z", 9)
	mine := h.session(task, kanban.ModeTask)
	theirs := h.session(other, kanban.ModeTask)
	repo := pr.RepositoryID
	cases := []struct {
		name string
		p    Principal
		a    kanban.Action
		in   string
		code kanban.Code
		want string
	}{
		{"another task's session", theirs, kanban.ActionTaskPRAutomationUpdate, `{"task_id":"` + task.ID + `","auto_merge_enabled":true}`, kanban.CodeForbidden, "own task"},
		{"another task's session reads", theirs, kanban.ActionTaskPRAutomationGet, `{"task_id":"` + task.ID + `"}`, kanban.CodeForbidden, "own task"},
		{"operator without task", operator, kanban.ActionTaskPRAutomationGet, `{}`, kanban.CodeValidation, "task_id"},
		{"no setting", mine, kanban.ActionTaskPRAutomationUpdate, `{"repository_id":"` + repo + `","pr_number":7}`, kanban.CodeValidation, "at least one"},
		{"number without repository", mine, kanban.ActionTaskPRAutomationUpdate, `{"pr_number":7,"auto_fix_enabled":true}`, kanban.CodeValidation, "repository_id"},
		{"unlinked number", mine, kanban.ActionTaskPRAutomationUpdate, `{"repository_id":"` + repo + `","pr_number":8,"auto_fix_enabled":true}`, kanban.CodeValidation, "pr_number"},
		{"wrong type", mine, kanban.ActionTaskPRAutomationUpdate, `{"auto_fix_enabled":"yes"}`, kanban.CodeValidation, "auto_fix_enabled"},
		{"unknown key", mine, kanban.ActionTaskPRAutomationUpdate, `{"merged_prompt_override":"x","prompt_on_merged":true}`, kanban.CodeValidation, "unknown"},
		{"number out of range", mine, kanban.ActionTaskPRAutomationUpdate, `{"repository_id":"` + repo + `","pr_number":0,"auto_fix_enabled":true}`, kanban.CodeValidation, "pr_number"},
		{"MR without project", mine, kanban.ActionTaskMRAutomationUpdate, `{"repository_id":"` + mr.RepositoryID + `","mr_iid":3,"auto_fix_enabled":true}`, kanban.CodeValidation, "all three"},
		{"MR of another project", mine, kanban.ActionTaskMRAutomationUpdate, `{"repository_id":"` + mr.RepositoryID + `","project_path":"g/q","mr_iid":3,"auto_fix_enabled":true}`, kanban.CodeValidation, "mr_iid"},
		{"MR that is a GitHub PR", mine, kanban.ActionTaskMRAutomationUpdate, `{"repository_id":"` + repo + `","project_path":"o/a","mr_iid":7,"auto_fix_enabled":true}`, kanban.CodeValidation, "mr_iid"},
	}
	for _, tc := range cases {
		msg := h.refuse(tc.p, tc.a, tc.in, tc.code)
		if !strings.Contains(msg, tc.want) {
			t.Errorf("%s: message %q, want it to mention %q", tc.name, msg, tc.want)
		}
		if strings.Contains(msg, "g/q") || strings.Contains(msg, "yes") {
			t.Errorf("%s: message %q echoes a caller value", tc.name, msg)
		}
	}
}
