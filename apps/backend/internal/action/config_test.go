package action

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

func TestWorkflowUpdateDelete(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	name := "Renamed"
	got := call[kanban.Workflow](h, operator, kanban.ActionWorkflowUpdate, WorkflowUpdateIn{WorkflowID: h.wf, Name: &name})
	if got.Name != name {
		t.Errorf("workflow.update: got name %q, want %q", got.Name, name)
	}
	h.refuse(operator, kanban.ActionWorkflowUpdate, map[string]any{"name": "x"}, kanban.CodeValidation)
	h.task("on the board")
	h.refuse(operator, kanban.ActionWorkflowDelete, WorkflowDeleteIn{WorkflowID: h.wf}, kanban.CodeConflict)
	call[Deleted](h, operator, kanban.ActionWorkflowDelete, WorkflowDeleteIn{WorkflowID: h.wf, Cascade: true})
	if n := h.count("tasks"); n != 0 {
		t.Errorf("tasks after cascade delete: got %d, want 0", n)
	}
	if !h.pub.has(WorkspaceTopic(h.ws), kanban.EventWorkflowDeleted.Name()) {
		t.Errorf("workflow.deleted: not published")
	}
	h.refuse(operator, kanban.ActionWorkflowExport, WorkflowRefIn{WorkflowID: h.wf}, kanban.CodeNotFound)
}

func TestWorkflowSteps(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	st := call[kanban.WorkflowStep](h, operator, kanban.ActionWorkflowStepCreate, map[string]any{"workflow_id": h.wf, "name": "QA", "wip_limit": 3})
	if !st.AllowManualMove || st.Position != len(h.steps) || st.WIPLimit != 3 {
		t.Errorf("workflow.step.create: got %+v, want manual moves allowed, last position, wip 3", st)
	}
	h.refuse(operator, kanban.ActionWorkflowStepCreate, map[string]any{"workflow_id": h.wf, "name": "QA"}, kanban.CodeConflict)
	h.refuse(operator, kanban.ActionWorkflowStepCreate, map[string]any{"name": "x"}, kanban.CodeValidation)
	h.refuse(operator, kanban.ActionWorkflowStepCreate, map[string]any{"workflow_id": h.wf, "name": "E",
		"events": map[string]any{"on_enter": []any{map[string]any{"type": "t", "extra": 1}}}}, kanban.CodeValidation)
	h.refuse(operator, kanban.ActionWorkflowStepUpdate, map[string]any{"step_id": st.ID, "events": map[string]any{"whenever": []any{}}}, kanban.CodeValidation)

	up := call[kanban.WorkflowStep](h, operator, kanban.ActionWorkflowStepUpdate, map[string]any{"step_id": st.ID, "color": "#abcdef",
		"events": map[string]any{"on_enter": []any{map[string]any{"type": "auto_start_agent"}}}})
	if up.Color != "#abcdef" || up.Name != "QA" || len(up.Events["on_enter"]) != 1 {
		t.Errorf("workflow.step.update: got %+v, want color and events set, name kept", up)
	}
	ids := []string{st.ID}
	for _, s := range h.steps {
		ids = append(ids, s.ID)
	}
	h.refuse(operator, kanban.ActionWorkflowStepReorder, StepReorderIn{WorkflowID: h.wf, StepIDs: ids[:2]}, kanban.CodeValidation)
	h.refuse(operator, kanban.ActionWorkflowStepReorder, StepReorderIn{WorkflowID: h.wf, StepIDs: append(ids[1:], ids[1])}, kanban.CodeValidation)
	re := call[kanban.List[kanban.WorkflowStep]](h, operator, kanban.ActionWorkflowStepReorder, StepReorderIn{WorkflowID: h.wf, StepIDs: ids})
	if re.Items[0].ID != st.ID || re.Items[0].Position != 0 {
		t.Errorf("workflow.step.reorder: got first %s at %d, want %s at 0", re.Items[0].ID, re.Items[0].Position, st.ID)
	}
	task := h.task("busy")
	h.refuse(operator, kanban.ActionWorkflowStepDelete, StepRefIn{StepID: task.WorkflowStepID}, kanban.CodeConflict)
	call[Deleted](h, operator, kanban.ActionWorkflowStepDelete, StepRefIn{StepID: st.ID})
	h.refuse(operator, kanban.ActionWorkflowStepGet, IDIn{ID: st.ID}, kanban.CodeNotFound)
	for _, ev := range []string{kanban.EventWorkflowStepCreated.Name(), kanban.EventWorkflowStepUpdated.Name(), kanban.EventWorkflowStepsReordered.Name(), kanban.EventWorkflowStepDeleted.Name()} {
		if !h.pub.has(WorkspaceTopic(h.ws), ev) {
			t.Errorf("%s: not published", ev)
		}
	}
}

// firstAgent returns the first listed agent and its default profile.
func (h *harness) firstAgent() (kanban.Agent, kanban.AgentProfile) {
	h.t.Helper()
	agents := call[kanban.List[kanban.Agent]](h, operator, kanban.ActionAgentList, ListIn{})
	if len(agents.Items) != 5 {
		h.t.Fatalf("agent.list: got %d agents, want the 5 built-in ones", len(agents.Items))
	}
	a := agents.Items[0]
	profs := call[kanban.List[kanban.AgentProfile]](h, operator, kanban.ActionAgentProfileList, AgentProfileListIn{AgentID: a.ID})
	if len(profs.Items) != 1 {
		h.t.Fatalf("agent.profile.list: got %d profiles, want 1", len(profs.Items))
	}
	return a, profs.Items[0]
}

func TestAgentsAndProfiles(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	a, def := h.firstAgent()
	path := "/etc/agent/mcp.json"
	off := false
	up := call[kanban.Agent](h, operator, kanban.ActionAgentUpdate, AgentUpdateIn{AgentID: a.ID, SupportsMCP: &off, MCPConfigPath: &path})
	if up.SupportsMCP || up.MCPConfigPath != path {
		t.Errorf("agent.update: got %+v, want supports_mcp off and the path", up)
	}
	p := call[kanban.AgentProfile](h, operator, kanban.ActionAgentProfileCreate, map[string]any{"agent_id": a.ID, "name": "fast", "model": "small"})
	if !p.UserQuestion || p.AutoApprove || p.IsDefault {
		t.Errorf("agent.profile.create: got %+v, want user_question on by default, not default profile", p)
	}
	h.refuse(operator, kanban.ActionAgentProfileCreate, map[string]any{"agent_id": a.ID, "name": "fast"}, kanban.CodeConflict)
	h.refuse(operator, kanban.ActionAgentProfileCreate, map[string]any{"agent_id": "nope", "name": "x"}, kanban.CodeNotFound)
	model := "large"
	p = call[kanban.AgentProfile](h, operator, kanban.ActionAgentProfileUpdate, AgentProfileUpdateIn{ProfileID: p.ID, Model: &model})
	if p.Model != "large" || p.Name != "fast" {
		t.Errorf("agent.profile.update: got %+v, want model changed, name kept", p)
	}
	call[Deleted](h, operator, kanban.ActionAgentProfileDelete, ProfileRefIn{ProfileID: p.ID})
	h.refuse(operator, kanban.ActionAgentProfileDelete, ProfileRefIn{ProfileID: def.ID}, kanban.CodeConflict) // last profile
	sess := h.session(h.task("t"), kanban.ModeTask)
	call[kanban.List[kanban.Agent]](h, sess, kanban.ActionAgentList, ListIn{})
	h.refuse(sess, kanban.ActionAgentProfileList, AgentProfileListIn{}, kanban.CodeForbidden)
	h.refuse(sess, kanban.ActionAgentUpdate, AgentUpdateIn{AgentID: a.ID, SupportsMCP: &off}, kanban.CodeForbidden)
}

func TestMCPConfigSecretsAreWriteOnly(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	_, prof := h.firstAgent()
	servers := map[string]any{
		"github": map[string]any{"type": "stdio", "command": "gh-mcp", "env": map[string]any{"TOKEN": "s3cret-token", "MODE": "ro"}},
		"docs":   map[string]any{"type": "http", "url": "https://docs.example/mcp", "headers": map[string]any{"Authorization": "Bearer abc"}},
	}
	out := call[kanban.MCPConfig](h, operator, kanban.ActionMCPConfigUpdate, map[string]any{"profile_id": prof.ID, "servers": servers})
	read := call[kanban.MCPConfig](h, operator, kanban.ActionMCPConfigGet, MCPConfigGetIn{AgentProfileID: prof.ID})
	for _, c := range []kanban.MCPConfig{out, read} {
		if c.Servers["github"].Env["TOKEN"] != SecretMask || c.Servers["github"].Env["MODE"] != SecretMask ||
			c.Servers["docs"].Headers["Authorization"] != SecretMask || c.Servers["github"].Command != "gh-mcp" {
			t.Errorf("masked config: got %+v, want every env and header value masked, other fields shown", c.Servers)
		}
	}
	// Read-modify-write: masked values keep the stored secrets.
	srv := read.Servers["github"]
	srv.Env["MODE"] = "rw"
	read.Servers["github"] = srv
	on := false
	call[kanban.MCPConfig](h, operator, kanban.ActionMCPConfigUpdate, MCPConfigUpdateIn{AgentProfileID: prof.ID, Enabled: &on, Servers: read.Servers})
	stored, err := h.st.GetMCPConfig(t.Context(), prof.ID)
	if err != nil {
		t.Fatal(err)
	}
	if stored.Enabled || stored.Servers["github"].Env["TOKEN"] != "s3cret-token" || stored.Servers["github"].Env["MODE"] != "rw" ||
		stored.Servers["docs"].Headers["Authorization"] != "Bearer abc" {
		t.Errorf("stored after round trip: got %+v, want secrets kept, MODE changed, disabled", stored)
	}
	unknown := map[string]any{"github": map[string]any{"type": "stdio", "command": "x", "env": map[string]any{"NEW": SecretMask}}}
	h.refuse(operator, kanban.ActionMCPConfigUpdate, map[string]any{"profile_id": prof.ID, "servers": unknown}, kanban.CodeValidation)
	bad := map[string]any{"x": map[string]any{"type": "ftp"}}
	h.refuse(operator, kanban.ActionMCPConfigUpdate, map[string]any{"profile_id": prof.ID, "servers": bad}, kanban.CodeValidation)
	h.refuse(operator, kanban.ActionMCPConfigGet, MCPConfigGetIn{AgentProfileID: "nope"}, kanban.CodeNotFound)
}

func TestExecutorProfiles(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	sess := h.session(h.task("t"), kanban.ModeTask)
	execs := call[kanban.List[kanban.Executor]](h, sess, kanban.ActionExecutorList, ListIn{})
	if len(execs.Items) != 4 || execs.Items[0].Name != "exec-docker" || execs.Items[1].Name != "exec-local" {
		t.Fatalf("executor.list: got %+v, want exec-docker, exec-local, exec-ssh and exec-worktree", execs.Items)
	}
	ex := execs.Items[1].ID // exec-local
	p := call[kanban.ExecutorProfile](h, operator, kanban.ActionExecutorProfileCreate, map[string]any{"executor_id": ex, "name": "ci",
		"config": map[string]any{"image": "golang:1.26", "cpus": 2}, "prepare_script": "make deps"})
	if p.MCPPolicy != "inherit" || string(p.Config["cpus"]) != "2" || p.PrepareScript != "make deps" {
		t.Errorf("executor.profile.create: got %+v, want mcp_policy inherit and the config", p)
	}
	h.refuse(sess, kanban.ActionExecutorProfileCreate, map[string]any{"executor_id": ex, "name": "x"}, kanban.CodeForbidden)
	up := call[kanban.ExecutorProfile](h, operator, kanban.ActionExecutorProfileUpdate, map[string]any{"profile_id": p.ID, "mcp_policy": "disabled"})
	if up.MCPPolicy != "disabled" || string(up.Config["cpus"]) != "2" {
		t.Errorf("executor.profile.update: got %+v, want policy changed, config kept", up)
	}
	profs := call[kanban.List[kanban.ExecutorProfile]](h, sess, kanban.ActionExecutorProfileList, ExecutorProfileListIn{ExecutorID: ex})
	if len(profs.Items) != 2 {
		t.Errorf("executor.profile.list: got %d, want 2", len(profs.Items))
	}
	call[Deleted](h, operator, kanban.ActionExecutorProfileDelete, ProfileRefIn{ProfileID: p.ID})
	h.refuse(operator, kanban.ActionExecutorProfileDelete, ProfileRefIn{ProfileID: p.ID}, kanban.CodeNotFound)
}

func TestRepositories(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	src := filepath.Join(realDir(t), "kandev")
	if err := os.Mkdir(src, 0o700); err != nil {
		t.Fatal(err)
	}
	h.refuse(operator, kanban.ActionRepositoryCreate, RepositoryCreateIn{LocalPath: "/"}, kanban.CodeValidation)
	h.refuse(operator, kanban.ActionRepositoryCreate, RepositoryCreateIn{LocalPath: "kandev"}, kanban.CodeValidation)
	repo := call[kanban.Repository](h, operator, kanban.ActionRepositoryCreate, RepositoryCreateIn{LocalPath: src})
	if repo.WorkspaceID != h.ws || repo.Name != "kandev" || repo.DefaultBranch != "main" {
		t.Errorf("repository.create: got %+v, want the default workspace, derived name and branch", repo)
	}
	h.refuse(operator, kanban.ActionRepositoryCreate, RepositoryCreateIn{Name: "nothing"}, kanban.CodeValidation)
	h.refuse(operator, kanban.ActionRepositoryUpdate, RepositoryUpdateIn{ID: repo.ID}, kanban.CodeValidation)
	up := call[kanban.Repository](h, operator, kanban.ActionRepositoryUpdate, RepositoryUpdateIn{ID: repo.ID, DefaultBranch: "develop"})
	if up.DefaultBranch != "develop" {
		t.Errorf("repository.update: got %q, want develop", up.DefaultBranch)
	}
	ws, _, other := h.otherBoard()
	theirs := call[kanban.Repository](h, operator, kanban.ActionRepositoryCreate, RepositoryCreateIn{WorkspaceID: ws.ID, RemoteURL: "https://x.example/r.git"})
	sess := h.session(h.task("t"), kanban.ModeTask)
	l := call[kanban.List[kanban.Repository]](h, sess, kanban.ActionRepositoryList, RepositoryListIn{})
	if len(l.Items) != 1 || l.Items[0].ID != repo.ID {
		t.Errorf("repository.list as session: got %+v, want only its workspace's repository", l.Items)
	}
	h.refuse(sess, kanban.ActionRepositoryCreate, RepositoryCreateIn{LocalPath: src}, kanban.CodeForbidden)
	cfg := h.session(other, kanban.ModeConfig)
	h.refuse(cfg, kanban.ActionRepositoryCreate, RepositoryCreateIn{RemoteURL: "https://x.example/s.git"}, kanban.CodeForbidden)
	h.refuse(cfg, kanban.ActionRepositoryUpdate, RepositoryUpdateIn{ID: repo.ID, DefaultBranch: "x"}, kanban.CodeForbidden)
	call[kanban.Repository](h, cfg, kanban.ActionRepositoryUpdate, RepositoryUpdateIn{ID: theirs.ID, DefaultBranch: "trunk"})
}
