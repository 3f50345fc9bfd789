// Settings › Workflows: create workflows (from a template, blank or from a
// file), export them as files, rename and delete them, and edit their
// steps: settings, automations and order (config_steps.js).
import { api } from './api.js';
import { h, toast } from './dom.js';
import { ctx } from './context.js';
import { form } from './form.js';
import { reloadOn } from './config.js';
import { gallery } from './gallery.js';
import { exportButton, importForm } from './config_workflow_file.js';
import { focusMoved, stepList } from './config_steps.js';
import {
  AGENT_PROFILE_LIST, EXECUTOR_PROFILE_LIST, WORKFLOW_CREATE, WORKFLOW_CREATED, WORKFLOW_DELETE, WORKFLOW_DELETED,
  WORKFLOW_LIST, WORKFLOW_STEPS_REORDERED, WORKFLOW_STEP_CREATED, WORKFLOW_STEP_DELETED, WORKFLOW_STEP_LIST,
  WORKFLOW_STEP_UPDATED, WORKFLOW_UPDATE, WORKFLOW_UPDATED
} from './contract.js';

// renders counts the page's drawings (shown as #config's data-render), so
// that a test can wait for the drawing that follows a change.
let renders = 0;

export async function renderWorkflows(el) {
  const [workflows, agents, executors] = await Promise.all([api.listAll(WORKFLOW_LIST, { workspace_id: ctx.workspaceId }),
    api.listAll(AGENT_PROFILE_LIST, { workspace_id: ctx.workspaceId }), api.listAll(EXECUTOR_PROFILE_LIST, { workspace_id: ctx.workspaceId })]);
  const steps = await Promise.all(workflows.map((w) => api.listAll(WORKFLOW_STEP_LIST, { workflow_id: w.id })));
  const blank = form({
    fields: [{ name: 'name', label: 'Name' }, { name: 'description', label: 'Description', type: 'textarea', rows: 2 }],
    submitLabel: 'Create workflow',
    submit: (v) => api.request(WORKFLOW_CREATE, { ...v, workspace_id: ctx.workspaceId }),
    onDone: () => toast('Workflow created'),
  });
  blank.id = 'workflow-blank';
  el.append(h('h2', {}, 'New workflow'), await gallery(new Set(workflows.map((w) => w.name))), h('h3', {}, 'Blank'), blank,
    h('h3', {}, 'From a file'), importForm());
  workflows.forEach((w, i) => el.append(workflowSection(w, steps[i].sort((a, b) => a.position - b.position), { agents, executors })));
  focusMoved(el);
  renders += 1;
  el.dataset.render = String(renders);
  return reloadOn(api, [WORKFLOW_CREATED, WORKFLOW_UPDATED, WORKFLOW_DELETED, WORKFLOW_STEP_CREATED, WORKFLOW_STEP_UPDATED, WORKFLOW_STEP_DELETED, WORKFLOW_STEPS_REORDERED]);
}

function workflowSection(w, steps, opts) {
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
    stepList(w, steps, opts));
}
