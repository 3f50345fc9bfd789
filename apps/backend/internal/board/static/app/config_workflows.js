// Settings › Workflows: create workflows (from a template, blank or from a
// file), export them as files, rename
// and delete them; add, edit, reorder and delete their steps (with the
// steps' automations).
import { api } from './api.js';
import { h, toast } from './dom.js';
import { ctx } from './context.js';
import { form } from './form.js';
import { reloadOn } from './config.js';
import { gallery } from './gallery.js';
import { exportButton, importForm } from './config_workflow_file.js';
import {
  WORKFLOW_CREATE, WORKFLOW_CREATED, WORKFLOW_DELETE, WORKFLOW_DELETED, WORKFLOW_LIST, WORKFLOW_STEPS_REORDERED,
  WORKFLOW_STEP_CREATE, WORKFLOW_STEP_CREATED, WORKFLOW_STEP_DELETE, WORKFLOW_STEP_DELETED, WORKFLOW_STEP_LIST,
  WORKFLOW_STEP_REORDER, WORKFLOW_STEP_UPDATE, WORKFLOW_STEP_UPDATED, WORKFLOW_UPDATE, WORKFLOW_UPDATED
} from './contract.js';

export async function renderWorkflows(el) {
  const workflows = await api.listAll(WORKFLOW_LIST, { workspace_id: ctx.workspaceId });
  const steps = await Promise.all(workflows.map((w) => api.listAll(WORKFLOW_STEP_LIST, { workflow_id: w.id })));
  el.append(h('h2', {}, 'New workflow'), await gallery(new Set(workflows.map((w) => w.name))), h('h3', {}, 'Blank'), form({
    fields: [{ name: 'name', label: 'Name' }, { name: 'description', label: 'Description', type: 'textarea', rows: 2 }],
    submitLabel: 'Create workflow',
    submit: (v) => api.request(WORKFLOW_CREATE, { ...v, workspace_id: ctx.workspaceId }),
    onDone: () => toast('Workflow created'),
  }), h('h3', {}, 'From a file'), importForm());
  workflows.forEach((w, i) => el.append(workflowSection(w, steps[i].sort((a, b) => a.position - b.position))));
  return reloadOn(api, [WORKFLOW_CREATED, WORKFLOW_UPDATED, WORKFLOW_DELETED, WORKFLOW_STEP_CREATED, WORKFLOW_STEP_UPDATED, WORKFLOW_STEP_DELETED, WORKFLOW_STEPS_REORDERED]);
}

function workflowSection(w, steps) {
  const del = h('button', { type: 'button', class: 'danger', onclick: async () => {
    if (!window.confirm(`Delete the workflow “${w.name}”? Its tasks must be moved or deleted first.`)) return;
    try { await api.request(WORKFLOW_DELETE, { workflow_id: w.id }); toast('Workflow deleted'); } catch (e) { toast(e.message, 'error'); }
  } }, 'Delete workflow');
  return h('section', { class: 'panel', 'aria-label': `Workflow ${w.name}`, dataset: { workflow: w.id } },
    h('h2', {}, w.name),
    h('div', { class: 'actions' }, exportButton(w)),
    h('details', { class: 'edit' }, h('summary', {}, 'Rename or describe'), form({
      fields: [{ name: 'name', label: 'Name', value: w.name }, { name: 'description', label: 'Description', type: 'textarea', rows: 2, value: w.description }],
      submit: (v) => api.request(WORKFLOW_UPDATE, { workflow_id: w.id, ...v }),
      onDone: () => toast('Workflow saved'),
      extra: [del],
    })),
    h('h3', {}, 'Steps'),
    steps.map((st, i) => stepRow(w, steps, st, i)),
    h('details', { class: 'edit' }, h('summary', {}, 'Add a step'), form({
      fields: stepFields({ allow_manual_move: true, events: {} }),
      submitLabel: 'Add step',
      submit: (v) => api.request(WORKFLOW_STEP_CREATE, { workflow_id: w.id, ...v }),
      onDone: () => toast('Step added'),
    })));
}

function stepFields(st) {
  return [
    { name: 'name', label: 'Name', value: st.name },
    { name: 'color', label: 'Colour', value: st.color, help: 'A CSS colour, e.g. #2f5bd3.' },
    { name: 'prompt', label: 'Step prompt', type: 'textarea', rows: 2, value: st.prompt, help: 'Given to agents working on tasks in this step.' },
    { name: 'wip_limit', label: 'WIP limit', type: 'number', value: st.wip_limit, help: '0: no limit.' },
    { name: 'auto_archive_after_hours', label: 'Archive finished tasks after (hours)', type: 'number', value: st.auto_archive_after_hours, help: '0: never.' },
    { name: 'is_start_step', label: 'Start step (new tasks land here)', type: 'checkbox', value: st.is_start_step },
    { name: 'allow_manual_move', label: 'Tasks may be moved here by hand', type: 'checkbox', value: st.allow_manual_move },
    { name: 'auto_advance', label: 'Advance automatically when the agent completes the step', type: 'checkbox', value: st.auto_advance },
    { name: 'events', label: 'Automations (JSON)', type: 'json', rows: 4, value: st.events || {}, help: 'Actions per event (on_enter, on_exit, on_turn_start, on_turn_complete), as in the workflow document format.' },
  ];
}

function stepRow(w, steps, st, i) {
  const order = steps.map((s) => s.id);
  const reorder = async (to) => {
    const ids = [...order];
    ids.splice(i, 1);
    ids.splice(to, 0, st.id);
    try { await api.request(WORKFLOW_STEP_REORDER, { workflow_id: w.id, step_ids: ids }); toast('Steps reordered'); } catch (e) { toast(e.message, 'error'); }
  };
  const del = h('button', { type: 'button', class: 'danger', onclick: async () => {
    if (!window.confirm(`Delete the step “${st.name}”?`)) return;
    try { await api.request(WORKFLOW_STEP_DELETE, { step_id: st.id }); toast('Step deleted'); } catch (e) { toast(e.message, 'error'); }
  } }, 'Delete step');
  return h('div', { class: 'step-row', dataset: { step: st.id } },
    h('div', { class: 'actions' }, h('strong', {}, `${i + 1}. ${st.name}`),
      st.wip_limit ? h('span', { class: 'badge' }, `WIP ${st.wip_limit}`) : null,
      st.is_start_step ? h('span', { class: 'badge' }, 'Start step') : null,
      h('button', { type: 'button', disabled: i === 0, 'aria-label': `Move ${st.name} up`, onclick: () => reorder(i - 1) }, '↑'),
      h('button', { type: 'button', disabled: i === steps.length - 1, 'aria-label': `Move ${st.name} down`, onclick: () => reorder(i + 1) }, '↓')),
    h('details', { class: 'edit' }, h('summary', {}, `Edit ${st.name}`), form({
      fields: stepFields(st),
      submit: (v) => api.request(WORKFLOW_STEP_UPDATE, { step_id: st.id, ...v }),
      onDone: () => toast('Step saved'),
      extra: [del],
    })));
}
