package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kandev/kandev/apps/backend/internal/action"
	"github.com/kandev/kandev/apps/backend/internal/kanban"
	"github.com/kandev/kandev/apps/backend/internal/pgtest"
)

// must(v, err)(t) fails t when err is not nil, else returns v.
func must[T any](v T, err error) func(t *testing.T) T {
	return func(t *testing.T) T {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
}

// seedOffer keeps an agent's offer.
func seedOffer(t *testing.T, s *Store) {
	t.Helper()
	if err := s.SetAgentOffer(context.Background(), kanban.AgentOffer{Agent: "mock-agent",
		Models: []kanban.AgentModel{{ID: "mock-fast", Name: "Fast ü"}}, Modes: []string{"plan"}, OfferedAt: kanban.Now()}); err != nil {
		t.Fatal(err)
	}
}

// seedEveryEntity fills every table of a store through its service methods,
// with the optional and self-referencing columns set somewhere.
// It returns the workspace of the board it made.
func seedEveryEntity(t *testing.T, s *Store) string {
	t.Helper()
	ctx := context.Background()
	f := &fixture{s: s}
	if err := action.Seed(ctx, s); err != nil {
		t.Fatal(err)
	}
	f.b = newBoard(t, s, "Copied")
	must(s.UpdateStep(ctx, f.b.steps[1].ID, kanban.StepUpdate{WIPLimit: new(2), PullFromStepID: &f.b.steps[0].ID,
		Events: map[string][]kanban.StepAction{"on_enter": {{Type: kanban.AutoStartAgent}}}}))(t)
	repo := must(s.CreateRepository(ctx, kanban.Repository{WorkspaceID: f.b.ws.ID, Name: "repo", LocalPath: "/src/repo"}))(t)
	parent := mustTask(t, s, f.b, "", "parent")
	agent := must(s.DefaultAgentProfile(ctx))(t)
	exec := must(s.DefaultExecutorProfile(ctx))(t)
	child := must3(s.CreateTask(ctx, kanban.TaskCreate{WorkspaceID: f.b.ws.ID, ParentID: parent.ID, Title: "child",
		Description: "prompt ü", ExternalID: "ext-1", BlockedBy: []string{parent.ID}, StartWhenUnblocked: true,
		StartAgentProfileID: agent.ID, StartExecutorProfileID: exec.ID,
		Repository: &kanban.TaskRepositoryInput{RepositoryID: repo.ID, BaseBranch: "main"}}))(t)
	must(s.QueueTask(ctx, child.ID, f.b.steps[1].ID))(t)
	must(s.ArchiveTask(ctx, mustTask(t, s, f.b, f.b.steps[3].ID, "done").ID))(t)
	must(s.UpdateMCPConfig(ctx, agent.ID, kanban.MCPConfigUpdate{Servers: map[string]kanban.MCPServerConfig{"fs": {Type: "stdio", Command: "fs-mcp"}}}))(t)
	sess, _, err := s.CreateSession(ctx, kanban.SessionCreate{TaskID: parent.ID, AgentProfileID: agent.ID,
		ExecutorProfileID: exec.ID, Managed: true, FirstMessage: &kanban.Message{Author: "user", Type: "prompt", Content: "go"}})
	if err != nil {
		t.Fatal(err)
	}
	must3(s.UpdateRun(ctx, sess.ID, kanban.RunUpdate{State: kanban.SessionRunning, Workdir: new("/w"), ExitCode: new(3)}))(t)
	must(s.AppendTaskMessage(ctx, parent.ID, kanban.Message{Author: "kandev", Type: "status", Content: "moved"}))(t)
	must(s.CreatePlan(ctx, kanban.Plan{TaskID: parent.ID, Title: "plan", Content: "v1"}))(t)
	must(s.UpdatePlan(ctx, parent.ID, nil, "v2", "agent"))(t)
	must(s.WriteDocument(ctx, kanban.Document{TaskID: parent.ID, Key: "notes", Title: "Notes", Content: "a"}))(t)
	must(s.AddComment(ctx, kanban.Comment{TaskID: parent.ID, Author: kanban.CommentAuthorOperator, Body: "Looks good"}))(t)
	must(s.WriteDocument(ctx, kanban.Document{TaskID: parent.ID, Key: "notes", Title: "Notes", Content: "b"}))(t)
	must(s.CreateArtifact(ctx, kanban.Artifact{TaskID: parent.ID, SessionID: sess.ID, Kind: kanban.ArtifactRichOutput,
		Data: json.RawMessage(`{"title":"t","content":"c"}`)}))(t)
	q := must3(s.CreateQuestion(ctx, kanban.Question{SessionID: sess.ID, TaskID: parent.ID, WorkspaceID: f.b.ws.ID, Questions: twoItems()}, nil))(t)
	must3(s.AnswerQuestion(ctx, q.ID, nil, true, "later"))(t)
	p := must(s.CreatePermission(ctx, kanban.Permission{SessionID: sess.ID, PendingID: "call-1", Title: "Run ls",
		Options: []kanban.PermissionOption{{OptionID: "allow", Name: "Allow", Kind: "allow_once"}}}))(t)
	must3(s.ResolvePermission(ctx, p.ID, "allow", "operator"))(t)
	must(s.ReplaceUpstreams(ctx, sess.ID, []kanban.UpstreamServer{{Name: "fs", Type: "stdio", State: "ready", ToolsServed: 1,
		ToolsRefused: 1, Refused: []kanban.RefusedTool{{Tool: "huge", Limit: "visits", Reason: "schema too large"}}}}))(t)
	must3(s.UpdateAgentMode(ctx, parent.ID, kanban.AgentModeUpdate{PlanMode: new(true), SessionMode: new("plan")}))(t)
	must(s.SetBudget(ctx, kanban.BudgetSet{Scope: kanban.BudgetWorkspace, ScopeID: f.b.ws.ID, TokenLimit: 5,
		CostLimit: &kanban.Cost{Amount: 1, Currency: "USD"}}))(t) // the usage below fires its alert
	must(s.RecordUsage(ctx, kanban.UsageReport{SessionID: sess.ID, AgentSessionID: "acp-1", Tokens: kanban.Tokens{Input: 3, Output: 2},
		Cost: &kanban.Cost{Amount: 0.5, Currency: "USD"}, ContextUsed: 10, ContextSize: 100}))(t)
	seedOffer(t, s)
	if err := s.SaveWorktree(ctx, kanban.Worktree{TaskID: parent.ID, RepositoryID: repo.ID, Path: "/wt", Branch: "kandev/x"}); err != nil {
		t.Fatal(err)
	}
	pr := must(s.LinkPullRequest(ctx, kanban.PullRequest{TaskID: child.ID, RepositoryID: repo.ID, Forge: kanban.ForgeGitHub, ForgeRepo: "o/r",
		Number: 4, State: kanban.PROpen, HeadSHA: shaA, Mergeable: new(false)}))(t)
	on, override := true, "fix it"
	must(s.UpdatePRAutomation(ctx, child.ID, kanban.ForgeGitHub, kanban.PRAutomationUpdate{AutoFixEnabled: &on, AutoFixPromptOverride: &override}))(t)
	pr = must(s.GetPullRequest(ctx, pr.ID))(t)
	pr.Watch.Validators, pr.Watch.RequestedReviewers, pr.Watch.LastCommentID = map[string]string{"/x": `"e"`}, []string{"a"}, 1<<40
	must(s.RecordPoll(ctx, *pr, []kanban.PREvent{{Key: "comment:1", Kind: "review_comment", Payload: []byte(`{"body":"ü"}`)}}))(t)
	must(s.CreateReviewComment(ctx, kanban.ReviewComment{TaskID: child.ID, RepositoryID: repo.ID, Path: "a.go", StartLine: 1, EndLine: 2,
		Side: kanban.SideOld, Body: "why?", AnchorCommit: shaA, AnchorText: "x\ny", Author: "operator"}))(t)
	seedRecords(t, s, f.b.ws.ID, parent.ID)
	return f.b.ws.ID
}

// must3 is must for calls with two results and an error.
func must3[A, B any](a A, _ B, err error) func(t *testing.T) A { return must(a, err) }

// dump renders every row of every table but schema_migrations, ordered,
// as text: two stores with equal dumps hold the same data.
func dump(t *testing.T, s *Store, tables []string) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	for _, tbl := range tables {
		rows, err := s.stmts.QueryContext(context.Background(), `SELECT * FROM `+tbl)
		if err != nil {
			t.Fatalf("dump %s: %v", tbl, err)
		}
		cols, _ := rows.Columns()
		for rows.Next() {
			vals := make([]sql.NullString, len(cols))
			ptrs := make([]any, len(vals))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			if err := rows.Scan(ptrs...); err != nil {
				t.Fatalf("dump %s: %v", tbl, err)
			}
			var line []string
			for i, v := range vals {
				line = append(line, fmt.Sprintf("%s=%v:%s", cols[i], v.Valid, v.String))
			}
			out[tbl] = append(out[tbl], strings.Join(line, " "))
		}
		if err := closeRows(rows); err != nil {
			t.Fatalf("dump %s: %v", tbl, err)
		}
		slices.Sort(out[tbl])
	}
	return out
}

// TestCopyRoundTrip copies a SQLite board with a row in every table into
// an empty PostgreSQL database and reads it back identical; a second copy
// into the now non-empty database is refused and writes nothing.
func TestCopyRoundTrip(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	src := newTestStore(t) // SQLite: this test is not run per engine
	wsID := seedEveryEntity(t, src)
	dst := must(OpenPostgres(ctx, pgtest.Schema(t)))(t)
	t.Cleanup(func() { _ = dst.Close() })
	copied, err := Copy(ctx, src, dst)
	if err != nil {
		t.Fatalf("copy: %v", err)
	}
	var tables []string
	for _, c := range copied {
		tables = append(tables, c.Name)
		if c.Rows == 0 {
			t.Errorf("table %s: got 0 rows, want the seed to fill every table (seedEveryEntity)", c.Name)
		}
	}
	want := dump(t, src, tables)
	if diff := cmp.Diff(want, dump(t, dst, tables)); diff != "" {
		t.Fatalf("target differs from source (-source +target):\n%s", diff)
	}
	// Read back through the service too: a task with every optional field.
	l := must(src.ListTasks(ctx, kanban.TaskFilter{WorkspaceID: wsID, IncludeArchived: true}, kanban.Page{}))(t)
	for _, task := range l.Items {
		got := must(dst.GetTask(ctx, task.ID))(t)
		if diff := cmp.Diff(task, *got); diff != "" {
			t.Fatalf("task %s differs after the copy (-source +target):\n%s", task.Title, diff)
		}
	}
	before := dump(t, dst, tables)
	if _, err := Copy(ctx, src, dst); err == nil || !strings.Contains(err.Error(), "not empty") {
		t.Fatalf("got %v copying into a non-empty database, want a refusal naming it not empty", err)
	}
	if diff := cmp.Diff(before, dump(t, dst, tables)); diff != "" {
		t.Fatalf("a refused copy changed the target:\n%s", diff)
	}
}

// seedRecords fills the notification tables, the agents' offers, the
// audit log (an entry naming target) and the secrets table.
func seedRecords(t *testing.T, s *Store, wsID, target string) {
	t.Helper()
	ctx := context.Background()
	seedNotifications(t, s, wsID, target)
	if err := s.SetAgentOffer(ctx, kanban.AgentOffer{Agent: "mock-agent", Models: []kanban.AgentModel{{ID: "mock-fast", Name: "Fast ü"}},
		Modes: []string{"plan"}, OfferedAt: kanban.Now()}); err != nil {
		t.Fatal(err)
	}
	if err := s.AppendAudit(ctx, kanban.AuditEntry{ID: kanban.NewID(), Actor: "operator", ActorKind: "operator", Action: kanban.ActionTaskMove,
		Targets: []string{target}, Summary: `title="ü"`, Via: "ws", From: "127.0.0.1:1", At: kanban.Now()}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.PutSecret(ctx, kanban.SealedSecret{Name: "TOKEN", KeyID: "k1", Sealed: "c2VhbGVk", Size: 6}); err != nil {
		t.Fatal(err)
	}
	seedRoutine(t, s, wsID, target)
}

// seedRoutine stores a wake_task routine on task and one finished run.
func seedRoutine(t *testing.T, s *Store, wsID, task string) {
	t.Helper()
	ctx := context.Background()
	r := must(s.CreateRoutine(ctx, kanban.Routine{WorkspaceID: wsID, Name: "Nudge ü", Schedule: "0 9 * * 1-5", TimeZone: "Europe/Paris",
		Target: kanban.RoutineWakeTask, TaskID: task, Prompt: "Any news?", Missed: kanban.RoutineMissedRunOnce, Enabled: true,
		NextRunAt: kanban.Now().Add(-time.Minute)}))(t)
	run := kanban.RoutineRun{RoutineID: r.ID, ScheduledFor: r.NextRunAt, StartedAt: kanban.Now(), Outcome: kanban.RunStarted}
	if ok, err := s.ClaimRoutineRun(ctx, r, r.NextRunAt.Add(24*time.Hour), run); err != nil || !ok {
		t.Fatalf("claim: %v, %v", ok, err)
	}
	run.Outcome, run.TaskID = kanban.RunWoken, task
	if err := s.FinishRoutineRun(ctx, run); err != nil {
		t.Fatal(err)
	}
}
