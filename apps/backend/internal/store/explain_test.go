package store

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// actualRows matches the rows a PostgreSQL plan node produced.
var actualRows = regexp.MustCompile(`actual time=[0-9.]+\.\.[0-9.]+ rows=(\d+)`)

// TestListingPlans checks that the first page of each live-task listing
// (workspace, workflow, step, parent) is an index walk that stops after
// the page, on a board of 1,500 tasks (five of them subtasks of one) whose statistics are as a growing
// table's are (none yet): on PostgreSQL no plan node reads more rows than
// the page (limit + 1), on SQLite every table is searched through an index
// and nothing is sorted. Without the live-task indexes of migration 0022
// PostgreSQL ANDs a bitmap of every live task into the listing and into
// each row's subtask count.
func TestListingPlans(t *testing.T) {
	bothEngines(t, func(t *testing.T) {
		s := newTestStore(t)
		b := newBoard(t, s, "plans")
		ctx := context.Background()
		parent := mustTask(t, s, b, "", "parent")
		for i := 0; i < 1500; i++ {
			if _, _, err := s.CreateTask(ctx, kanban.TaskCreate{WorkspaceID: b.ws.ID, Title: fmt.Sprintf("task %d", i),
				ParentID: map[bool]string{true: parent.ID}[i%300 == 0]}); err != nil {
				t.Fatal(err)
			}
		}
		const limit = 5
		for name, f := range map[string]kanban.TaskFilter{
			"workspace": {WorkspaceID: b.ws.ID},
			"workflow":  {WorkspaceID: b.ws.ID, WorkflowID: b.wf.ID},
			"step":      {WorkspaceID: b.ws.ID, WorkflowStepID: b.steps[0].ID},
			"parent":    {WorkspaceID: b.ws.ID, ParentID: parent.ID},
		} {
			plan, err := s.ExplainTaskListing(ctx, f, kanban.Page{Limit: limit})
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if msg := planProblem(s.Engine(), plan, limit+1); msg != "" {
				t.Errorf("%s listing: %s\n%s", name, msg, strings.Join(plan, "\n"))
			}
		}
	})
}

// planProblem says what in plan walks more than a page, or "".
func planProblem(eng Engine, plan []string, page int) string {
	if len(plan) == 0 {
		return "empty plan"
	}
	for _, line := range plan {
		if eng == SQLite {
			if strings.HasPrefix(strings.TrimSpace(line), "SCAN ") || strings.Contains(line, "TEMP B-TREE") {
				return "a full scan or a sort: " + strings.TrimSpace(line)
			}
			continue
		}
		if m := actualRows.FindStringSubmatch(line); m != nil {
			if n, _ := strconv.Atoi(m[1]); n > page {
				return fmt.Sprintf("a plan node read %d rows for a page of %d: %s", n, page, strings.TrimSpace(line))
			}
		}
	}
	return ""
}
