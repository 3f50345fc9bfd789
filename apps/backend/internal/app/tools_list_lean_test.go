package app

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/kandev/kandev/apps/backend/internal/action"
	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// maxPageBytes is the bound for one 50-task page of tasks with
// 2 KB prompts (the JSON an agent reads, once).
const maxPageBytes = 25_000

// TestListTasksLean lists 50 tasks with 2 KB prompts through a real MCP
// client: the page is summaries within the bound, each with a flagged
// preview, the text content is the structured content's JSON, and verbose
// brings back every field and the whole prompt.
func TestListTasksLean(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	prompt := strings.Repeat("Implement the thing, then test it. ", 60)[:2000]
	f := false
	for range 50 {
		e.dispatch(kanban.ActionTaskCreate, action.TaskCreateIn{Title: "A task with a long prompt", Prompt: prompt, StartAgent: &f}, nil)
	}
	c := e.operatorMCP()

	res := e.call(c, "list_tasks_kandev", `{}`)
	sc, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	if len(sc) > maxPageBytes {
		t.Errorf("50-task page: got %d bytes, want at most %d", len(sc), maxPageBytes)
	}
	t.Logf("50-task page of 2 KB prompts: %d bytes of JSON", len(sc))
	var page kanban.List[kanban.TaskSummary]
	e.decode(res, &page)
	if len(page.Items) != 50 {
		t.Fatalf("got %d items, want 50", len(page.Items))
	}
	var fromText any
	if err := json.Unmarshal([]byte(text(res)), &fromText); err != nil {
		t.Fatal(err)
	}
	if tb, _ := json.Marshal(fromText); string(tb) != string(sc) {
		t.Error("the text content is not the structured content's JSON")
	}
	for _, it := range page.Items {
		if !it.DescriptionTruncated || it.Description != prompt[:kanban.PreviewLen] || it.ID == "" || it.WorkflowStepID == "" {
			t.Fatalf("got item %+v, want a summary with the prompt's first %d characters, flagged as cut", it, kanban.PreviewLen)
		}
	}
	if strings.Contains(text(res), `"created_at"`) {
		t.Error("summaries carry fields beyond what choosing a task needs")
	}

	var verbose kanban.List[kanban.TaskDetail]
	e.decode(e.call(c, "list_tasks_kandev", `{"verbose":true,"limit":5}`), &verbose)
	if len(verbose.Items) != 5 || verbose.NextCursor == "" {
		t.Fatalf("verbose: got %d items (next cursor %q), want 5 and a next page", len(verbose.Items), verbose.NextCursor)
	}
	for _, it := range verbose.Items {
		if it.Description != prompt || it.CreatedAt.IsZero() || it.WorkspaceID == "" {
			t.Fatalf("verbose item: got %d-byte prompt, created %v, workspace %q; want every field and the whole prompt",
				len(it.Description), it.CreatedAt, it.WorkspaceID)
		}
	}
}
