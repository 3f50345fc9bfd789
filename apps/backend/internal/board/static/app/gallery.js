// The template gallery of Settings › Workflows: the built-in workflow
// templates (workflow.template.list) with what each does and its steps, and
// a form per template that creates a workflow from it in this workspace
// (workflow.import with its template_id and a name).
import { api } from './api.js';
import { h, toast } from './dom.js';
import { ctx } from './context.js';
import { form } from './form.js';
import { WORKFLOW_IMPORT, WORKFLOW_TEMPLATE_LIST } from './contract.js';

// gallery returns the gallery section; taken are the names of the
// workspace's workflows, so a template's default name does not collide.
export async function gallery(taken) {
  const templates = await api.listAll(WORKFLOW_TEMPLATE_LIST);
  return h('section', { class: 'gallery', id: 'template-gallery', 'aria-label': 'Workflow templates' },
    h('h3', {}, 'From a template'),
    h('p', { class: 'hint' }, 'Each template is a ready workflow: its steps, their prompts and the automations that move tasks along. Change anything afterwards.'),
    h('ul', { class: 'templates' }, templates.map((t) => templateCard(t, taken))));
}

function templateCard(t, taken) {
  const steps = t.document.workflows[0].steps;
  return h('li', { class: 'template', dataset: { template: t.id } },
    h('h4', {}, t.name),
    h('p', { class: 'desc' }, t.description),
    h('ol', { class: 'template-steps', 'aria-label': `Steps of ${t.name}` }, steps.map((st) => h('li', {}, st.name))),
    form({
      fields: [{ name: 'name', label: 'Workflow name', value: freeName(t.name, taken) }],
      submitLabel: `Create from ${t.name}`,
      submit: (v) => api.request(WORKFLOW_IMPORT, { template_id: t.id, workspace_id: ctx.workspaceId, ...v }),
      onDone: (res) => {
        if (res.created.length) toast(`Workflow “${res.created[0]}” created from ${t.name}`);
        else toast(`A workflow named “${res.skipped[0]}” exists already: choose another name`, 'error');
      },
    }));
}

// freeName is the template's name, or with a number when the workspace
// has a workflow of that name.
function freeName(name, taken) {
  if (!taken.has(name)) return name;
  for (let i = 2; ; i += 1) if (!taken.has(`${name} ${i}`)) return `${name} ${i}`;
}
