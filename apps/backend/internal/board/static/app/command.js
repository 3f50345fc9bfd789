// The command panel (Ctrl+K or ⌘K): the steps marked "show in command
// panel" as quick actions (move the current task there, create a task in
// it), then places and tasks to go to, by title. Typing filters the list,
// ↑/↓ choose, Enter runs, Escape closes; focus returns where it was.
import { api } from './api.js';
import { h, fill, toast } from './dom.js';
import { ctx } from './context.js';
import { openCreateTask } from './taskform.js';
import { TASK_GET, TASK_LIST, TASK_MOVE, WORKFLOW_LIST, WORKFLOW_STEP_LIST } from './contract.js';

// MAX_TASKS bounds how many tasks the panel lists for one query.
const MAX_TASKS = 30;

// watchCommandPanel opens the panel on Ctrl+K / ⌘K anywhere on the board.
export function watchCommandPanel() {
  document.addEventListener('keydown', (ev) => {
    if ((ev.ctrlKey || ev.metaKey) && !ev.altKey && ev.key.toLowerCase() === 'k') {
      ev.preventDefault();
      if (!document.getElementById('command-panel')) openCommandPanel().catch((e) => toast(e.message, 'error'));
    }
  });
}

// context reads what the panel acts on: the current task (the open
// task's page, or the board's focused card), its workflow (else the
// board's) and that workflow's steps.
async function context(focused) {
  const raw = location.hash.replace(/^#/, '') || '/';
  const [path, query] = raw.split('?');
  const parts = path.split('/').filter(Boolean);
  let task = null;
  let wfId = new URLSearchParams(query || '').get('wf') || '';
  if (parts[0] === 'task' && parts[1]) {
    task = await api.request(TASK_GET, { id: decodeURIComponent(parts[1]) });
    wfId = task.workflow_id;
  } else if (focused && focused.classList && focused.classList.contains('card') && focused.task) {
    task = focused.task;
  }
  const workflows = ctx.workspaceId ? await api.listAll(WORKFLOW_LIST, { workspace_id: ctx.workspaceId }) : [];
  const workflow = workflows.find((w) => w.id === wfId) || (parts.length === 0 && workflows[0]) || null;
  const steps = workflow ? (await api.listAll(WORKFLOW_STEP_LIST, { workflow_id: workflow.id })).sort((a, b) => a.position - b.position) : [];
  const tasks = ctx.workspaceId ? await api.listAll(TASK_LIST, { workspace_id: ctx.workspaceId }) : [];
  return { task, workflow, steps, tasks };
}

// items lists the panel's commands: {label, group, run}.
function items({ task, workflow, steps, tasks }) {
  const out = [];
  const quick = steps.filter((s) => s.show_in_command_panel);
  for (const st of quick) {
    if (task && st.id !== task.workflow_step_id) {
      out.push({ group: 'Quick actions', label: `Move “${task.title}” to ${st.name}`, run: async () => {
        await api.request(TASK_MOVE, { task_id: task.id, workflow_step_id: st.id });
        toast(`Moved “${task.title}” to ${st.name}`);
      } });
    }
  }
  for (const st of quick) {
    out.push({ group: 'Quick actions', label: `New task in ${st.name}`, run: async () => openCreateTask({ workflow, steps, stepId: st.id }) });
  }
  for (const [label, hash] of [['Go to the board', '#/'], ['Go to the approvals', '#/approvals'], ['Go to the inbox', '#/inbox'], ['Go to settings', '#/config/workflows']]) {
    out.push({ group: 'Go to', label, run: async () => { location.hash = hash; } });
  }
  const byTitle = tasks.filter((t) => !task || t.id !== task.id).map((t) => ({ group: 'Tasks', label: t.title, task: true,
    run: async () => { location.hash = `#/task/${encodeURIComponent(t.id)}`; } }));
  return out.concat(byTitle);
}

export async function openCommandPanel() {
  const before = document.activeElement;
  const input = h('input', { type: 'text', id: 'command-input', role: 'combobox', 'aria-expanded': 'true', 'aria-controls': 'command-list',
    'aria-autocomplete': 'list', autocomplete: 'off', placeholder: 'Type a command or a task title…', 'aria-label': 'Command' });
  const list = h('ul', { id: 'command-list', role: 'listbox', 'aria-label': 'Commands' });
  const dialog = h('dialog', { id: 'command-panel', 'aria-label': 'Command panel', class: 'command-panel' }, input, list,
    h('p', { class: 'hint' }, '↑/↓ choose · Enter runs · Escape closes'));
  document.body.append(dialog);
  dialog.showModal();
  dialog.addEventListener('close', () => { dialog.remove(); if (before && before.isConnected) before.focus(); });
  input.focus();
  const all = items(await context(before));
  let shown = [];
  let active = 0;
  const draw = () => {
    const q = input.value.trim().toLowerCase();
    const match = all.filter((c) => !q || c.label.toLowerCase().includes(q));
    shown = match.filter((c) => !c.task).concat(match.filter((c) => c.task).slice(0, MAX_TASKS));
    active = Math.min(active, Math.max(shown.length - 1, 0));
    let group = '';
    fill(list, shown.length ? null : h('li', { class: 'muted', role: 'presentation' }, 'Nothing matches.'),
      shown.map((c, i) => {
        const head = c.group !== group ? h('li', { role: 'presentation', class: 'command-group' }, c.group) : null;
        group = c.group;
        return [head, h('li', { role: 'option', id: `command-${i}`, 'aria-selected': String(i === active), dataset: { index: i },
          onclick: () => run(i) }, c.label)];
      }));
    if (shown.length) {
      input.setAttribute('aria-activedescendant', `command-${active}`);
      document.getElementById(`command-${active}`).scrollIntoView({ block: 'nearest' });
    } else input.removeAttribute('aria-activedescendant');
  };
  const run = async (i) => {
    const c = shown[i];
    if (!c) return;
    try {
      dialog.close();
      await c.run();
    } catch (e) {
      toast(`${c.label}: ${e.message}`, 'error');
    }
  };
  input.addEventListener('input', () => { active = 0; draw(); });
  input.addEventListener('keydown', (ev) => {
    if (ev.key === 'ArrowDown' || ev.key === 'ArrowUp') {
      ev.preventDefault();
      if (shown.length) active = (active + (ev.key === 'ArrowDown' ? 1 : shown.length - 1)) % shown.length;
      draw();
    } else if (ev.key === 'Enter') { ev.preventDefault(); run(active); }
  });
  draw();
}
