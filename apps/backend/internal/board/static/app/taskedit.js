// A task page's own controls: edit its title, prompt and profiles,
// archive or unarchive it, delete it after a confirmation that names it
// and says what becomes of its subtasks. Every change goes through its
// action, so a refusal is the server's, shown in the form, and changes
// nothing.
import { api } from './api.js';
import { h, fill, toast } from './dom.js';
import { form } from './form.js';
import { MAX_TITLE_LEN, TASK_ARCHIVE, TASK_DELETE, TASK_LIST, TASK_UNARCHIVE, TASK_UPDATE } from './contract.js';

// taskActions returns the task's Edit, Archive/Unarchive and Delete
// buttons; page gives the task (page.task), its profile options
// (page.profiles and page.executors, '' first) and is told of changes.
export function taskActions(page) {
  const t = page.task;
  const archive = t.archived_at
    ? h('button', { type: 'button', id: 'unarchive-task', onclick: () => setArchived(page, false) }, 'Unarchive')
    : h('button', { type: 'button', id: 'archive-task', title: 'Hide it from the board; its agent is stopped', onclick: () => setArchived(page, true) }, 'Archive');
  return h('div', { class: 'actions', id: 'task-actions' },
    h('button', { type: 'button', id: 'edit-task', onclick: () => openEdit(page) }, 'Edit'),
    archive,
    h('button', { type: 'button', class: 'danger', id: 'delete-task', onclick: () => openDelete(page) }, 'Delete…'));
}

async function setArchived(page, on) {
  try {
    const t = await api.request(on ? TASK_ARCHIVE : TASK_UNARCHIVE, { task_id: page.task.id });
    page.retask(t);
    toast(on ? `Archived “${t.title}”; its agent was stopped` : `“${t.title}” is back on the board`);
  } catch (e) { toast(`Could not ${on ? 'archive' : 'unarchive'} the task: ${e.message}`, 'error'); }
}

function modal(id, title, ...body) {
  const dialog = h('dialog', { 'aria-labelledby': `${id}-title`, id });
  dialog.append(h('h2', { id: `${id}-title` }, title), ...body);
  dialog.addEventListener('close', () => dialog.remove());
  document.body.append(dialog);
  dialog.showModal();
  return dialog;
}

// openEdit edits the title, prompt and the profiles kept with the task
// (the defaults clear them).
function openEdit(page) {
  const t = page.task;
  const label = (o, none) => (o.value === '' ? none : o.label);
  let dialog;
  const f = form({
    fields: [
      { name: 'title', label: 'Title', value: t.title, help: `Up to ${MAX_TITLE_LEN} characters.` },
      { name: 'description', label: 'Prompt', type: 'textarea', rows: 6, value: t.description, help: 'What its agents are asked to do (Markdown).' },
      { name: 'agent_profile_id', label: 'Agent profile', type: 'select', value: t.agent_profile_id || '',
        options: page.profiles.map((o) => ({ value: o.value, label: label(o, 'None: the step’s or workflow’s, else the default') })),
        help: 'Kept for every later start of an agent on it; a step with its own profile still uses that one.' },
      { name: 'executor_profile_id', label: 'Executor profile', type: 'select', value: t.executor_profile_id || '',
        options: page.executors.map((o) => ({ value: o.value, label: label(o, 'None: the default executor') })) },
    ],
    submitLabel: 'Save',
    extra: [h('button', { type: 'button', onclick: () => dialog.close() }, 'Cancel')],
    submit: (v) => api.request(TASK_UPDATE, { task_id: t.id, title: v.title, description: v.description,
      agent_profile_id: v.agent_profile_id || '', executor_profile_id: v.executor_profile_id || '' }),
    onDone: (res) => { dialog.close(); page.retask(res); toast('Task saved'); },
  });
  dialog = modal('edit-task-dialog', 'Edit task', f);
  f.querySelector('[name=title]').focus();
}

// openDelete asks before deleting, naming the task and its subtasks,
// which are kept and become top-level tasks.
async function openDelete(page) {
  const t = page.task;
  let subtasks = [];
  try {
    subtasks = await api.listAll(TASK_LIST, { workspace_id: t.workspace_id, parent_id: t.id, include_archived: true });
  } catch (e) { toast(e.message, 'error'); return; }
  const error = h('p', { class: 'form-error', role: 'alert', hidden: true });
  let dialog;
  const confirm = h('button', { type: 'button', class: 'danger', id: 'confirm-delete', onclick: async () => {
    confirm.disabled = true;
    try {
      await api.request(TASK_DELETE, { task_id: t.id });
      dialog.close();
      toast(`Deleted “${t.title}”`);
      location.hash = `#/?ws=${encodeURIComponent(t.workspace_id)}&wf=${encodeURIComponent(t.workflow_id)}`;
    } catch (e) {
      fill(error, `Could not delete the task: ${e.message}`);
      error.hidden = false;
      confirm.disabled = false;
    }
  } }, 'Delete permanently');
  const cancel = h('button', { type: 'button', onclick: () => dialog.close() }, 'Cancel');
  const kids = subtasks.length
    ? [h('p', { id: 'delete-subtasks' }, subtasks.length === 1 ? 'Its subtask is kept and becomes a top-level task:'
      : `Its ${subtasks.length} subtasks are kept and become top-level tasks:`),
      h('ul', {}, subtasks.map((s) => h('li', {}, s.title)))]
    : [h('p', { id: 'delete-subtasks' }, 'It has no subtasks.')];
  dialog = modal('delete-task-dialog', `Delete “${t.title}”?`,
    h('p', {}, 'Its agents are stopped, and its sessions, conversation, plan, documents and artifacts are deleted with it. This cannot be undone; ',
      h('strong', {}, 'Archive'), ' hides a task and keeps its history.'),
    ...kids, error, h('div', { class: 'actions' }, confirm, cancel));
  cancel.focus();
}
