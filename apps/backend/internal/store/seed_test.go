package store

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/kandev/kandev/apps/backend/internal/action"
	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// seededTables are the tables Seed writes.
var seededTables = []string{"workspaces", "workflows", "workflow_steps", "agents", "agent_profiles",
	"executors", "executor_profiles"}

// seedState renders the row counts and the latest update time of each
// seeded table.
func seedState(t *testing.T, s *Store) string {
	t.Helper()
	var b strings.Builder
	for _, tbl := range seededTables {
		col := "updated_at"
		if tbl == "executors" {
			col = "created_at"
		}
		var last string
		if err := s.stmts.QueryRowContext(context.Background(), `SELECT COALESCE(MAX(`+col+`), '') FROM `+tbl).Scan(&last); err != nil {
			t.Fatalf("read %s: %v", tbl, err)
		}
		fmt.Fprintf(&b, "%s=%d@%s ", tbl, countRows(t, s, tbl), last)
	}
	return b.String()
}

func TestSeedDefaults(t *testing.T) {
	bothEngines(t, testSeedDefaults)
}

func testSeedDefaults(t *testing.T) {
	s := newTestStore(t)
	ctx := context.Background()
	if err := action.Seed(ctx, s); err != nil {
		t.Fatalf("seed: %v", err)
	}
	wss, err := s.ListWorkspaces(ctx, kanban.Page{})
	if err != nil || len(wss.Items) != 1 || wss.Items[0].Name != "Default" {
		t.Fatalf("got %+v, %v, want one workspace Default", wss, err)
	}
	wfs, err := s.ListWorkflows(ctx, wss.Items[0].ID, kanban.Page{})
	if err != nil || len(wfs.Items) != 1 || wfs.Items[0].Name != "Kanban" {
		t.Fatalf("got %+v, %v, want one workflow Kanban", wfs, err)
	}
	steps, err := s.ListSteps(ctx, wfs.Items[0].ID, kanban.Page{})
	if err != nil {
		t.Fatalf("list steps: %v", err)
	}
	got := stepLines(t, steps.Items)
	// The reference's Kanban in function: a turn on Backlog takes the
	// task to In Progress, In Progress starts an agent, a finished turn
	// goes to Review, a new turn in Review or Done goes back to work, a
	// merged pull request in In Progress or Review moves the task to
	// Done, Done completes the task.
	want := []string{
		"0:Backlog start=true auto=true signal=false on_turn_start:move_to_next on_turn_complete:move_to_step→Review",
		"1:In Progress start=false auto=true signal=false on_enter:start_agent on_turn_complete:move_to_step→Review on_pr_merged:move_to_step→Done",
		"2:Review start=false auto=true signal=false on_turn_start:move_to_previous on_pr_merged:move_to_step→Done",
		"3:Done start=false auto=false signal=false on_enter:set_state=COMPLETED on_turn_start:move_to_step→In Progress"}
	if !slices.Equal(got, want) {
		t.Fatalf("got steps %v, want %v", got, want)
	}

	agents, err := s.ListAgents(ctx, kanban.Page{})
	if err != nil {
		t.Fatalf("list agents: %v", err)
	}
	var names []string
	for _, a := range agents.Items {
		names = append(names, a.Name+"="+a.DisplayName)
		profiles, err := s.ListAgentProfiles(ctx, kanban.ProfileFilter{ParentID: a.ID}, kanban.Page{})
		if err != nil || len(profiles.Items) != 1 || profiles.Items[0].Name != "default" || !profiles.Items[0].IsDefault {
			t.Fatalf("agent %s: got profiles %+v, %v, want one default profile named default", a.Name, profiles, err)
		}
	}
	wantAgents := []string{"claude-code=Claude Code", "codex=Codex", "gemini=Gemini CLI", "mock-agent=Mock Agent", "opencode=OpenCode"}
	if !slices.Equal(names, wantAgents) {
		t.Fatalf("got agents %v, want %v", names, wantAgents)
	}

	checkSeededExecutors(t, s)
}

// stepLines is one line per step: its position, name, flags and event
// actions (with the steps they move to and the states they set).
func stepLines(t *testing.T, steps []kanban.WorkflowStep) []string {
	t.Helper()
	var got []string
	name := map[string]string{}
	for _, st := range steps {
		name[st.ID] = st.Name
	}
	for _, st := range steps {
		line := fmt.Sprintf("%d:%s start=%v auto=%v signal=%v", st.Position, st.Name, st.IsStartStep, st.AutoAdvance, st.AutoAdvanceRequiresSignal)
		for _, ev := range kanban.StepEventKinds {
			for _, a := range st.Events[ev] {
				line += " " + ev + ":" + a.Type
				if to := a.ConfigString("step_id"); to != "" {
					line += "→" + name[to]
				}
				if state := a.ConfigString("state"); state != "" {
					line += "=" + state
				}
			}
		}
		got = append(got, line)
		if st.Color == "" || !st.AllowManualMove {
			t.Errorf("step %s: got color %q allow_manual_move %v, want a color and manual moves", st.Name, st.Color, st.AllowManualMove)
		}
	}
	return got
}

// checkSeededExecutors checks the seeded executors, each with one default
// profile that inherits the MCP policy.
func checkSeededExecutors(t *testing.T, s *Store) {
	t.Helper()
	ctx := context.Background()
	execs, err := s.ListExecutors(ctx, kanban.Page{})
	if err != nil {
		t.Fatalf("list executors: %v", err)
	}
	var execNames []string
	for _, e := range execs.Items {
		execNames = append(execNames, e.Name+"="+e.Type)
		profiles, err := s.ListExecutorProfiles(ctx, kanban.ProfileFilter{ParentID: e.ID}, kanban.Page{})
		if e.Type == kanban.ExecutorTypeDocker || e.Type == kanban.ExecutorTypeSSH { // the operator makes their profiles: an image, a host to choose
			if err != nil || len(profiles.Items) != 0 {
				t.Fatalf("executor %s: got profiles %+v, %v, want none", e.Name, profiles, err)
			}
			continue
		}
		if err != nil || len(profiles.Items) != 1 || profiles.Items[0].Name != "default" ||
			!profiles.Items[0].IsDefault || profiles.Items[0].MCPPolicy != "inherit" {
			t.Fatalf("executor %s: got profiles %+v, %v, want one default inherit profile", e.Name, profiles, err)
		}
	}
	if want := []string{"exec-docker=docker", "exec-local=local", "exec-ssh=ssh", "exec-worktree=worktree"}; !slices.Equal(execNames, want) {
		t.Fatalf("got executors %v, want %v", execNames, want)
	}
}

func TestSeedIdempotent(t *testing.T) {
	bothEngines(t, testSeedIdempotent)
}

func testSeedIdempotent(t *testing.T) {
	s := newTestStore(t)
	ctx := context.Background()
	if err := action.Seed(ctx, s); err != nil {
		t.Fatalf("seed: %v", err)
	}
	first := seedState(t, s)
	if err := action.Seed(ctx, s); err != nil {
		t.Fatalf("second seed: %v", err)
	}
	if second := seedState(t, s); second != first {
		t.Fatalf("got %s after a second seed, want unchanged %s", second, first)
	}
}

func TestSeedKeepsExistingData(t *testing.T) {
	bothEngines(t, testSeedKeepsExistingData)
}

func testSeedKeepsExistingData(t *testing.T) {
	s := newTestStore(t)
	ctx := context.Background()
	// A database with a workspace of its own but no agents gets only the agents and executors.
	newBoard(t, s, "Mine")
	if err := action.Seed(ctx, s); err != nil {
		t.Fatalf("seed: %v", err)
	}
	wss, err := s.ListWorkspaces(ctx, kanban.Page{})
	if err != nil || len(wss.Items) != 1 || wss.Items[0].Name != "Mine" {
		t.Fatalf("got %+v, %v, want only the existing workspace", wss, err)
	}
	if n := countRows(t, s, "agents"); n != len(seedAgents) {
		t.Fatalf("got %d agents, want %d", n, len(seedAgents))
	}
	if n := countRows(t, s, "executor_profiles"); n != len(seedExecutors)-2 { // none for exec-docker and exec-ssh
		t.Fatalf("got %d executor profiles, want %d", n, len(seedExecutors)-2)
	}
}

// TestSeedAddsLaterExecutors: a database seeded before exec-docker and
// exec-ssh existed gets them (with no profile) at the next start, once, and its default
// executor profile stays the local one.
func TestSeedAddsLaterExecutors(t *testing.T) {
	bothEngines(t, testSeedAddsLaterExecutors)
}

func testSeedAddsLaterExecutors(t *testing.T) {
	s := newTestStore(t)
	ctx := context.Background()
	if err := action.Seed(ctx, s); err != nil {
		t.Fatalf("seed: %v", err)
	}
	if _, err := s.stmts.ExecContext(ctx, `DELETE FROM executors WHERE name IN ('exec-docker', 'exec-ssh')`); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := action.Seed(ctx, s); err != nil {
			t.Fatalf("seed: %v", err)
		}
	}
	checkSeededExecutors(t, s)
	def, err := s.DefaultExecutorProfile(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, typ := range []string{kanban.ExecutorTypeDocker, kanban.ExecutorTypeSSH} {
		if _, err := s.CreateExecutorProfile(ctx, kanban.ExecutorProfile{ExecutorID: executorIDOf(t, s, typ), Name: "box", IsDefault: true}); err != nil {
			t.Fatal(err)
		}
		if again, err := s.DefaultExecutorProfile(ctx); err != nil || again.ID != def.ID {
			t.Fatalf("got default %+v, %v after a %s profile, want %s still", again, err, typ, def.ID)
		}
	}
}

// executorIDOf is the id of the seeded executor of type typ.
func executorIDOf(t *testing.T, s *Store, typ string) string {
	t.Helper()
	execs, err := s.ListExecutors(context.Background(), kanban.Page{})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range execs.Items {
		if e.Type == typ {
			return e.ID
		}
	}
	t.Fatal("no executor of type " + typ)
	return ""
}
