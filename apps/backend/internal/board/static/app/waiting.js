// What agents wait on a person for: questions and permission requests.
// One table of kinds drives the two pending views, their counts in the
// navigation, the board's badges and the task page's panel, so both kinds
// behave alike: live, first answer wins, answered-elsewhere told.
import { api } from './api.js';
import { h, fill } from './dom.js';
import { ctx } from './context.js';
import { questionCard } from './questions.js';
import { permissionCard, permissionOutcome } from './permissions.js';
import {
  PERMISSION_LIST, PERMISSION_REQUESTED, PERMISSION_RESOLVED, QUESTION_ANSWERED, QUESTION_CREATED, QUESTION_LIST,
  TASK_GET
} from './contract.js';

export const KINDS = {
  questions: {
    heading: 'Questions waiting on you',
    hint: 'Agents blocked on a question continue as soon as it is answered.',
    empty: 'No agent is waiting on you.',
    list: (taskId) => api.listAll(QUESTION_LIST, taskId ? { task_id: taskId, state: 'pending' } : { workspace_id: ctx.workspaceId, state: 'pending' }),
    key: (q) => q.id,
    created: QUESTION_CREATED,
    closed: QUESTION_ANSWERED,
    card: questionCard,
    closedText: () => 'This question was answered elsewhere.',
  },
  permissions: {
    heading: 'Permission requests waiting on you',
    hint: 'An agent waiting for permission goes on as soon as you choose one of its options.',
    empty: 'No agent is waiting for permission.',
    list: (taskId) => api.listAll(PERMISSION_LIST, taskId ? { task_id: taskId } : { workspace_id: ctx.workspaceId }),
    key: (p) => p.request_id,
    created: PERMISSION_REQUESTED,
    closed: PERMISSION_RESOLVED,
    card: permissionCard,
    closedText: (p) => `This request was ${permissionOutcome(p)}.`,
  },
};

// closedElsewhere disables a card whose item someone else closed.
function closedElsewhere(kind, card, item) {
  for (const c of card.querySelectorAll('input, textarea, button')) c.disabled = true;
  card.append(h('p', { class: 'notice', role: 'status' }, kind.closedText(item)));
}

// waitingList is a live list of one kind's pending cards (of one task,
// or of the workspace), in el. It returns a function that stops it.
export async function waitingList(el, kindName, { taskId = '', emptyText, onChange } = {}) {
  const kind = KINDS[kindName];
  const cards = new Map();
  const empty = h('p', { class: 'muted', dataset: { empty: kindName } }, emptyText ?? kind.empty);
  const changed = () => { empty.hidden = cards.size > 0 || !empty.textContent; if (onChange) onChange(cards.size); };
  const add = (item, title) => {
    const key = kind.key(item);
    if (cards.has(key)) return;
    const card = kind.card(item, title);
    cards.set(key, card);
    el.append(card);
    changed();
  };
  fill(el, empty);
  const off = [
    api.on(kind.created, async (x) => {
      if ((taskId && x.task_id !== taskId) || (!taskId && x.workspace_id !== ctx.workspaceId)) return;
      add(x, (await taskTitles([x.task_id])).get(x.task_id));
    }),
    api.on(kind.closed, (x) => {
      const card = cards.get(kind.key(x));
      if (!card) return;
      if (!card.dataset.mine) closedElsewhere(kind, card, x);
      cards.delete(kind.key(x));
      changed();
    }),
  ];
  const items = await kind.list(taskId);
  const titles = await taskTitles(items.map((x) => x.task_id));
  items.forEach((x) => add(x, titles.get(x.task_id)));
  changed();
  return () => off.forEach((f) => f());
}

// renderWaiting is the view of one kind (#/questions, #/permissions).
export async function renderWaiting(main, kindName) {
  const kind = KINDS[kindName];
  const list = h('div', { id: kindName });
  fill(main, h('h1', {}, kind.heading), h('p', { class: 'hint' }, kind.hint), list);
  return waitingList(list, kindName);
}

export async function taskTitles(ids) {
  const out = new Map();
  await Promise.all([...new Set(ids)].map(async (tid) => {
    try { out.set(tid, (await api.request(TASK_GET, { id: tid })).title); } catch { out.set(tid, 'a task'); }
  }));
  return out;
}

// PendingByTask keeps, per kind, the keys of the pending items of each
// task of the current workspace, live; changed(taskId) is called when a
// task's counts change.
export class PendingByTask {
  constructor(changed) {
    this.changed = changed;
    this.sets = Object.fromEntries(Object.keys(KINDS).map((k) => [k, new Map()]));
  }

  async load() {
    await Promise.all(Object.entries(KINDS).map(async ([name, kind]) => {
      const byTask = this.sets[name];
      byTask.clear();
      for (const x of await kind.list('')) this.put(name, x, true);
    }));
  }

  put(name, x, open) {
    const byTask = this.sets[name];
    if (!byTask.has(x.task_id)) byTask.set(x.task_id, new Set());
    const set = byTask.get(x.task_id);
    const key = KINDS[name].key(x);
    if (open) set.add(key); else set.delete(key);
  }

  // listen follows the created/closed events; it returns the unsubscribers.
  listen() {
    return Object.entries(KINDS).flatMap(([name, kind]) => [
      api.on(kind.created, (x) => { this.put(name, x, true); this.changed(x.task_id); }),
      api.on(kind.closed, (x) => { this.put(name, x, false); this.changed(x.task_id); }),
    ]);
  }

  count(name, taskId) { return (this.sets[name].get(taskId) || new Set()).size; }

  total(name) { let n = 0; for (const s of this.sets[name].values()) n += s.size; return n; }
}

// watchCounts keeps the navigation's counts of pending questions and
// permission requests live (reloaded after a reconnect or a workspace
// switch).
export function watchCounts() {
  const show = () => {
    for (const name of Object.keys(KINDS)) {
      const el = document.getElementById(`${name}-count`);
      const n = pending.total(name);
      el.hidden = n === 0;
      el.textContent = String(n);
      el.setAttribute('aria-label', `${n} waiting`);
    }
  };
  const pending = new PendingByTask(show);
  pending.listen();
  const load = async () => { await pending.load(); show(); };
  api.on('reconnected', load);
  api.on('workspace', load);
  return load();
}
