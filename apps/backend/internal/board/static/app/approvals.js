// The operator's approvals: the tasks on steps that list the operator
// among their participants (approval.list), in the navigation's count
// (those still waiting on the operator's decision) and the view
// #/approvals, where each is decided; and the decision form the task
// page's Office panel shows too. The view and the count follow the
// workspace's task, decision and step events.
import { api } from './api.js';
import { h, fill, toast, when } from './dom.js';
import { ctx } from './context.js';
import { form } from './form.js';
import {
  APPROVAL_LIST, ARTIFACT_CREATED, ARTIFACT_DELETED, STEP_DECIDE, TASK_CREATED, TASK_DELETED, TASK_MOVED, TASK_UPDATED,
  WORKFLOW_STEP_UPDATED
} from './contract.js';

const CHANGES = [ARTIFACT_CREATED, ARTIFACT_DELETED, TASK_CREATED, TASK_DELETED, TASK_MOVED, TASK_UPDATED, WORKFLOW_STEP_UPDATED];

// decisionForm is the operator's Approve/Reject of a task's current step,
// as role on stepName; onDone gets step.decide's result.
export function decisionForm(taskId, role, stepName, onDone) {
  let decision = 'approved';
  const el = form({
    fields: [{ name: 'reason', label: `Your decision as ${role} on ${stepName}`, type: 'textarea', rows: 2 }],
    submitLabel: 'Approve',
    extra: [h('button', { type: 'submit', class: 'reject', onclick: () => { decision = 'rejected'; } }, 'Reject')],
    submit: (v) => {
      const d = decision;
      decision = 'approved';
      return api.request(STEP_DECIDE, { task_id: taskId, decision: d, reason: v.reason });
    },
    onDone: (res) => {
      toast(res.quorum && res.quorum.outcome ? `Decision recorded: ${res.quorum.outcome}` : 'Decision recorded');
      if (onDone) onDone(res);
    },
  });
  el.querySelector('button.primary').addEventListener('click', () => { decision = 'approved'; });
  return el;
}

// onChanges calls fn 200 ms after an event that can change the
// approvals (once for a burst: at most every 200 ms); it returns the
// unsubscriber.
function onChanges(fn) {
  let timer = null;
  const later = () => { if (!timer) timer = setTimeout(() => { timer = null; fn(); }, 200); };
  const off = [...CHANGES.map((e) => api.on(e, later)), api.on('reconnected', later), api.on('workspace', later)];
  return () => { clearTimeout(timer); off.forEach((f) => f()); };
}

const pendingOnYou = (items) => items.filter((a) => !a.your_decision).length;

// watchApprovals keeps the navigation's count live.
export function watchApprovals() {
  const show = (n) => {
    const el = document.getElementById('approvals-count');
    if (!el) return;
    el.hidden = n === 0;
    el.textContent = String(n);
    el.setAttribute('aria-label', `${n} waiting`);
  };
  const load = async () => {
    if (!ctx.workspaceId) return;
    try { show(pendingOnYou(await api.listAll(APPROVAL_LIST, { workspace_id: ctx.workspaceId }))); } catch { /* the next event retries */ }
  };
  onChanges(load);
  return load();
}

function decisionLine(d) {
  const who = d.operator ? 'you' : `agent profile ${d.agent_profile_id}`;
  const what = d.decision ? `${d.decision}${d.reason ? `: ${d.reason}` : ''}` : 'not decided yet';
  return h('li', { dataset: { decision: d.decision || 'pending' } }, h('strong', {}, `${d.role} (${who})`), ` — ${what}`);
}

function card(a, reload) {
  const quorum = a.step.quorum === 'count' ? `${a.step.count} of ${a.decisions.length}` : a.step.quorum;
  return h('article', { class: 'card approval', dataset: { task: a.task.id, yours: a.your_decision || '' } },
    h('h2', {}, h('a', { href: `#/task/${a.task.id}` }, a.task.title)),
    h('p', { class: 'hint' }, `On ${a.step.name} since `, h('time', { datetime: a.task.step_entered_at }, when(a.task.step_entered_at)),
      ` — quorum: ${quorum}`),
    h('ul', { class: 'decisions' }, a.decisions.map(decisionLine)),
    a.your_decision ? h('p', { class: 'notice' }, `You ${a.your_decision} it; it waits on the other participants.`) : null,
    decisionForm(a.task.id, a.step.role, a.step.name, reload));
}

// renderApprovals is #/approvals: what waits on the operator's decision
// first, then what waits on the other participants.
export async function renderApprovals(main) {
  const list = h('div', { id: 'approvals' });
  const empty = h('p', { class: 'muted', dataset: { empty: 'approvals' } },
    'Nothing waits on your decision: tasks appear here when they reach a step that lists you among its participants.');
  let gen = 0;
  const load = async () => {
    const mine = ++gen;
    const items = await api.listAll(APPROVAL_LIST, { workspace_id: ctx.workspaceId });
    if (mine !== gen) return;
    items.sort((x, y) => Number(Boolean(x.your_decision)) - Number(Boolean(y.your_decision)));
    fill(list, ...items.map((a) => card(a, load)));
    empty.hidden = items.length > 0;
  };
  fill(main, h('h1', {}, 'Approvals'), h('p', { class: 'hint' },
    'Approve or reject each task\'s step; the step moves the task once its quorum is reached.'), empty, list);
  await load();
  return onChanges(() => load().catch((e) => toast(e.message, 'error')));
}
