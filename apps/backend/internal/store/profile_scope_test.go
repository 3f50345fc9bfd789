package store

import (
	"context"
	"database/sql"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/stdlib"

	"github.com/kandev/kandev/apps/backend/internal/action"
	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

func TestProfileScope(t *testing.T) {
	bothEngines(t, testProfileScope)
}

// testProfileScope: a workspace's agent and executor profiles (migration
// 0011) are listed only with that workspace's view, are never defaults,
// do not count as an agent's last profile, and run only that workspace's
// sessions.
func testProfileScope(t *testing.T) {
	f := sessionFixture(t)
	ctx := context.Background()
	a := f.b.ws.ID
	other := newBoard(t, f.s, "Other")
	codex := agentByName(t, f.s, "codex")
	global, err := f.s.ListAgentProfiles(ctx, kanban.ProfileFilter{ParentID: codex.ID}, kanban.Page{})
	if err != nil || len(global.Items) != 1 || global.Items[0].WorkspaceID != "" {
		t.Fatalf("seeded profiles: got %+v, %v, want one global", global, err)
	}
	mine, err := f.s.CreateAgentProfile(ctx, kanban.AgentProfile{AgentID: codex.ID, Name: "mine", WorkspaceID: a, IsDefault: true})
	if err != nil || mine.WorkspaceID != a || mine.IsDefault {
		t.Fatalf("scoped profile: got %+v, %v, want workspace %s and never the default", mine, err, a)
	}
	theirs, err := f.s.CreateAgentProfile(ctx, kanban.AgentProfile{AgentID: codex.ID, Name: "theirs", WorkspaceID: other.ws.ID})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.s.CreateAgentProfile(ctx, kanban.AgentProfile{AgentID: codex.ID, Name: "x", WorkspaceID: kanban.NewID()}); kanban.ErrorCode(err) != kanban.CodeNotFound {
		t.Fatalf("profile of a missing workspace: got %v, want NOT_FOUND", err)
	}
	if _, err := f.s.CreateAgentProfile(ctx, kanban.AgentProfile{AgentID: codex.ID, Name: "theirs", WorkspaceID: a}); kanban.ErrorCode(err) != kanban.CodeConflict {
		t.Fatalf("a name taken in another workspace: got %v, want CONFLICT (names are unique per agent)", err)
	}
	view := func(ws string) map[string]bool { return profileView(t, f.s, codex.ID, ws) }
	if v := view(a); len(v) != 2 || !v[global.Items[0].ID] || !v[mine.ID] {
		t.Fatalf("workspace A's view: got %v, want the global profile and its own", v)
	}
	if v := view(""); len(v) != 3 {
		t.Fatalf("the operator's view: got %v, want all three", v)
	}

	// Defaults stay global; deleting the global one is refused while it is
	// the agent's last global profile, whatever the workspaces hold.
	def, err := f.s.DefaultAgentProfile(ctx)
	if err != nil || def.WorkspaceID != "" {
		t.Fatalf("default: got %+v, %v, want a global profile", def, err)
	}
	if err := f.s.DeleteAgentProfile(ctx, global.Items[0].ID); kanban.ErrorCode(err) != kanban.CodeConflict {
		t.Fatalf("delete the last global profile: got %v, want CONFLICT", err)
	}

	checkScopedUse(t, f, other, mine, theirs)
}

// profileView is the IDs of agentID's profiles a workspace's view lists
// (the operator's with ws "").
func profileView(t *testing.T, s *Store, agentID, ws string) map[string]bool {
	t.Helper()
	l, err := s.ListAgentProfiles(context.Background(), kanban.ProfileFilter{ParentID: agentID, Workspace: ws}, kanban.Page{})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for _, p := range l.Items {
		out[p.ID] = true
	}
	return out
}

// checkScopedUse: a task of B runs neither with A's agent profile (mine)
// nor its executor profile, and A's task runs with both.
func checkScopedUse(t *testing.T, f *fixture, other board, mine, theirs *kanban.AgentProfile) {
	t.Helper()
	ctx := context.Background()
	a := f.b.ws.ID
	local := executorByName(t, f.s, "exec-local")
	myExec, err := f.s.CreateExecutorProfile(ctx, kanban.ExecutorProfile{ExecutorID: local.ID, Name: "mine", WorkspaceID: a})
	if err != nil || myExec.WorkspaceID != a || myExec.IsDefault {
		t.Fatalf("scoped executor profile: got %+v, %v", myExec, err)
	}
	theirTask := mustTask(t, f.s, other, "", "B's task")
	before := countRows(t, f.s, "task_sessions")
	for _, in := range []kanban.SessionCreate{
		{TaskID: theirTask.ID, AgentProfileID: mine.ID},
		{TaskID: theirTask.ID, ExecutorProfileID: myExec.ID},
		{TaskID: f.task.ID, AgentProfileID: theirs.ID},
	} {
		if _, _, err := f.s.CreateSession(ctx, in); kanban.ErrorCode(err) != kanban.CodeForbidden {
			t.Fatalf("session %+v: got %v, want FORBIDDEN", in, err)
		}
	}
	if _, _, _, err := f.s.CreateTaskWithSession(ctx, kanban.TaskCreate{WorkspaceID: other.ws.ID, Title: "started with A's"},
		kanban.SessionCreate{AgentProfileID: mine.ID}); kanban.ErrorCode(err) != kanban.CodeForbidden {
		t.Fatalf("task with a session on A's profile in B: got %v, want FORBIDDEN", err)
	}
	if n := countRows(t, f.s, "task_sessions"); n != before {
		t.Fatalf("refused sessions wrote rows: %d sessions, want %d", n, before)
	}
	if n := countRows(t, f.s, "tasks"); n != 2 {
		t.Fatalf("the refused task was written: %d tasks, want 2", n)
	}
	sess, _, err := f.s.CreateSession(ctx, kanban.SessionCreate{TaskID: f.task.ID, AgentProfileID: mine.ID, ExecutorProfileID: myExec.ID})
	if err != nil || sess.AgentProfileID != mine.ID || sess.ExecutorProfileID != myExec.ID {
		t.Fatalf("A's task with A's profiles: got %+v, %v", sess, err)
	}
	if err := f.s.DeleteExecutorProfile(ctx, myExec.ID); err != nil {
		t.Fatalf("delete a workspace's executor profile: %v", err)
	}
}

// executorByName finds a seeded executor.
func executorByName(t *testing.T, s *Store, name string) *kanban.Executor {
	t.Helper()
	l, err := s.ListExecutors(context.Background(), kanban.Page{})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range l.Items {
		if e.Name == name {
			return &e
		}
	}
	t.Fatalf("executor %s not found", name)
	return nil
}

func TestMCPConfigCheckRunsInTheWrite(t *testing.T) {
	bothEngines(t, testMCPConfigCheckRunsInTheWrite)
}

// testMCPConfigCheckRunsInTheWrite: UpdateMCPConfig's Check sees the
// profile and the stored servers, its refusal writes nothing, and what it
// returns is what is stored (after the store's own checks).
func testMCPConfigCheckRunsInTheWrite(t *testing.T) {
	f := sessionFixture(t)
	ctx := context.Background()
	prof := f.sess.AgentProfileID
	stored := map[string]kanban.MCPServerConfig{"gh": {Type: kanban.MCPServerStdio, Command: "gh-mcp", Env: map[string]string{"TOKEN": "t"}}}
	if _, err := f.s.UpdateMCPConfig(ctx, prof, kanban.MCPConfigUpdate{Servers: stored}); err != nil {
		t.Fatal(err)
	}
	off := false
	_, err := f.s.UpdateMCPConfig(ctx, prof, kanban.MCPConfigUpdate{Enabled: &off, Servers: map[string]kanban.MCPServerConfig{},
		Check: func(p *kanban.AgentProfile, cur *kanban.MCPConfig, _ map[string]kanban.MCPServerConfig) (map[string]kanban.MCPServerConfig, error) {
			if p.ID != prof || cur.Servers["gh"].Env["TOKEN"] != "t" {
				t.Errorf("check saw profile %s and servers %+v", p.ID, cur.Servers)
			}
			return nil, kanban.Errorf(kanban.CodeForbidden, "no")
		}})
	if kanban.ErrorCode(err) != kanban.CodeForbidden {
		t.Fatalf("got %v, want the check's FORBIDDEN", err)
	}
	if c, err := f.s.GetMCPConfig(ctx, prof); err != nil || !c.Enabled || len(c.Servers) != 1 {
		t.Fatalf("after a refused check: got %+v, %v, want nothing changed", c, err)
	}
	hijack := map[string]kanban.MCPServerConfig{"gh": {Type: kanban.MCPServerStdio, Command: "gh-mcp", Env: map[string]string{"LD_PRELOAD": "/x.so"}}}
	_, err = f.s.UpdateMCPConfig(ctx, prof, kanban.MCPConfigUpdate{Servers: stored,
		Check: func(*kanban.AgentProfile, *kanban.MCPConfig, map[string]kanban.MCPServerConfig) (map[string]kanban.MCPServerConfig, error) {
			return hijack, nil
		}})
	if kanban.ErrorCode(err) != kanban.CodeValidation {
		t.Fatalf("a check returning a hijacking env: got %v, want the store's VALIDATION_ERROR", err)
	}
}

func TestProfileScopeUpgrade(t *testing.T) {
	bothEngines(t, testProfileScopeUpgrade)
}

// testProfileScopeUpgrade: a database at schema 10 with profiles and an
// MCP config, migrated by this binary (0011_profile_scope): every earlier
// profile is global, keeps its default flag, and every workspace sees it.
func testProfileScopeUpgrade(t *testing.T) {
	ctx := context.Background()
	loc := testLocation(t)
	eng := engineOf(t)
	writeSchema10(t, loc, eng)
	s, err := openTestStore(t, loc)
	if err != nil {
		t.Fatalf("open and migrate: %v", err)
	}
	t.Cleanup(func() { _ = s.Close() })
	if err := action.Seed(ctx, s); err != nil {
		t.Fatal(err)
	}
	ws := newBoard(t, s, "Later")
	p, err := s.DefaultAgentProfile(ctx)
	if err != nil || p.ID != "old" || p.WorkspaceID != "" || !p.IsDefault {
		t.Fatalf("the earlier profile after 0011: got %+v, %v, want it global and still the default", p, err)
	}
	x, err := s.DefaultExecutorProfile(ctx)
	if err != nil || x.ID != "oldx" || x.WorkspaceID != "" || x.PrepareScript != "make deps" {
		t.Fatalf("the earlier executor profile after 0011: got %+v, %v", x, err)
	}
	l, err := s.ListAgentProfiles(ctx, kanban.ProfileFilter{Workspace: ws.ws.ID}, kanban.Page{})
	if err != nil || len(l.Items) != 1 || l.Items[0].ID != "old" {
		t.Fatalf("a workspace's view after 0011: got %+v, %v, want the earlier global profile", l, err)
	}
}

// writeSchema10 writes at loc a database of engine eng at schema 10 (the
// migrations before 0011_profile_scope) holding an agent and an executor,
// each with a default profile.
func writeSchema10(t *testing.T, loc string, eng Engine) {
	t.Helper()
	ctx := context.Background()
	var db *sql.DB
	if eng == Postgres {
		cfg, err := ParsePostgresURL(loc)
		if err != nil {
			t.Fatal(err)
		}
		db = stdlib.OpenDB(*cfg.Conn)
	} else {
		var err error
		if db, err = sql.Open("sqlite", "file:"+filepath.Join(loc, DatabaseFile)+"?_pragma=foreign_keys(1)"); err != nil {
			t.Fatal(err)
		}
	}
	ms, err := loadMigrations(eng)
	if err != nil {
		t.Fatal(err)
	}
	record := `INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)`
	q := func(s string) string { return s }
	if eng == Postgres {
		record, q = rebind(record), rebind
	}
	if _, err := db.ExecContext(ctx, `CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)`); err != nil {
		t.Fatal(err)
	}
	for _, m := range ms {
		if m.version >= 11 {
			break
		}
		if err := applyMigration(ctx, db, m, record); err != nil {
			t.Fatal(err)
		}
	}
	now := fmtTime(kanban.Now())
	for _, stmt := range []string{
		`INSERT INTO agents (id, name, display_name, supports_mcp, mcp_config_path, created_at, updated_at) VALUES ('ag', 'codex', 'Codex', 1, '', ?, ?)`,
		`INSERT INTO agent_profiles (id, agent_id, name, model, auto_approve, user_question, is_default, created_at, updated_at) VALUES ('old', 'ag', 'default', '', 0, 1, 1, ?, ?)`,
		`INSERT INTO executors (id, name, type, description, created_at) VALUES ('ex', 'exec-local', 'local', '', ?)`,
		`INSERT INTO executor_profiles (id, executor_id, name, mcp_policy, config, prepare_script, cleanup_script, is_default, created_at, updated_at) VALUES ('oldx', 'ex', 'default', 'inherit', '{}', 'make deps', '', 1, ?, ?)`,
	} {
		args := []any{now, now}
		if strings.Count(stmt, "?") == 1 {
			args = args[:1]
		}
		if _, err := db.ExecContext(ctx, q(stmt), args...); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
}
