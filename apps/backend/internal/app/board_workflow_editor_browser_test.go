package app

import (
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/kandev/kandev/apps/backend/internal/action"
	"github.com/kandev/kandev/apps/backend/internal/kanban"
)

// choose sets a select's value as a person does: with a change event.
func (b *tab) choose(sel, value string) {
	b.t.Helper()
	var ok bool
	b.js(fmt.Sprintf(`(() => { const el = document.querySelector(%q); if (!el) return false; el.value = %q;
		el.dispatchEvent(new Event('change', {bubbles: true})); return el.value === %q; })()`, sel, value, value), &ok)
	if !ok {
		b.t.Fatalf("no select %s offering %q", sel, value)
	}
}

// check ticks a checkbox.
func (b *tab) check(sel string) {
	b.t.Helper()
	var ok bool
	b.js(fmt.Sprintf(`(() => { const el = document.querySelector(%q); if (!el) return false; el.checked = true; return true; })()`, sel), &ok)
	if !ok {
		b.t.Fatalf("no checkbox %s", sel)
	}
}

// renders is the count of drawings of Settings › Workflows so far.
func (b *tab) renders() int {
	b.t.Helper()
	var n int
	b.js(`Number((document.getElementById('config') || {dataset: {}}).dataset.render || 0)`, &n)
	return n
}

// redrawn waits for a drawing of Settings › Workflows after the drawing n.
func (b *tab) redrawn(n int) {
	b.t.Helper()
	b.until("the page drawn again", fmt.Sprintf(`Number((document.getElementById('config') || {dataset: {}}).dataset.render || 0) > %d && document.getElementById('main').dataset.ready === '1'`, n))
}

// submit clicks a form's primary button and waits for the page drawn
// again (the change's event).
func (b *tab) submit(form string) {
	b.t.Helper()
	n := b.renders()
	b.click(form + " > .actions button.primary")
	b.redrawn(n)
}

// stepOrder is the workflow's step names in board order, from the store.
func stepOrder(e *env, wf string) []string {
	var steps kanban.List[kanban.WorkflowStep]
	e.dispatch(kanban.ActionWorkflowStepList, action.StepListIn{WorkflowID: wf}, &steps)
	var names []string
	for _, st := range steps.Items {
		names = append(names, st.Name)
	}
	return names
}

// editorSteps waits until the editor of workflow wf lists names in order.
func editorSteps(b *tab, wf string, names ...string) {
	b.t.Helper()
	want, _ := json.Marshal(names)
	b.until(fmt.Sprintf("the steps %v", names), fmt.Sprintf(`JSON.stringify([...document.querySelectorAll('section[data-workflow=%q] .step-row strong')].map((s) => s.textContent.replace(/^\d+\. /, ''))) === %q`, wf, want))
}

// TestBoardWorkflowEditor: a three-step workflow with automations built
// by clicking in Settings › Workflows (blank workflow, steps with their
// settings as form controls, automations by event with typed settings,
// reorder with the keyboard and by dragging, delete after a confirmation)
// reads back through workflow.export as built. The step form's fields are
// the workflow.step.update contract's, the automation types and events
// those the engine runs; the backend's refusals appear next to the field
// they name and change nothing.
func TestBoardWorkflowEditor(t *testing.T) {
	e := newEnv(t)
	b := newTab(t, e)
	b.signIn()
	b.open("#/config/workflows", "config")
	b.set("#workflow-blank [name=name]", "Editor flow")
	n := b.renders()
	b.click("#workflow-blank button.primary")
	b.redrawn(n)
	b.until("the new workflow", `[...document.querySelectorAll('section[data-workflow] > h2')].some((x) => x.textContent === 'Editor flow')`)
	wf := workflowNamed(e, "Editor flow")
	sec := fmt.Sprintf(`section[data-workflow=%q]`, wf)
	add := sec + " .add-step"
	checkEditorContract(b, e, add)

	b.set(add+" [name=name]", "Todo")
	b.set(add+" [name=color]", "#112233")
	b.check(add + " [name=is_start_step]")
	b.submit(add + " form")
	editorSteps(b, wf, "Todo")
	b.set(add+" [name=name]", "Doing")
	b.set(add+" [name=wip_limit]", "2")
	b.choose(add+" [name=pull_from_step_id]", stepID(e, wf, "Todo"))
	b.click(add + ` fieldset[data-event=on_enter] .add-automation`)
	b.choose(add+` [name="events.on_enter[0].type"]`, kanban.AutoStartAgent)
	b.set(add+` [name="events.on_enter[0].config.prompt"]`, "Work on the task.")
	b.submit(add + " form")
	editorSteps(b, wf, "Todo", "Doing")
	b.set(add+" [name=name]", "Done")
	b.click(add + ` fieldset[data-event=on_enter] .add-automation`)
	b.choose(add+` [name="events.on_enter[0].type"]`, kanban.AutoSetState)
	b.choose(add+` [name="events.on_enter[0].config.state"]`, string(kanban.TaskCompleted))
	b.submit(add + " form")
	editorSteps(b, wf, "Todo", "Doing", "Done")

	// Doing's edit form: a refused WIP limit, a refused automation, then
	// an automation that moves the task on to Done.
	doing := fmt.Sprintf(`%s .step-row[data-step=%q]`, sec, stepID(e, wf, "Doing"))
	before := e.fingerprint()
	b.set(doing+" [name=wip_limit]", fmt.Sprint(kanban.MaxWIPLimit+1))
	b.click(doing + " form > .actions button.primary")
	b.until("the WIP limit's refusal", fmt.Sprintf(`document.querySelector('%s [data-field=wip_limit] > .field-error:not([hidden])')`, doing))
	b.set(doing+" [name=wip_limit]", "2")
	b.click(doing + ` fieldset[data-event=on_turn_complete] .add-automation`)
	b.choose(doing+` [name="events.on_turn_complete[0].type"]`, kanban.AutoMoveToStep)
	b.click(doing + " form > .actions button.primary")
	b.until("the automation's refusal", fmt.Sprintf(`[...document.querySelectorAll('%s .automations .field-error:not([hidden])')].some((p) => p.textContent)`, doing))
	if where := b.str(fmt.Sprintf(`document.querySelector('%s .automations .field-error:not([hidden])').closest('[data-field]').dataset.field`, doing)); where != "events.on_turn_complete[0].config.step_id" {
		t.Errorf("the refusal of a move_to_step without a step is shown at %q, want its step control", where)
	}
	if after := e.fingerprint(); after != before {
		t.Fatalf("refused saves changed the database:\nbefore %s\nafter %s", before, after)
	}
	b.choose(doing+` [name="events.on_turn_complete[0].config.step_id"]`, stepID(e, wf, "Done"))
	b.submit(doing + " form")
	b.until("Doing's two automations", fmt.Sprintf(`[...document.querySelectorAll('%s .actions .badge')].some((x) => x.textContent === '2 automations')`, doing))

	reorderAndDelete(b, e, wf, sec, add)
	checkExport(e, wf)
}

// reorderAndDelete moves Done up with the keyboard and Doing back above
// it by dragging, then deletes a scratch step once the confirmation is
// accepted (and not when it is declined).
func reorderAndDelete(b *tab, e *env, wf, sec, add string) {
	t := b.t
	done := fmt.Sprintf(`%s .step-handle[data-step=%q]`, sec, stepID(e, wf, "Done"))
	b.js(fmt.Sprintf(`document.querySelector(%q).focus()`, done), nil)
	n := b.renders()
	b.do(chromedp.KeyEvent(kb.ArrowUp))
	b.redrawn(n)
	editorSteps(b, wf, "Todo", "Done", "Doing")
	if got := stepOrder(e, wf); !slices.Equal(got, []string{"Todo", "Done", "Doing"}) {
		t.Fatalf("after ArrowUp on Done the steps are %v", got)
	}
	b.until("the focus back on Done's handle", fmt.Sprintf(`document.activeElement === document.querySelector(%q)`, done))
	n = b.renders()
	b.drag(fmt.Sprintf(`%s .step-handle[data-step=%q]`, sec, stepID(e, wf, "Doing")), done)
	b.redrawn(n)
	editorSteps(b, wf, "Todo", "Doing", "Done")
	if got := stepOrder(e, wf); !slices.Equal(got, []string{"Todo", "Doing", "Done"}) {
		t.Fatalf("after dragging Doing above Done the steps are %v", got)
	}

	b.set(add+" [name=name]", "Scratch")
	b.submit(add + " form")
	editorSteps(b, wf, "Todo", "Doing", "Done", "Scratch")
	scratch := fmt.Sprintf(`%s .step-row[data-step=%q] .delete-step`, sec, stepID(e, wf, "Scratch"))
	b.js(`window.confirm = (m) => { window.asked = m; return false; }`, nil)
	b.click(scratch)
	if asked := b.str(`window.asked || ''`); !strings.Contains(asked, "Delete the step “Scratch”?") {
		t.Errorf("the confirmation asked %q", asked)
	}
	if got := stepOrder(e, wf); len(got) != 4 {
		t.Fatalf("a declined delete left %v", got)
	}
	b.js(`window.confirm = () => true`, nil)
	n = b.renders()
	b.click(scratch)
	b.redrawn(n)
	editorSteps(b, wf, "Todo", "Doing", "Done")
}

// checkExport compares workflow.export's document with what was built.
func checkExport(e *env, wf string) {
	t := e.t
	var doc action.WorkflowDocument
	e.dispatch(kanban.ActionWorkflowExport, action.WorkflowRefIn{WorkflowID: wf}, &doc)
	raw, _ := json.Marshal(doc.Workflows[0].Steps)
	want := `[{"name":"Todo","position":0,"color":"#112233","events":{},"is_start_step":true,"show_in_command_panel":false,"allow_manual_move":true,"auto_advance_requires_signal":false,"cancel_triggers_turn_complete":false},
	{"name":"Doing","position":1,"color":"","events":{"on_enter":[{"type":"start_agent","config":{"prompt":"Work on the task."}}],"on_turn_complete":[{"type":"move_to_step","config":{"step_position":2}}]},"is_start_step":false,"show_in_command_panel":false,"allow_manual_move":true,"auto_advance_requires_signal":false,"cancel_triggers_turn_complete":false,"wip_limit":2,"pull_from_step_position":0},
	{"name":"Done","position":2,"color":"","events":{"on_enter":[{"type":"set_state","config":{"state":"COMPLETED"}}]},"is_start_step":false,"show_in_command_panel":false,"allow_manual_move":true,"auto_advance_requires_signal":false,"cancel_triggers_turn_complete":false}]`
	var got, exp any
	if json.Unmarshal(raw, &got) != nil || json.Unmarshal([]byte(want), &exp) != nil || !reflect.DeepEqual(got, exp) {
		t.Fatalf("workflow.export's steps:\n%s\nwant\n%s", raw, want)
	}
}

// stepID is the id of workflow wf's step named name.
func stepID(e *env, wf, name string) string {
	return dbStr(e, `SELECT id FROM workflow_steps WHERE workflow_id = ? AND name = ?`, wf, name)
}

// checkEditorContract checks the add-step form against the contracts: its
// fields are workflow.step.update's settings, its events the step event
// kinds, its automation types the engine's.
func checkEditorContract(b *tab, e *env, add string) {
	t := b.t
	c, ok := e.b.reg.Lookup(kanban.ActionWorkflowStepUpdate)
	if !ok {
		t.Fatal("no workflow.step.update contract")
	}
	raw, _ := json.Marshal(c.Schema()["properties"])
	var props map[string]any
	if err := json.Unmarshal(raw, &props); err != nil {
		t.Fatal(err)
	}
	delete(props, "step_id")                 // the step edited
	delete(props, "pull_from_step_position") // pull_from_step_id for documents without ids
	var fields []string
	b.js(fmt.Sprintf(`[...document.querySelectorAll('%s form > .field, %s form > .automations')].map((f) => f.dataset.field)`, add, add), &fields)
	if want := slices.Sorted(maps.Keys(props)); !slices.Equal(slices.Sorted(slices.Values(fields)), want) {
		t.Errorf("the step form edits %v, want the contract's settings %v", slices.Sorted(slices.Values(fields)), want)
	}
	var events []string
	b.js(fmt.Sprintf(`[...document.querySelectorAll('%s fieldset.event')].map((f) => f.dataset.event)`, add), &events)
	if !slices.Equal(events, kanban.StepEventKinds) {
		t.Errorf("the automation events are %v, want %v", events, kanban.StepEventKinds)
	}
	b.click(add + ` fieldset[data-event=on_exit] .add-automation`)
	var types []string
	b.js(fmt.Sprintf(`[...document.querySelectorAll('%s [name="events.on_exit[0].type"] option')].map((o) => o.value)`, add), &types)
	if !slices.Equal(types, kanban.AutomationTypeNames()) {
		t.Errorf("the automation types offered are %v, want %v", types, kanban.AutomationTypeNames())
	}
	b.click(add + ` fieldset[data-event=on_exit] .remove-automation`)
}
