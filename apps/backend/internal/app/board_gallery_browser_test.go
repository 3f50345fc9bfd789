package app

import (
	"encoding/json"
	"fmt"
	"slices"
	"testing"

	"github.com/kandev/kandev/apps/backend/internal/action"
	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// galleryCard is what the gallery shows of one template.
type galleryCard struct {
	ID    string   `json:"id"`
	Name  string   `json:"name"`
	Desc  string   `json:"desc"`
	Steps []string `json:"steps"`
	Field string   `json:"field"`
}

// workflowNamed returns the id of the workspace's workflow named name, or
// "" when it has none.
func workflowNamed(e *env, name string) string {
	var wfs kanban.List[kanban.Workflow]
	e.dispatch(kanban.ActionWorkflowList, action.WorkflowListIn{WorkspaceID: e.workspaceID()}, &wfs)
	for _, w := range wfs.Items {
		if w.Name == name {
			return w.ID
		}
	}
	return ""
}

// TestBoardTemplateGallery: Settings › Workflows lists every built-in
// template in gallery order with its description and steps, each offering
// a name that is free (Kanban 2 beside the seeded Kanban). Creating from
// Plan & Build under a name of one's own makes that workflow with the
// template's steps and automations; the name of an existing workflow
// creates nothing and says so. A workflow made from the Kanban template
// moves a mock agent's new task from Backlog to Review by itself.
func TestBoardTemplateGallery(t *testing.T) {
	e := newAgentEnv(t)
	b := newTab(t, e)
	b.signIn()
	b.open("#/config/workflows", "config")
	b.until("the gallery", `document.querySelectorAll('#template-gallery .template').length > 0`)
	checkGallery(b)
	b.shot("board-template-gallery")

	plan := `#template-gallery .template[data-template="plan-and-build"]`
	b.set(plan+" [name=name]", "Plan then build")
	b.click(plan + " button.primary")
	b.until("the new workflow's section", `[...document.querySelectorAll('section[data-workflow] > h2')].some((x) => x.textContent === 'Plan then build')`)
	wf := workflowNamed(e, "Plan then build")
	var steps kanban.List[kanban.WorkflowStep]
	e.dispatch(kanban.ActionWorkflowStepList, action.StepListIn{WorkflowID: wf}, &steps)
	if len(steps.Items) != 5 || steps.Items[1].Name != "Plan" || !steps.Items[1].IsStartStep ||
		len(steps.Items[1].Events[kanban.EventEnter]) != 2 || steps.Items[1].Events[kanban.EventEnter][0].Type != kanban.AutoEnablePlanMode {
		raw, _ := json.Marshal(steps.Items)
		t.Fatalf("the workflow made from Plan & Build: %s", raw)
	}

	kanbanCard := `#template-gallery .template[data-template="kanban"]`
	b.set(kanbanCard+" [name=name]", "Kanban")
	b.click(kanbanCard + " button.primary")
	b.until("the refusal", `[...document.querySelectorAll('#toast p')].some((p) => p.textContent.includes('“Kanban” exists already'))`)
	if n := dbStr(e, `SELECT COUNT(*) FROM workflows WHERE name = 'Kanban'`); n != "1" {
		t.Fatalf("%s workflows named Kanban, want the seeded one only", n)
	}
	b.set(kanbanCard+" [name=name]", "Team board")
	b.click(kanbanCard + " button.primary")
	b.until("the Team board section", `[...document.querySelectorAll('section[data-workflow] > h2')].some((x) => x.textContent === 'Team board')`)
	runOnBoard(b, workflowNamed(e, "Team board"))
}

// checkGallery checks that the gallery shows every template in order
// with its name, description and steps, and a free default name.
func checkGallery(b *tab) {
	t := b.t
	t.Helper()
	var cards []galleryCard
	b.js(`[...document.querySelectorAll('#template-gallery .template')].map((c) => ({id: c.dataset.template,
		name: c.querySelector('h4').textContent, desc: c.querySelector('.desc').textContent,
		steps: [...c.querySelectorAll('.template-steps li')].map((li) => li.textContent),
		field: c.querySelector('[name=name]').value}))`, &cards)
	var ids []string
	for _, c := range cards {
		ids = append(ids, c.ID)
		tmpl, err := action.Template(c.ID)
		if err != nil {
			t.Fatalf("the gallery shows %q: %v", c.ID, err)
		}
		var steps []string
		for _, st := range tmpl.Document.Workflows[0].Steps {
			steps = append(steps, st.Name)
		}
		if c.Name != tmpl.Name || c.Desc != tmpl.Description || !slices.Equal(c.Steps, steps) {
			t.Errorf("card %s: got %+v, want name %q, its description and steps %v", c.ID, c, tmpl.Name, steps)
		}
		if want := map[bool]string{true: "Kanban 2", false: tmpl.Name}[c.ID == "kanban"]; c.Field != want {
			t.Errorf("card %s offers the name %q, want %q", c.ID, c.Field, want)
		}
	}
	if !slices.Equal(ids, action.TemplateIDs) {
		t.Fatalf("the gallery lists %v, want every template in order %v", ids, action.TemplateIDs)
	}
}

// runOnBoard creates a mock agent's task on the board of workflow team (a
// Kanban template) and waits for its card to reach Review by itself.
func runOnBoard(b *tab, team string) {
	e := b.e
	b.t.Helper()
	b.open(fmt.Sprintf("#/?ws=%s&wf=%s", e.workspaceID(), team), "board")
	b.click("#new-task")
	b.until("the dialog", `document.querySelector('#create-task [name=title]')`)
	b.set("#create-task [name=title]", "From the gallery")
	b.set("#create-task [name=prompt]", "@say Made on a board from the gallery.")
	b.set("#create-task [name=agent_profile_id]", e.profileOf("mock-agent").ID)
	b.click("#create-task button.primary")
	b.until("the new card", `[...document.querySelectorAll('.card .title')].some((a) => a.textContent === 'From the gallery')`)
	taskID := b.str(`[...document.querySelectorAll('.card')].find((c) => c.querySelector('.title').textContent === 'From the gallery').dataset.id`)
	var steps kanban.List[kanban.WorkflowStep]
	e.dispatch(kanban.ActionWorkflowStepList, action.StepListIn{WorkflowID: team}, &steps)
	review := steps.Items[2]
	e.waitMessage(taskID, "status", "on_turn_start of Backlog, move_to_next: moved to In Progress")
	// The engine's move first (bounded by agentWait: a loaded machine runs
	// the agent slowly), then the board showing it.
	e.waitStep(taskID, review)
	b.until("the card in Team board's Review column", fmt.Sprintf(`(document.querySelector('.card[data-id=%q]') || {closest: () => null}).closest('.column')?.dataset.step === %q`, taskID, review.ID))
}
