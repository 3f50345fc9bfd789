package store

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// agentByName finds a seeded agent.
func agentByName(t *testing.T, s *Store, name string) *kanban.Agent {
	t.Helper()
	l, err := s.ListAgents(context.Background(), kanban.Page{})
	if err != nil {
		t.Fatalf("list agents: %v", err)
	}
	for _, a := range l.Items {
		if a.Name == name {
			return &a
		}
	}
	t.Fatalf("agent %s not found", name)
	return nil
}

func TestAgents(t *testing.T) {
	bothEngines(t, testAgents)
}

func testAgents(t *testing.T) {
	f := sessionFixture(t)
	ctx := context.Background()
	var names []string
	p := kanban.Page{Limit: 2}
	for range 5 {
		l, err := f.s.ListAgents(ctx, p)
		if err != nil {
			t.Fatalf("list agents: %v", err)
		}
		for _, a := range l.Items {
			names = append(names, a.Name)
		}
		if p.Cursor = l.NextCursor; p.Cursor == "" {
			break
		}
	}
	if want := []string{"claude-code", "codex", "gemini", "mock-agent", "opencode"}; !slices.Equal(names, want) {
		t.Fatalf("got agents %v, want %v", names, want)
	}
	a := agentByName(t, f.s, "codex")
	off, path := false, "/etc/codex.toml"
	got, err := f.s.UpdateAgent(ctx, a.ID, &off, &path)
	if err != nil || got.SupportsMCP || got.MCPConfigPath != path {
		t.Fatalf("got %+v, %v, want supports_mcp false and the path set", got, err)
	}
	if got, err = f.s.UpdateAgent(ctx, a.ID, nil, nil); err != nil || got.SupportsMCP || got.MCPConfigPath != path {
		t.Fatalf("got %+v, %v, want an empty update to keep the fields", got, err)
	}
	before := snapshot(t, f.s)
	_, err = f.s.UpdateAgent(ctx, kanban.NewID(), &off, nil)
	wantCode(t, err, kanban.CodeNotFound)
	_, err = f.s.GetAgent(ctx, kanban.NewID())
	wantCode(t, err, kanban.CodeNotFound)
	checkSnapshot(t, f.s, before)
}

func TestAgentProfiles(t *testing.T) {
	bothEngines(t, testAgentProfiles)
}

// checkDefaultPromoted: a profile's update changes only what it names;
// deleting the agent's default profile (defaultID) promotes the other
// (fastID).
func checkDefaultPromoted(t *testing.T, s *Store, fastID, defaultID string) {
	t.Helper()
	ctx := context.Background()
	model := "gpt-5"
	got, err := s.UpdateAgentProfile(ctx, fastID, kanban.AgentProfileUpdate{Model: &model})
	if err != nil || got.Model != model || got.Name != "fast" {
		t.Fatalf("got %+v, %v, want the model changed and the name kept", got, err)
	}
	if err := s.DeleteAgentProfile(ctx, defaultID); err != nil {
		t.Fatalf("delete default profile: %v", err)
	}
	if got, _ = s.GetAgentProfile(ctx, fastID); !got.IsDefault {
		t.Fatalf("got is_default false on the remaining profile, want it promoted")
	}
}

// firstProfileIsDefault checks that the first profile of a new agent
// becomes its default, and returns it.
func firstProfileIsDefault(t *testing.T, s *Store) *kanban.AgentProfile {
	t.Helper()
	ctx := context.Background()
	agentID := kanban.NewID()
	now := fmtTime(kanban.Now())
	if _, err := s.stmts.ExecContext(ctx, `INSERT INTO agents (id, name, display_name, created_at, updated_at)
		VALUES (?, 'cursor', 'Cursor', ?, ?)`, agentID, now, now); err != nil {
		t.Fatalf("insert agent: %v", err)
	}
	first, err := s.CreateAgentProfile(ctx, kanban.AgentProfile{AgentID: agentID, Name: "main"})
	if err != nil || !first.IsDefault {
		t.Fatalf("got %+v, %v, want the first profile to be the default", first, err)
	}
	return first
}

func testAgentProfiles(t *testing.T) {
	f := sessionFixture(t)
	ctx := context.Background()
	codex := agentByName(t, f.s, "codex")
	fast, err := f.s.CreateAgentProfile(ctx, kanban.AgentProfile{AgentID: codex.ID, Name: "fast", Model: "o4-mini", UserQuestion: true})
	if err != nil {
		t.Fatalf("create profile: %v", err)
	}
	if fast.IsDefault || fast.Model != "o4-mini" || !fast.UserQuestion {
		t.Fatalf("got %+v, want a non-default profile with the model and user_question", fast)
	}
	l, err := f.s.ListAgentProfiles(ctx, kanban.ProfileFilter{ParentID: codex.ID}, kanban.Page{})
	if err != nil || len(l.Items) != 2 || l.Items[0].Name != "default" || l.Items[1].ID != fast.ID {
		t.Fatalf("got %+v, %v, want [default fast]", l, err)
	}
	if all, err := f.s.ListAgentProfiles(ctx, kanban.ProfileFilter{}, kanban.Page{}); err != nil || len(all.Items) != 6 {
		t.Fatalf("got %v, %v listing every profile, want 6", all, err)
	}

	first := firstProfileIsDefault(t, f.s)

	name, model := "fast", "gpt-5"
	codexDefault := l.Items[0]
	tests := []refusal{
		{"create with a taken name", func() error {
			_, err := f.s.CreateAgentProfile(ctx, kanban.AgentProfile{AgentID: codex.ID, Name: "default"})
			return err
		}, kanban.CodeConflict},
		// Bounds are agent.profile.create's contract's; the store holds
		// the single-line name.
		{"create with a two-line name", func() error {
			_, err := f.s.CreateAgentProfile(ctx, kanban.AgentProfile{AgentID: codex.ID, Name: "a\nb"})
			return err
		}, kanban.CodeValidation},
		{"create for an unknown agent", func() error {
			_, err := f.s.CreateAgentProfile(ctx, kanban.AgentProfile{AgentID: kanban.NewID(), Name: "x"})
			return err
		}, kanban.CodeNotFound},
		{"rename onto a taken name", func() error {
			_, err := f.s.UpdateAgentProfile(ctx, codexDefault.ID, kanban.AgentProfileUpdate{Name: &name})
			return err
		}, kanban.CodeConflict},
		{"update an unknown profile", func() error {
			_, err := f.s.UpdateAgentProfile(ctx, kanban.NewID(), kanban.AgentProfileUpdate{Model: &model})
			return err
		}, kanban.CodeNotFound},
		{"list profiles of an unknown agent", func() error {
			_, err := f.s.ListAgentProfiles(ctx, kanban.ProfileFilter{ParentID: kanban.NewID()}, kanban.Page{})
			return err
		}, kanban.CodeNotFound},
		{"delete an agent's last profile", func() error { return f.s.DeleteAgentProfile(ctx, first.ID) }, kanban.CodeConflict},
		{"delete an unknown profile", func() error { return f.s.DeleteAgentProfile(ctx, kanban.NewID()) }, kanban.CodeNotFound},
	}
	checkRefusals(t, f.s, tests)

	checkDefaultPromoted(t, f.s, fast.ID, codexDefault.ID)
}

func TestDeleteAgentProfileWithRunningSession(t *testing.T) {
	bothEngines(t, testDeleteAgentProfileWithRunningSession)
}

func testDeleteAgentProfileWithRunningSession(t *testing.T) {
	f := sessionFixture(t)
	ctx := context.Background()
	prof, err := f.s.CreateAgentProfile(ctx, kanban.AgentProfile{AgentID: agentByName(t, f.s, "claude-code").ID, Name: "busy"})
	if err != nil {
		t.Fatalf("create profile: %v", err)
	}
	sess, _, err := f.s.CreateSession(ctx, kanban.SessionCreate{TaskID: f.task.ID, AgentProfileID: prof.ID})
	if err != nil {
		t.Fatalf("create session: %v", err)
	}
	if _, err := f.s.AttachSession(ctx, sess.ID, "backend"); err != nil { // CREATED → RUNNING
		t.Fatalf("attach: %v", err)
	}
	before := snapshot(t, f.s)
	wantCode(t, f.s.DeleteAgentProfile(ctx, prof.ID), kanban.CodeConflict)
	checkSnapshot(t, f.s, before)

	if _, err := f.s.SetSessionState(ctx, sess.ID, kanban.SessionCompleted); err != nil {
		t.Fatalf("complete session: %v", err)
	}
	if err := f.s.DeleteAgentProfile(ctx, prof.ID); err != nil {
		t.Fatalf("got %v deleting a profile of a completed session, want success", err)
	}
	got, err := f.s.GetSession(ctx, sess.ID)
	if err != nil || got.AgentProfileID != "" {
		t.Fatalf("got %+v, %v, want the session kept with no profile", got, err)
	}
}

func TestDefaultAgentProfile(t *testing.T) {
	bothEngines(t, testDefaultAgentProfile)
}

func testDefaultAgentProfile(t *testing.T) {
	f := sessionFixture(t)
	ctx := context.Background()
	p, err := f.s.DefaultAgentProfile(ctx)
	if err != nil || p.AgentID != agentByName(t, f.s, "claude-code").ID || !p.IsDefault {
		t.Fatalf("got %+v, %v, want claude-code's default profile", p, err)
	}
	if _, err := f.s.stmts.ExecContext(ctx, `DELETE FROM agents WHERE name = 'claude-code'`); err != nil {
		t.Fatalf("delete agent: %v", err)
	}
	if p, err = f.s.DefaultAgentProfile(ctx); err != nil || p.AgentID != agentByName(t, f.s, "codex").ID {
		t.Fatalf("got %+v, %v, want codex's default profile (first by name)", p, err)
	}
	if _, err := f.s.stmts.ExecContext(ctx, `DELETE FROM agents`); err != nil {
		t.Fatalf("delete agents: %v", err)
	}
	_, err = f.s.DefaultAgentProfile(ctx)
	wantCode(t, err, kanban.CodeNotFound)
}

func TestMCPConfig(t *testing.T) {
	bothEngines(t, testMCPConfig)
}

func testMCPConfig(t *testing.T) {
	f := sessionFixture(t)
	ctx := context.Background()
	prof, err := f.s.DefaultAgentProfile(ctx)
	if err != nil {
		t.Fatalf("default profile: %v", err)
	}
	c, err := f.s.GetMCPConfig(ctx, prof.ID)
	if err != nil || !c.Enabled || c.Servers == nil || len(c.Servers) != 0 {
		t.Fatalf("got %+v, %v, want the default enabled config with no servers", c, err)
	}
	servers := map[string]kanban.MCPServerConfig{
		"files":  {Type: "stdio", Command: "npx", Args: []string{"-y", "server-files"}, Env: map[string]string{"A": "1"}},
		"remote": {Type: "http", URL: "https://mcp.example.com/mcp", Headers: map[string]string{"X": "y"}},
	}
	off := false
	if c, err = f.s.UpdateMCPConfig(ctx, prof.ID, kanban.MCPConfigUpdate{Enabled: &off, Servers: servers}); err != nil {
		t.Fatalf("update mcp config: %v", err)
	}
	if c.Enabled || fmt.Sprint(c.Servers) != fmt.Sprint(servers) {
		t.Fatalf("got %+v, want disabled with the servers", c)
	}
	on := true
	if c, err = f.s.UpdateMCPConfig(ctx, prof.ID, kanban.MCPConfigUpdate{Enabled: &on}); err != nil || !c.Enabled || len(c.Servers) != 2 {
		t.Fatalf("got %+v, %v, want enabled with the servers kept", c, err)
	}
	if n := countRows(t, f.s, "agent_profile_mcp_configs"); n != 1 {
		t.Fatalf("got %d config rows, want 1 (upsert)", n)
	}
	_, err = f.s.GetMCPConfig(ctx, kanban.NewID())
	wantCode(t, err, kanban.CodeNotFound)
}

func TestUpdateMCPConfigRejects(t *testing.T) {
	bothEngines(t, testUpdateMCPConfigRejects)
}

// testUpdateMCPConfigRejects: the servers' field combinations
// (kanban.MCPServerConfig.Check); their count and names are
// mcp_config.update's contract (TestStoreRulesRefusedOverWebSocket).
func testUpdateMCPConfigRejects(t *testing.T) {
	f := sessionFixture(t)
	ctx := context.Background()
	prof, err := f.s.DefaultAgentProfile(ctx)
	if err != nil {
		t.Fatalf("default profile: %v", err)
	}
	one := func(name string, c kanban.MCPServerConfig) map[string]kanban.MCPServerConfig {
		return map[string]kanban.MCPServerConfig{name: c}
	}
	tests := []struct {
		name    string
		servers map[string]kanban.MCPServerConfig
		field   string
	}{
		{"unknown type", one("a", kanban.MCPServerConfig{Type: "sse", URL: "http://x"}), "servers.*.type"},
		{"stdio without command", one("a", kanban.MCPServerConfig{Type: "stdio"}), "servers.*.command"},
		{"stdio with url", one("a", kanban.MCPServerConfig{Type: "stdio", Command: "x", URL: "http://x"}), "servers.*"},
		{"http without url", one("a", kanban.MCPServerConfig{Type: "http"}), "servers.*.url"},
		{"http with command", one("a", kanban.MCPServerConfig{Type: "http", URL: "http://x", Command: "x"}), "servers.*"},
		{"http with a file url", one("a", kanban.MCPServerConfig{Type: "http", URL: "file:///etc/passwd"}), "servers.*.url"},
		{"http url without host", one("a", kanban.MCPServerConfig{Type: "http", URL: "https://"}), "servers.*.url"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := snapshot(t, f.s)
			_, err := f.s.UpdateMCPConfig(ctx, prof.ID, kanban.MCPConfigUpdate{Servers: tt.servers})
			wantCode(t, err, kanban.CodeValidation)
			if e, _ := kanban.AsError(err); e.Field != tt.field {
				t.Fatalf("got field %q, want %q", e.Field, tt.field)
			}
			checkSnapshot(t, f.s, before)
		})
	}
	on := true
	_, err = f.s.UpdateMCPConfig(ctx, kanban.NewID(), kanban.MCPConfigUpdate{Enabled: &on})
	wantCode(t, err, kanban.CodeNotFound)
}

func TestExecutorProfiles(t *testing.T) {
	bothEngines(t, testExecutorProfiles)
}

func testExecutorProfiles(t *testing.T) {
	f := sessionFixture(t)
	ctx := context.Background()
	execs, err := f.s.ListExecutors(ctx, kanban.Page{})
	if err != nil || len(execs.Items) != 4 || execs.Items[0].Type != "docker" || execs.Items[1].Name != "exec-local" || execs.Items[2].Type != "ssh" || execs.Items[3].Type != "worktree" {
		t.Fatalf("got %+v, %v, want exec-docker, exec-local, exec-ssh and exec-worktree", execs, err)
	}
	local := execs.Items[slices.IndexFunc(execs.Items, func(e kanban.Executor) bool { return e.Name == "exec-local" })]
	def, err := f.s.DefaultExecutorProfile(ctx)
	if err != nil || def.ExecutorID != local.ID || def.MCPPolicy != "inherit" {
		t.Fatalf("got %+v, %v, want exec-local's default profile with policy inherit", def, err)
	}
	p, err := f.s.CreateExecutorProfile(ctx, kanban.ExecutorProfile{ExecutorID: local.ID, Name: "sandbox",
		Config: map[string]json.RawMessage{"image": json.RawMessage(`"ubuntu"`)}, PrepareScript: "make deps"})
	if err != nil || p.MCPPolicy != "inherit" || string(p.Config["image"]) != `"ubuntu"` || p.IsDefault {
		t.Fatalf("got %+v, %v, want a non-default profile with policy inherit and the config", p, err)
	}
	policy := "restricted"
	if p, err = f.s.UpdateExecutorProfile(ctx, p.ID, kanban.ExecutorProfileUpdate{MCPPolicy: &policy}); err != nil ||
		p.MCPPolicy != policy || p.PrepareScript != "make deps" {
		t.Fatalf("got %+v, %v, want the policy changed and the script kept", p, err)
	}
	if l, err := f.s.ListExecutorProfiles(ctx, kanban.ProfileFilter{ParentID: local.ID}, kanban.Page{}); err != nil || len(l.Items) != 2 {
		t.Fatalf("got %v, %v, want 2 profiles of exec-local", l, err)
	}
	if err := f.s.DeleteExecutorProfile(ctx, def.ID); err != nil {
		t.Fatalf("delete executor profile: %v", err)
	}
	if p, _ = f.s.GetExecutorProfile(ctx, p.ID); !p.IsDefault {
		t.Fatalf("got is_default false on the remaining profile, want it promoted")
	}
}

func TestExecutorProfileRejects(t *testing.T) {
	bothEngines(t, testExecutorProfileRejects)
}

func testExecutorProfileRejects(t *testing.T) {
	f := sessionFixture(t)
	ctx := context.Background()
	execs, err := f.s.ListExecutors(ctx, kanban.Page{})
	if err != nil {
		t.Fatalf("list executors: %v", err)
	}
	local := execs.Items[slices.IndexFunc(execs.Items, func(e kanban.Executor) bool { return e.Name == "exec-local" })]
	def, err := f.s.DefaultExecutorProfile(ctx)
	if err != nil {
		t.Fatalf("default executor profile: %v", err)
	}
	bigCfg := map[string]json.RawMessage{"k": json.RawMessage(`"` + strings.Repeat("x", kanban.MaxExecutorConfigBytes) + `"`)}
	taken := "default"
	mk := func(p kanban.ExecutorProfile) func() error {
		return func() error { _, err := f.s.CreateExecutorProfile(ctx, p); return err }
	}
	tests := []refusal{
		{"taken name", mk(kanban.ExecutorProfile{ExecutorID: local.ID, Name: "default"}), kanban.CodeConflict},
		// Bounds and the policy enum are the contracts'; the store holds the
		// single-line name and the config's byte bound.
		{"two-line name", mk(kanban.ExecutorProfile{ExecutorID: local.ID, Name: "a\tb"}), kanban.CodeValidation},
		{"config over 64 KiB", mk(kanban.ExecutorProfile{ExecutorID: local.ID, Name: "x", Config: bigCfg}), kanban.CodeValidation},
		{"invalid config value", mk(kanban.ExecutorProfile{ExecutorID: local.ID, Name: "x",
			Config: map[string]json.RawMessage{"k": json.RawMessage(`{`)}}), kanban.CodeValidation},
		{"unknown executor", mk(kanban.ExecutorProfile{ExecutorID: kanban.NewID(), Name: "x"}), kanban.CodeNotFound},
		{"update of unknown profile", func() error {
			_, err := f.s.UpdateExecutorProfile(ctx, kanban.NewID(), kanban.ExecutorProfileUpdate{Name: &taken})
			return err
		}, kanban.CodeNotFound},
		{"delete the last profile", func() error { return f.s.DeleteExecutorProfile(ctx, def.ID) }, kanban.CodeConflict},
		{"list profiles of unknown executor", func() error {
			_, err := f.s.ListExecutorProfiles(ctx, kanban.ProfileFilter{ParentID: kanban.NewID()}, kanban.Page{})
			return err
		}, kanban.CodeNotFound},
	}
	checkRefusals(t, f.s, tests)
}

// TestExecutorScriptBoundInCharacters: a script is bounded in characters,
// as the executor profile tools' schemas advertise it (maxLength), so one
// of kanban.MaxScriptLen two-byte characters is stored.
func TestExecutorScriptBoundInCharacters(t *testing.T) {
	f := sessionFixture(t)
	ctx := context.Background()
	execs, err := f.s.ListExecutors(ctx, kanban.Page{})
	if err != nil || len(execs.Items) == 0 {
		t.Fatalf("list executors: %+v, %v", execs, err)
	}
	script := strings.Repeat("é", kanban.MaxScriptLen)
	p, err := f.s.CreateExecutorProfile(ctx, kanban.ExecutorProfile{ExecutorID: execs.Items[0].ID, Name: "wide", PrepareScript: script})
	if err != nil || p.PrepareScript != script {
		t.Fatalf("got %v, want a script of %d two-byte characters stored", err, kanban.MaxScriptLen)
	}
}
