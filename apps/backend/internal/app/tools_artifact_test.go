package app

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/kandev/kandev/apps/backend/internal/action"
	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

func TestWalkthroughTools(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	s := e.sessionMCP(kanban.ModeTask, "")
	refused(e, s.Client, "get_walkthrough_kandev", "", "NOT_FOUND: artifact not found")
	refused(e, s.Client, "show_walkthrough_kandev", `{"steps":[{"file":"a.go","line":10,"line_end":9,"text":"t"}]}`,
		"VALIDATION_ERROR: steps[0].line_end: must be >= line")
	var first, second, got kanban.Artifact
	callJSON(e, s.Client, "show_walkthrough_kandev", `{"title":"Tour","steps":[{"file":"main.go","line":1,"line_end":20,"text":"Entry point","title":"Start"}]}`, &first)
	callJSON(e, s.Client, "show_walkthrough_kandev", `{"steps":[{"file":"server.go","line":5,"text":"The router","repo":"api"}]}`, &second)
	if first.TaskID != s.TaskID || first.SessionID != s.ID || first.Kind != kanban.ArtifactWalkthrough {
		t.Fatalf("show: got %+v, want a walkthrough on the bound task by this session", first)
	}
	callJSON(e, s.Client, "get_walkthrough_kandev", "{}", &got)
	if got.ID != second.ID || !strings.Contains(string(got.Data), "server.go") {
		t.Fatalf("get: got %s %s, want the latest walkthrough", got.ID, got.Data)
	}
	var del struct {
		Deleted int `json:"deleted"`
	}
	callJSON(e, s.Client, "delete_walkthrough_kandev", "", &del)
	if del.Deleted != 2 || dbInt(e, `SELECT COUNT(*) FROM task_artifacts WHERE task_id = ?`, s.TaskID) != 0 {
		t.Fatalf("delete: got %d deleted, want 2 and no rows left", del.Deleted)
	}
	callJSON(e, s.Client, "delete_walkthrough_kandev", "", &del)
	if del.Deleted != 0 {
		t.Fatalf("delete again: got %d, want 0", del.Deleted)
	}

	// task_id: a task the session created, written, read and deleted by
	// id; another task of the workspace is only read (--session-scope
	// tree).
	var made action.TaskCreateOut
	callJSON(e, s.Client, "create_task_kandev", `{"title":"other","start_agent":false}`, &made)
	other := made.Task
	neighbour := e.newTask("neighbour")
	e.dispatch(kanban.ActionArtifactCreate, map[string]any{"task_id": neighbour.ID, "kind": kanban.ArtifactWalkthrough,
		"data": map[string]any{"steps": []any{map[string]any{"file": "n.go", "line": 1, "text": "theirs"}}}}, nil)
	callJSON(e, s.Client, "get_walkthrough_kandev", fmt.Sprintf(`{"task_id":%q}`, neighbour.ID), &got)
	for _, args := range []string{fmt.Sprintf(`{"task_id":%q}`, neighbour.ID), fmt.Sprintf(`{"task_id":%q,"steps":[{"file":"x.go","line":1,"text":"t"}]}`, neighbour.ID)} {
		tool := map[bool]string{true: "show_walkthrough_kandev", false: "delete_walkthrough_kandev"}[strings.Contains(args, "steps")]
		refused(e, s.Client, tool, args, "FORBIDDEN: a task session may change only its own task, its subtasks and the tasks it created (with their subtasks)")
	}
	callJSON(e, s.Client, "show_walkthrough_kandev", fmt.Sprintf(`{"task_id":%q,"steps":[{"file":"x.go","line":1,"text":"t"}]}`, other.ID), &first)
	callJSON(e, s.Client, "get_walkthrough_kandev", fmt.Sprintf(`{"task_id":%q}`, other.ID), &got)
	if first.TaskID != other.ID || got.ID != first.ID {
		t.Fatalf("walkthrough on task_id: stored on %s, read %s; want %s on %s", first.TaskID, got.ID, first.ID, other.ID)
	}
	refused(e, s.Client, "get_walkthrough_kandev", `{"task_id":"self"}`, "NOT_FOUND: artifact not found")
	foreign := foreignTask(e)
	for _, tool := range []string{"get_walkthrough_kandev", "delete_walkthrough_kandev"} {
		refused(e, s.Client, tool, fmt.Sprintf(`{"task_id":%q}`, foreign.ID), "FORBIDDEN: task is outside this session's workspace")
	}
	refused(e, s.Client, "show_walkthrough_kandev", fmt.Sprintf(`{"task_id":%q,"steps":[{"file":"x.go","line":1,"text":"t"}]}`, foreign.ID),
		"FORBIDDEN: task is outside this session's workspace")
	callJSON(e, s.Client, "delete_walkthrough_kandev", fmt.Sprintf(`{"task_id":%q}`, other.ID), &del)
	if del.Deleted != 1 || dbInt(e, `SELECT COUNT(*) FROM task_artifacts WHERE task_id = ?`, other.ID) != 0 {
		t.Fatalf("delete on task_id: got %d deleted, want 1 and no rows left", del.Deleted)
	}
}

func TestReviewAndRichOutputTools(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	s := e.sessionMCP(kanban.ModeTask, "")
	var findings kanban.Artifact
	refused(e, s.Client, "publish_review_findings_kandev", `{"findings":[{"file":"db.go","line":42,"line_end":41,"severity":"nit","title":"t","body":"b"}]}`,
		"VALIDATION_ERROR: findings[0].line_end: must be >= line")
	callJSON(e, s.Client, "publish_review_findings_kandev", `{"task_id":"self","summary":"Two issues","findings":[
		{"file":"db.go","line":42,"line_end":48,"repo":"api","severity":"blocker","category":"correctness","title":"Lost update","body":"The read and write race.","suggestion":"Use a transaction."},
		{"severity":"nit","title":"Naming","body":"Prefer shorter names."}]}`, &findings)
	var stored struct {
		Findings []struct {
			Severity string `json:"severity"`
			LineEnd  int    `json:"line_end"`
			Repo     string `json:"repo"`
		} `json:"findings"`
	}
	raw := dbStr(e, `SELECT data FROM task_artifacts WHERE id = ? AND kind = 'review_findings'`, findings.ID)
	if err := json.Unmarshal([]byte(raw), &stored); err != nil || len(stored.Findings) != 2 || stored.Findings[0].Severity != "blocker" ||
		stored.Findings[0].LineEnd != 48 || stored.Findings[0].Repo != "api" || findings.TaskID != s.TaskID {
		t.Fatalf("stored findings: got %s (%v) on %s, want both findings, the first with its range and repo", raw, err, findings.TaskID)
	}
	if strings.Contains(raw, "task_id") {
		t.Fatalf("stored findings: got %s, want task_id kept out of the data", raw)
	}

	refused(e, s.Client, "show_rich_output_kandev", `{"version":1,"title":"Perf","blocks":[{"type":"chart","chart_type":"bar","title":"P","summary":"s","labels":["a","b"],"series":[{"label":"s","values":[1]}]}]}`,
		"VALIDATION_ERROR: blocks[0].series[0].values: must have one value per label")
	var rich kanban.Artifact
	callJSON(e, s.Client, "show_rich_output_kandev", `{"version":1,"title":"Benchmarks","blocks":[
		{"type":"chart","chart_type":"line","title":"Latency","summary":"p99 halved","labels":["p50","p99"],"series":[{"label":"before (ms)","values":[1.5,9]},{"label":"after (ms)","values":[1,null]}]},
		{"type":"metrics","items":[{"label":"Throughput","value":"1,200 req/s","detail":"+150 since yesterday"}]}]}`, &rich)
	if rich.Kind != kanban.ArtifactRichOutput || !strings.Contains(string(rich.Data), "Throughput") || !strings.Contains(string(rich.Data), "null") {
		t.Fatalf("rich output: got %+v, want the stored blocks returned", rich)
	}
	if n := dbInt(e, `SELECT COUNT(*) FROM task_artifacts WHERE task_id = ? AND session_id = ?`, s.TaskID, s.ID); n != 2 {
		t.Fatalf("artifacts on the task: got %d, want 2", n)
	}
}

func TestBranchSourceTools(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	s := e.sessionMCP(kanban.ModeTask, "")
	refused(e, s.Client, "add_branch_to_task_kandev", `{"local_path":"/src/api","repository_url":"https://example.com/api.git","base_branch":"main"}`,
		"VALIDATION_ERROR: provide at most one of repository_id, local_path, repository_url")
	refused(e, s.Client, "add_branch_to_task_kandev", `{"base_branch":"main"}`,
		"VALIDATION_ERROR: provide one of repository_id, local_path, repository_url (the task does not have exactly one repository)")
	refused(e, s.Client, "update_repository_base_branch_kandev", `{"base_branch":"dev"}`,
		"NOT_FOUND: the task has no repository; add one with a branch first")

	// The session names what the operator registered (it may register
	// nothing itself: TestAttackRegisterHostilePaths).
	api, notes := t.TempDir(), t.TempDir()
	for _, r := range []action.RepositoryCreateIn{{LocalPath: api}, {RemoteURL: "https://example.com/web.git"}, {Name: "Notes", LocalPath: notes}} {
		e.dispatch(kanban.ActionRepositoryCreate, r, nil)
	}
	var added action.TaskBranchOut
	callJSON(e, s.Client, "add_branch_to_task_kandev", `{"local_path":`+mustJSONString(api)+`,"base_branch":"develop","checkout_branch":"feat/login"}`, &added)
	row := dbStr(e, `SELECT base_branch || '|' || checkout_branch FROM task_repositories WHERE task_id = ? AND repository_id = ?`, s.TaskID, added.Repository.ID)
	if added.RepositoryCreated || added.Repository.LocalPath != "" || row != "develop|feat/login" {
		t.Fatalf("add branch: got %+v and row %q, want the registered repository (no local path shown) linked develop|feat/login", added, row)
	}
	var link kanban.TaskRepository
	callJSON(e, s.Client, "update_repository_base_branch_kandev", `{"base_branch":"release"}`, &link)
	row = dbStr(e, `SELECT base_branch || '|' || checkout_branch FROM task_repositories WHERE task_id = ?`, s.TaskID)
	if row != "release|feat/login" {
		t.Fatalf("base branch: got %q, want release keeping the checkout branch", row)
	}

	var sources action.SourcesAddOut
	refused(e, s.Client, "add_workspace_sources_kandev", `{"sources":[{"kind":"folder","local_path":"docs"}]}`,
		"VALIDATION_ERROR: sources[0].local_path: must be an absolute path")
	callJSON(e, s.Client, "add_workspace_sources_kandev", `{"sources":[{"kind":"repository","local_path":`+mustJSONString(api)+`},`+
		`{"kind":"repository","remote_url":"https://example.com/web.git","base_branch":"trunk"},{"kind":"folder","local_path":`+mustJSONString(notes)+`}]}`, &sources)
	if len(sources.Items) != 3 || sources.Items[0].Created || sources.Items[1].Created || sources.Items[1].TaskRepository.BaseBranch != "trunk" ||
		sources.Items[2].Repository.Name != "Notes" {
		t.Fatalf("sources: got %+v, want the known api and web repositories and the notes folder", sources)
	}
	if n := dbInt(e, `SELECT COUNT(*) FROM task_repositories WHERE task_id = ?`, s.TaskID); n != 3 {
		t.Fatalf("task repositories: got %d, want 3", n)
	}
	callJSON(e, s.Client, "add_branch_to_task_kandev", fmt.Sprintf(`{"repository_id":%q,"base_branch":"main"}`, sources.Items[1].Repository.ID), &added)
	refused(e, s.Client, "update_repository_base_branch_kandev", `{"base_branch":"dev"}`,
		"VALIDATION_ERROR: repository_id: is required: the task has several repositories")
	callJSON(e, s.Client, "update_repository_base_branch_kandev", fmt.Sprintf(`{"task_repository_id":%q,"base_branch":"dev"}`, sources.Items[1].Repository.ID), &link)
	if link.BaseBranch != "dev" || link.RepositoryID != sources.Items[1].Repository.ID {
		t.Fatalf("base branch by task_repository_id: got %+v", link)
	}
	sib := e.newTask("sibling")
	refused(e, s.Client, "add_branch_to_task_kandev", fmt.Sprintf(`{"task_id":%q,"local_path":"/x","base_branch":"main"}`, sib.ID),
		"FORBIDDEN: a session may only change the repositories of its own task, its subtasks and the tasks it created")
}

func TestStepCompleteTool(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	s := e.sessionMCP(kanban.ModeTask, "")
	steps := boardSteps(e, s.TaskID) // the task starts on Backlog, which auto-advances
	var out action.StepCompleteOut
	callJSON(e, s.Client, "step_complete_kandev", `{"summary":"Triaged","handoff":"Start with the parser","blockers":"needs an API key"}`, &out)
	if !out.Advanced || out.ToStepID != steps[1].ID || dbStr(e, `SELECT workflow_step_id FROM tasks WHERE id = ?`, s.TaskID) != steps[1].ID {
		t.Fatalf("step_complete: got %+v, want the task moved to %s", out, steps[1].Name)
	}
	if n := dbInt(e, `SELECT COUNT(*) FROM task_artifacts WHERE task_id = ? AND kind = 'step_complete'`, s.TaskID); n != 1 {
		t.Fatalf("signals: got %d, want 1", n)
	}
	if b := dbStr(e, `SELECT json_extract(data, '$.blockers') FROM task_artifacts WHERE task_id = ? AND kind = 'step_complete'`, s.TaskID); b != "needs an API key" {
		t.Fatalf("recorded blockers: got %q, want the text given", b)
	}
	off := false
	e.dispatch(kanban.ActionWorkflowStepUpdate, action.StepUpdateIn{StepID: steps[1].ID, AutoAdvance: &off}, nil)
	callJSON(e, s.Client, "step_complete_kandev", `{"summary":"Built it"}`, &out)
	if out.Advanced || dbStr(e, `SELECT workflow_step_id FROM tasks WHERE id = ?`, s.TaskID) != steps[1].ID {
		t.Fatalf("step_complete without auto-advance: got %+v, want the task to stay", out)
	}
}
