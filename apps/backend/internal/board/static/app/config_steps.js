// The steps of a workflow in Settings › Workflows: one row per step in
// board order, reordered by dragging its handle or with the arrow keys on
// it; each step's settings (the workflow.step.update fields) and its
// automations as a form; add and delete (after a confirmation).
import { api } from './api.js';
import { h, toast } from './dom.js';
import { form } from './form.js';
import { automationEditor } from './config_automations.js';
import { WORKFLOW_STEP_CREATE, WORKFLOW_STEP_DELETE, WORKFLOW_STEP_REORDER, WORKFLOW_STEP_UPDATE } from './contract.js';

// refocus names the step whose handle takes the focus once the page is
// drawn again after a keyboard reorder.
let refocus = '';

// focusMoved puts the focus back on the handle of the step just moved
// with the keyboard (the page was drawn again).
export function focusMoved(root) {
  if (!refocus) return;
  const handle = root.querySelector(`.step-handle[data-step="${CSS.escape(refocus)}"]`);
  refocus = '';
  if (handle) handle.focus();
}

// stepFields are a step's settings; steps are the workflow's (for the
// step to pull tasks from).
function stepFields(st, steps) {
  const others = steps.filter((s) => s.id !== st.id);
  return [
    { name: 'name', label: 'Name', value: st.name },
    { name: 'color', label: 'Colour', value: st.color, help: 'A CSS colour, e.g. #2f5bd3.' },
    { name: 'prompt', label: 'Step prompt', type: 'textarea', rows: 2, value: st.prompt, help: 'Given to agents working on tasks in this step.' },
    { name: 'is_start_step', label: 'Start step (new tasks land here)', type: 'checkbox', value: st.is_start_step },
    { name: 'allow_manual_move', label: 'Tasks may be moved here by hand', type: 'checkbox', value: st.allow_manual_move },
    { name: 'auto_advance', label: 'Move a task on when its agent completes the step', type: 'checkbox', value: st.auto_advance },
    { name: 'auto_advance_requires_signal', label: '…only when the agent said so (step_complete) in that turn', type: 'checkbox', value: st.auto_advance_requires_signal },
    { name: 'cancel_triggers_turn_complete', label: 'A cancelled turn counts as ended (runs “when an agent turn ends”)', type: 'checkbox', value: st.cancel_triggers_turn_complete },
    { name: 'show_in_command_panel', label: 'Offer as a quick action in the command panel', type: 'checkbox', value: st.show_in_command_panel },
    { name: 'wip_limit', label: 'WIP limit', type: 'number', value: st.wip_limit, help: 'Most tasks on the step at once; 0: no limit.' },
    { name: 'pull_from_step_id', label: 'Pull tasks from', type: 'select', value: st.pull_from_step_id || '',
      options: [{ value: '', label: 'No step (tasks are moved here)' }, ...others.map((s) => ({ value: s.id, label: s.name }))],
      help: 'When this step has room, it takes the longest-waiting task of that step.' },
    { name: 'auto_archive_after_hours', label: 'Archive tasks after (hours here)', type: 'number', value: st.auto_archive_after_hours, help: '0: never.' },
    { name: 'heartbeat_minutes', label: 'Heartbeat every (minutes here)', type: 'number', value: st.heartbeat_minutes, help: 'Runs the “on a heartbeat” automations for each task on the step, that often; 0: never.' },
    { name: 'approval', label: 'Participants and quorum (Office)', type: 'json', rows: 4, value: st.approval || {},
      help: 'Reviewers or approvers whose decisions move the task, e.g. {"participants":[{"role":"reviewer","operator":true}],"quorum":"all"}; {} keeps none.' },
    { name: 'clear_approval', label: 'Remove the participants and quorum', type: 'checkbox', value: false },
  ];
}

// stepForm is the form of a step's settings and automations; send gets
// the payload's values.
function stepForm(st, steps, opts, { submitLabel, send, onDone, extra = [] }) {
  const editor = automationEditor(st.events, { ...opts, steps });
  return form({
    fields: stepFields(st, steps),
    body: [h('h4', {}, 'Automations'), editor.el],
    submitLabel,
    extra,
    submit: (raw) => {
      const v = Object.fromEntries(Object.entries(raw).filter(([k]) => !k.includes('.')));
      v.events = editor.value();
      if (v.approval && Object.keys(v.approval).length === 0) delete v.approval;
      if (!v.clear_approval) delete v.clear_approval;
      return send(v);
    },
    onDone,
  });
}

// stepList is the workflow's steps (in board order) and the form to add one.
export function stepList(w, steps, opts) {
  const order = steps.map((s) => s.id);
  const commit = async (ids) => {
    try { await api.request(WORKFLOW_STEP_REORDER, { workflow_id: w.id, step_ids: ids }); toast('Steps reordered'); } catch (e) { toast(e.message, 'error'); }
  };
  const list = h('div', { class: 'step-list', 'aria-label': `Steps of ${w.name}` }, steps.map((st, i) => stepRow(w, steps, st, i, opts, commit)));
  enableStepDrag(list, order, commit);
  const add = h('details', { class: 'edit add-step' }, h('summary', {}, 'Add a step'), stepForm({ allow_manual_move: true, events: {} }, steps, opts, {
    submitLabel: 'Add step',
    send: (v) => {
      const p = { workflow_id: w.id, ...v };
      if (!p.pull_from_step_id) delete p.pull_from_step_id;
      delete p.clear_approval; // a new step has none to remove
      return api.request(WORKFLOW_STEP_CREATE, p);
    },
    onDone: () => toast('Step added'),
  }));
  return [list, add];
}

function moved(order, from, to) {
  const ids = [...order];
  ids.splice(from, 1);
  ids.splice(to, 0, order[from]);
  return ids;
}

function stepRow(w, steps, st, i, opts, commit) {
  const order = steps.map((s) => s.id);
  const reorder = (to) => { refocus = st.id; commit(moved(order, i, to)); };
  const del = h('button', { type: 'button', class: 'danger delete-step', onclick: async () => {
    if (!window.confirm(`Delete the step “${st.name}”? Its automations go with it.`)) return;
    try { await api.request(WORKFLOW_STEP_DELETE, { step_id: st.id }); toast('Step deleted'); } catch (e) { toast(e.message, 'error'); }
  } }, 'Delete step');
  const handle = h('button', { type: 'button', class: 'step-handle', dataset: { step: st.id },
    'aria-label': `Reorder ${st.name}: drag, or press the up and down arrow keys`,
    onkeydown: (ev) => {
      if (ev.key === 'ArrowUp' && i > 0) { ev.preventDefault(); reorder(i - 1); }
      if (ev.key === 'ArrowDown' && i < steps.length - 1) { ev.preventDefault(); reorder(i + 1); }
    } }, '⠿');
  const swatch = h('span', { class: 'swatch', 'aria-hidden': 'true' });
  swatch.style.backgroundColor = st.color || 'transparent';
  const pulls = steps.find((s) => s.id === st.pull_from_step_id);
  const count = Object.values(st.events || {}).reduce((n, l) => n + l.length, 0);
  return h('div', { class: 'step-row', dataset: { step: st.id } },
    h('div', { class: 'actions' }, handle, swatch, h('strong', {}, `${i + 1}. ${st.name}`),
      st.is_start_step ? h('span', { class: 'badge' }, 'Start step') : null,
      st.wip_limit ? h('span', { class: 'badge' }, `WIP ${st.wip_limit}`) : null,
      pulls ? h('span', { class: 'badge' }, `Pulls from ${pulls.name}`) : null,
      st.auto_advance ? h('span', { class: 'badge' }, 'Auto-advance') : null,
      count ? h('span', { class: 'badge' }, `${count} automation${count > 1 ? 's' : ''}`) : null,
      h('button', { type: 'button', disabled: i === 0, 'aria-label': `Move ${st.name} up`, onclick: () => reorder(i - 1) }, '↑'),
      h('button', { type: 'button', disabled: i === steps.length - 1, 'aria-label': `Move ${st.name} down`, onclick: () => reorder(i + 1) }, '↓')),
    h('details', { class: 'edit' }, h('summary', {}, `Edit ${st.name}`), stepForm(st, steps, opts, {
      send: (v) => api.request(WORKFLOW_STEP_UPDATE, { step_id: st.id, pull_from_step_id: '', ...v }),
      onDone: () => toast('Step saved'),
      extra: [del],
    })));
}

// enableStepDrag lets a step row be dragged by its handle (mouse, pen or
// touch) to another place in the list; commit gets the new order.
function enableStepDrag(list, order, commit) {
  let st = null;
  const rows = () => [...list.querySelectorAll(':scope > .step-row')];
  list.addEventListener('pointerdown', (ev) => {
    const handle = ev.target.closest('.step-handle');
    if (!handle || ev.button !== 0) return;
    ev.preventDefault();
    st = { row: handle.closest('.step-row'), id: ev.pointerId };
    st.row.classList.add('dragging');
    try { handle.setPointerCapture(ev.pointerId); } catch { /* pointer already released */ }
  });
  list.addEventListener('pointermove', (ev) => {
    if (!st || ev.pointerId !== st.id) return;
    const over = rows().find((r) => { const b = r.getBoundingClientRect(); return r !== st.row && ev.clientY >= b.top && ev.clientY <= b.bottom; });
    if (!over) return;
    const b = over.getBoundingClientRect();
    if (ev.clientY < b.top + b.height / 2) over.before(st.row);
    else over.after(st.row);
  });
  const end = (ev, cancel) => {
    if (!st || ev.pointerId !== st.id) return;
    const { row } = st;
    st = null;
    row.classList.remove('dragging');
    const now = rows().map((r) => r.dataset.step);
    if (cancel) { order.forEach((id) => list.append(rows().find((r) => r.dataset.step === id))); return; }
    if (now.join() !== order.join()) commit(now);
  };
  list.addEventListener('pointerup', (ev) => end(ev, false));
  list.addEventListener('pointercancel', (ev) => end(ev, true));
}
