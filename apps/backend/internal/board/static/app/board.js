// The board: pick a workspace and workflow; columns are steps with task
// counts and WIP limits; cards move by drag, keyboard or the Move menu;
// every change from any client arrives live.
import { api } from './api.js';
import { h, fill, toast, older } from './dom.js';
import { ctx, useWorkspace } from './context.js';
import { cardFor, fillCard, openMoveMenu, closeMoveMenu, MOVE_HINT_ID } from './cards.js';
import { enableDrag } from './drag.js';
import { openCreateTask } from './taskform.js';
import { PendingByTask } from './waiting.js';
import { BoardFilter } from './boardfilter.js';
import { Family } from './subtasks.js';
import { UsageLine } from './usage.js';
import {
  SESSION_CREATED, SESSION_LIST, SESSION_UPDATED, TASK_CREATED, TASK_DELETED, TASK_LIST, TASK_MOVE, TASK_MOVED,
  TASK_PR_BADGES, TASK_PR_UPDATED, TASK_UPDATED, WORKFLOW_DELETED, WORKFLOW_LIST, WORKFLOW_STEPS_REORDERED, WORKFLOW_STEP_CREATED,
  WORKFLOW_STEP_DELETED, WORKFLOW_STEP_LIST, WORKFLOW_STEP_UPDATED, WORKFLOW_UPDATED, WORKSPACE_USAGE
} from './contract.js';

export async function renderBoard(main, params) {
  const wsId = params.get('ws') || ctx.workspaceId;
  await useWorkspace(wsId);
  const workflows = await api.listAll(WORKFLOW_LIST, { workspace_id: ctx.workspaceId });
  const wf = workflows.find((w) => w.id === params.get('wf')) || workflows[0];
  const board = new Board(main, workflows, wf, new BoardFilter(params));
  await board.load();
  return () => board.close();
}

class Board {
  constructor(main, workflows, wf, filter) {
    this.main = main;
    this.filter = filter;
    this.workflows = workflows;
    this.wf = wf;
    this.cards = new Map(); // task id → card element
    this.sessions = new Map(); // task id → newest session
    this.prs = new Map(); // task id → Map(pull request id → pull request)
    this.pending = new PendingByTask((taskId) => this.retask(taskId));
    this.off = [];
    // The board's total: what the workspace's agents reported they used.
    const ws = ctx.workspaceId;
    this.usage = new UsageLine({ id: 'board-usage', label: 'Agent usage in this workspace', action: WORKSPACE_USAGE,
      payload: { workspace_id: ws }, match: (s) => s.workspace_id === ws });
  }

  async load() {
    if (!this.wf) {
      fill(this.main, this.toolbar(), h('p', {}, 'This workspace has no workflow yet. ', h('a', { href: '#/config/workflows' }, 'Create one from a template in Settings.')));
      return;
    }
    // The cards' pull request badges come from one workspace listing; the
    // board is drawn without them, the reason shown, if it fails.
    const [steps, tasks, sessions, prs] = await Promise.all([
      api.listAll(WORKFLOW_STEP_LIST, { workflow_id: this.wf.id }),
      api.listAll(TASK_LIST, { workspace_id: ctx.workspaceId, workflow_id: this.wf.id, include_archived: this.filter.showArchived }),
      api.listAll(SESSION_LIST, { workspace_id: ctx.workspaceId }),
      api.listAll(TASK_PR_BADGES, { workspace_id: ctx.workspaceId }).catch((e) => { toast(`Pull requests: ${e.message}`, 'error'); return []; }),
      this.pending.load(),
      this.filter.options(),
      this.usage.load(),
    ]);
    this.steps = steps.sort((a, b) => a.position - b.position);
    this.filter.use(ctx.workspaceId, this.wf, this.steps);
    for (const s of sessions) if (!this.sessions.has(s.task_id)) this.sessions.set(s.task_id, s);
    for (const p of prs) this.notePR(p);
    this.render(tasks);
    this.listen();
    performance.mark('board-rendered');
  }

  toolbar() {
    const wsSel = h('select', { id: 'pick-workspace', onchange: (e) => { location.hash = `#/?ws=${encodeURIComponent(e.target.value)}`; } },
      ctx.workspaces.map((w) => h('option', { value: w.id, selected: w.id === ctx.workspaceId }, w.name)));
    const wfSel = h('select', { id: 'pick-workflow', onchange: (e) => { location.hash = `#/?ws=${encodeURIComponent(ctx.workspaceId)}&wf=${encodeURIComponent(e.target.value)}`; } },
      this.workflows.map((w) => h('option', { value: w.id, selected: this.wf && w.id === this.wf.id }, w.name)));
    return h('div', { class: 'toolbar' },
      h('div', { class: 'field' }, h('label', { for: 'pick-workspace' }, 'Workspace'), wsSel),
      h('div', { class: 'field' }, h('label', { for: 'pick-workflow' }, 'Workflow'), wfSel),
      this.wf && h('button', { type: 'button', class: 'primary', id: 'new-task', onclick: () => openCreateTask({ workflow: this.wf, steps: this.steps }) }, '+ New task'),
      this.usage.el);
  }

  render(tasks) {
    this.error = h('div', { class: 'form-error board-error', role: 'alert', hidden: true, id: 'board-error' });
    this.columns = new Map();
    const cols = h('div', { class: 'columns', id: 'columns' });
    for (const st of this.steps) {
      const list = h('ul', { class: 'cards', 'aria-label': `${st.name} tasks`, dataset: { step: st.id } });
      const wip = h('span', { class: 'wip' });
      const col = h('section', { class: 'column', 'aria-labelledby': `col-${st.id}`, dataset: { step: st.id } },
        h('header', {}, h('h2', { id: `col-${st.id}` }, st.color ? h('span', { class: 'swatch', 'aria-hidden': 'true', 'data-color': st.color }) : null, st.name), wip),
        list);
      this.columns.set(st.id, { step: st, list, wip, col });
      cols.append(col);
    }
    const byStep = [...tasks].filter((t) => this.filter.showArchived || !t.archived_at).sort((a, b) => a.position - b.position);
    for (const t of byStep) {
      const c = this.columns.get(t.workflow_step_id);
      if (!c) continue;
      const card = cardFor(t);
      this.refresh(card, t);
      this.cards.set(t.id, card);
      c.list.append(card);
    }
    this.family = new Family(this.cards, (id) => { const col = this.columns.get(id); return col ? col.step.name : ''; });
    this.family.drawAll();
    // A board with no task says how to get one, and that the mock agent
    // needs no model account.
    this.empty = h('p', { class: 'notice', id: 'empty-board', hidden: true },
      'No tasks on this board yet. Choose ', h('strong', {}, '+ New task'), ' to create one: with the ',
      h('strong', {}, 'Mock Agent — default'), ' profile and “Start an agent on it now” ticked, an agent works on it and its card ',
      'moves on by itself, with no model account needed. Agents and scripts create tasks with create_task_kandev.');
    this.countAll();
    const filters = this.filter.controls(() => this.filter.show([...this.cards.values()]));
    this.filter.show([...this.cards.values()]);
    fill(this.main, h('h1', { class: 'sr-label' }, `${this.wf.name} board`), this.toolbar(), filters, this.error, this.empty,
      h('p', { class: 'hint', id: MOVE_HINT_ID }, 'Drag a card, or focus it and press Shift+←/→ to move it to another step (Shift+↑/↓ within a step); Enter opens it. Ctrl+K (⌘K) opens the command panel.'),
      cols);
    for (const sw of cols.querySelectorAll('.swatch')) sw.style.background = sw.dataset.color;
    enableDrag(cols, (card, list, index, undo) => this.move(card, list.dataset.step, index, undo));
    cols.addEventListener('keydown', (ev) => this.key(ev));
    cols.addEventListener('click', (ev) => {
      const b = ev.target.closest('button[data-action=move]');
      if (!b) return;
      const card = b.closest('.card');
      openMoveMenu(b, this.steps, card.dataset.step, (stepId) => {
        const { list } = this.columns.get(stepId);
        const undo = this.detach(card);
        list.append(card);
        this.move(card, stepId, list.children.length - 1, undo);
      });
    });
  }

  refresh(card, task) {
    const queued = task.queued_for_step_id && this.columns.get(task.queued_for_step_id);
    fillCard(card, task, { session: this.sessions.get(task.id), questions: this.pending.count('questions', task.id),
      permissions: this.pending.count('permissions', task.id), queuedFor: queued ? queued.step.name : '',
      prs: [...(this.prs.get(task.id) || new Map()).values()] });
    if (this.family) this.family.draw(card);
  }

  // notePR records the newest state of a task's pull request (an older
  // record arriving late is dropped).
  notePR(p) {
    if (!this.prs.has(p.task_id)) this.prs.set(p.task_id, new Map());
    const mine = this.prs.get(p.task_id);
    const cur = mine.get(p.id);
    if (!cur || !older(p, cur)) mine.set(p.id, p);
  }

  count(c) {
    const n = c.list.querySelectorAll('.card:not(.placeholder)').length;
    const lim = c.step.wip_limit;
    c.wip.textContent = lim > 0 ? `${n} / ${lim} (WIP limit)` : `${n} ${n === 1 ? 'task' : 'tasks'}`;
    c.wip.dataset.full = lim > 0 && n >= lim ? 'true' : 'false';
  }

  countAll() {
    for (const c of this.columns.values()) this.count(c);
    if (this.empty) this.empty.hidden = this.cards.size > 0;
    this.filter.show([...this.cards.values()]);
  }

  // detach returns an undo that puts the card back where it is now.
  detach(card) {
    const list = card.parentElement;
    const next = card.nextElementSibling;
    return () => list.insertBefore(card, next && next.parentElement === list ? next : null);
  }

  key(ev) {
    const card = ev.target.closest && ev.target.closest('.card');
    if (!card || ev.target !== card) return;
    if (ev.key === 'Enter') { location.hash = `#/task/${encodeURIComponent(card.dataset.id)}`; return; }
    if (!ev.shiftKey) return;
    const at = this.steps.findIndex((s) => s.id === card.dataset.step);
    const list = card.parentElement;
    const undo = this.detach(card);
    let stepId = card.dataset.step;
    if (ev.key === 'ArrowRight' || ev.key === 'ArrowLeft') {
      const to = this.steps[at + (ev.key === 'ArrowRight' ? 1 : -1)];
      if (!to) return;
      stepId = to.id;
      this.columns.get(stepId).list.append(card);
    } else if (ev.key === 'ArrowUp' && card.previousElementSibling) list.insertBefore(card, card.previousElementSibling);
    else if (ev.key === 'ArrowDown' && card.nextElementSibling) list.insertBefore(card.nextElementSibling, card);
    else return;
    ev.preventDefault();
    card.focus();
    this.move(card, stepId, [...card.parentElement.children].indexOf(card), undo);
  }

  // move asks the server to move a card the page has already moved; a
  // refusal puts it back and shows the server's reason.
  async move(card, stepId, position, undo) {
    this.countAll();
    this.error.hidden = true;
    const title = card.task ? card.task.title : 'task';
    try {
      const t = await api.request(TASK_MOVE, { task_id: card.dataset.id, workflow_step_id: stepId, position });
      this.place(t);
      const to = this.columns.get(stepId);
      toast(`Moved “${title}” to ${to ? to.step.name : 'another step'}`);
    } catch (e) {
      undo();
      this.countAll();
      fill(this.error, `Could not move “${title}”: ${e.message}`);
      this.error.hidden = false;
      card.focus();
    }
  }

  // place puts a task's card where the server says it is. A snapshot
  // older than the card's (a move's answer or an event published after a
  // newer one, say a turn's end after the automation that moved the task
  // on) is ignored.
  place(t) {
    let card = this.cards.get(t.id);
    if (card && older(t, card.task)) return;
    const c = this.columns.get(t.workflow_step_id);
    if ((t.archived_at && !this.filter.showArchived) || t.workflow_id !== this.wf.id || !c) {
      this.forget(t.id, false);
      return;
    }
    if (!card) { card = cardFor(t); this.cards.set(t.id, card); }
    const focused = document.activeElement === card;
    this.refresh(card, t);
    this.family.redraw(t.id);
    card.hidden = !this.filter.matches(t);
    const others = [...c.list.children].filter((x) => x !== card && !x.classList.contains('dragging') && !x.classList.contains('placeholder'));
    const before = others[t.position] || null;
    if (card.parentElement !== c.list || card.nextElementSibling !== before) c.list.insertBefore(card, before);
    if (focused) card.focus();
    this.countAll();
  }

  // forget takes a task's card off the board and redraws its parent's
  // and its subtasks' cards (detached when it was deleted).
  forget(id, deleted) {
    const card = this.cards.get(id);
    if (!card) return;
    card.remove();
    this.cards.delete(id);
    const kids = [...this.cards.values()].filter((k) => k.task.parent_id === id);
    if (deleted) for (const k of kids) k.task = { ...k.task, parent_id: '' };
    this.family.redraw(card.task.parent_id, ...kids.map((k) => k.task.id));
    this.countAll();
  }

  retask(taskId) {
    const card = this.cards.get(taskId);
    if (card && card.task) this.refresh(card, card.task);
  }

  listen() {
    const on = (ev, fn) => this.off.push(api.on(ev, fn));
    on(TASK_CREATED, (t) => this.place(t));
    on(TASK_UPDATED, (t) => this.place(t));
    on(TASK_MOVED, (t) => this.place(t));
    // A deleted task's subtasks are kept, detached from it.
    on(TASK_DELETED, (t) => this.forget(t.id, true));
    const session = (s) => {
      const cur = this.sessions.get(s.task_id);
      if (!cur || cur.id === s.id || s.created_at >= cur.created_at) { this.sessions.set(s.task_id, s); this.retask(s.task_id); }
    };
    on(SESSION_CREATED, session);
    on(SESSION_UPDATED, session);
    on(TASK_PR_UPDATED, (p) => { this.notePR(p); this.retask(p.task_id); });
    this.off.push(...this.pending.listen());
    for (const ev of [WORKFLOW_STEP_CREATED, WORKFLOW_STEP_UPDATED, WORKFLOW_STEP_DELETED, WORKFLOW_STEPS_REORDERED, WORKFLOW_UPDATED, WORKFLOW_DELETED]) {
      on(ev, () => window.dispatchEvent(new HashChangeEvent('hashchange')));
    }
  }

  close() {
    this.usage.close();
    closeMoveMenu();
    this.off.forEach((f) => f());
  }
}

