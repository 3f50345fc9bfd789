// The create-task dialog: title, prompt, agent and executor profiles,
// repository and start agent, submitted through task.create so that the
// server's validation errors appear next to the fields they name.
import { api } from './api.js';
import { h, toast } from './dom.js';
import { ctx } from './context.js';
import { form } from './form.js';
import {
  AGENT_LIST, AGENT_PROFILE_LIST, EXECUTOR_LIST, EXECUTOR_PROFILE_LIST, MAX_TITLE_LEN, REPOSITORY_LIST, TASK_CREATE
} from './contract.js';

// profileOptions lists the agent profiles a task of the current workspace
// may use (the global ones and the workspace's own) as "Agent — profile".
export async function profileOptions() {
  const [agents, profiles] = await Promise.all([api.listAll(AGENT_LIST), api.listAll(AGENT_PROFILE_LIST, { workspace_id: ctx.workspaceId })]);
  const name = new Map(agents.map((a) => [a.id, a.display_name || a.name]));
  return [{ value: '', label: 'Default profile' },
    ...profiles.map((p) => ({ value: p.id, label: `${name.get(p.agent_id) || p.agent_id} — ${p.name}${p.is_default && p.name !== 'default' ? ' (default)' : ''}` }))];
}

// executorOptions lists the executor profiles a task of the current
// workspace may use.
export async function executorOptions() {
  const [executors, profiles] = await Promise.all([api.listAll(EXECUTOR_LIST), api.listAll(EXECUTOR_PROFILE_LIST, { workspace_id: ctx.workspaceId })]);
  const name = new Map(executors.map((e) => [e.id, e.name]));
  return [{ value: '', label: 'Default executor' },
    ...profiles.map((p) => ({ value: p.id, label: `${name.get(p.executor_id) || p.executor_id} — ${p.name}` }))];
}

// openCreateTask opens the dialog for a task of workflow, in the step
// stepId names (default: the start step).
export async function openCreateTask({ workflow, steps, stepId = '' }) {
  const [agents, executors, repos] = await Promise.all([profileOptions(), executorOptions(),
    api.listAll(REPOSITORY_LIST, { workspace_id: ctx.workspaceId })]);
  const dialog = h('dialog', { 'aria-labelledby': 'create-task-title', id: 'create-task' });
  const close = () => { dialog.close(); dialog.remove(); };
  const start = steps.find((s) => s.id === stepId) || steps.find((s) => s.is_start_step) || steps[0];
  const f = form({
    fields: [
      { name: 'title', label: 'Title', help: `Up to ${MAX_TITLE_LEN} characters.` },
      { name: 'prompt', label: 'Prompt', type: 'textarea', rows: 5, help: 'What the agent is asked to do (Markdown).' },
      { name: 'workflow_step_id', label: 'Step', type: 'select', value: start && start.id, options: steps.map((s) => ({ value: s.id, label: s.name })) },
      { name: 'agent_profile_id', label: 'Agent profile', type: 'select', options: agents },
      { name: 'executor_profile_id', label: 'Executor profile', type: 'select', options: executors },
      { name: 'repository_id', label: 'Repository', type: 'select', options: [{ value: '', label: 'None' }, ...repos.map((r) => ({ value: r.id, label: r.name }))] },
      { name: 'start_agent', label: 'Start an agent on it now', type: 'checkbox', value: true },
    ],
    submitLabel: 'Create task',
    extra: [h('button', { type: 'button', onclick: close }, 'Cancel')],
    submit: (v) => api.request(TASK_CREATE, { ...v, workspace_id: ctx.workspaceId, workflow_id: workflow.id }),
    onDone: (res) => {
      close();
      toast(res.deduplicated ? 'That task already exists' : `Created “${res.task.title}”`);
    },
  });
  dialog.append(h('h2', { id: 'create-task-title' }, 'New task'), f);
  dialog.addEventListener('cancel', () => setTimeout(() => dialog.remove(), 0));
  document.body.append(dialog);
  dialog.showModal();
  f.querySelector('[name=title]').focus();
}
