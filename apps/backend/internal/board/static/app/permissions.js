// Permission requests agents are waiting on: the operator picks one of the
// options the agent offered (permission.resolve). The first answer wins;
// a later one is told which answer the agent got instead.
import { api } from './api.js';
import { h, when, toast } from './dom.js';
import { PERMISSION_RESOLVE } from './contract.js';

// Option kinds of ACP, in words and with a symbol (never colour alone).
const KINDS = {
  allow_once: ['✓', 'allow once'], allow_always: ['✓✓', 'allow always'],
  reject_once: ['✗', 'reject once'], reject_always: ['✗✗', 'reject always'],
};

// optionName is what an option is called, for notices.
function optionName(p, optionId) {
  const o = (p.options || []).find((x) => x.option_id === optionId);
  return o ? o.name : optionId;
}

// outcome says in words how a request that is no longer pending ended.
export function permissionOutcome(p) {
  switch (p.status) {
    case 'resolved':
      return `answered “${optionName(p, p.option_id)}”${p.resolved_by ? ` by ${p.resolved_by}` : ''}`;
    case 'expired':
      return 'expired: nobody answered in time, and the agent was told it was cancelled';
    case 'cancelled':
      return 'cancelled: the agent withdrew it or its session stopped';
    default:
      return p.status;
  }
}

// permissionCard is the answer form of one pending permission request.
export function permissionCard(p, taskTitle) {
  const buttons = (p.options || []).map((o) => {
    const [icon, words] = KINDS[o.kind] || ['•', o.kind];
    return h('button', {
      type: 'button', class: o.kind && o.kind.startsWith('allow') ? 'primary' : 'danger', dataset: { option: o.option_id },
      title: words, onclick: () => resolve(o),
    }, h('span', { 'aria-hidden': 'true' }, `${icon} `), o.name, h('span', { class: 'sr-label' }, ` (${words})`));
  });
  const err = h('div', { class: 'form-error', role: 'alert', hidden: true });
  const card = h('article', { class: 'permission', 'aria-label': `Permission request from ${taskTitle || 'an agent'}`, dataset: { id: p.request_id } },
    h('p', { class: 'hint' }, 'From ', h('a', { href: `#/task/${encodeURIComponent(p.task_id)}` }, taskTitle || 'a task'), ` · ${when(p.created_at)}`),
    h('h3', {}, h('span', { 'aria-hidden': 'true' }, '☑ '), 'The agent asks to: ', h('span', { class: 'permission-title' }, p.title),
      p.kind && p.kind !== 'other' ? h('span', { class: 'badge' }, p.kind) : null),
    err, h('div', { class: 'actions' }, buttons));

  async function resolve(o) {
    err.hidden = true;
    buttons.forEach((b) => { b.disabled = true; });
    card.dataset.mine = '1';
    try {
      const res = await api.request(PERMISSION_RESOLVE, { task_id: p.task_id, session_id: p.session_id, request_id: p.request_id,
        pending_id: p.pending_id, option_id: o.option_id });
      if (res.claimed) {
        card.append(h('p', { class: 'notice', role: 'status' }, `You chose “${o.name}”. The agent was told.`));
        toast(`Permission answered: ${o.name}`);
      } else {
        card.append(h('p', { class: 'notice warn', role: 'alert' }, `Someone answered first: this request was ${permissionOutcome(res)}. Your choice was not applied.`));
      }
    } catch (e) {
      delete card.dataset.mine;
      buttons.forEach((b) => { b.disabled = false; });
      err.textContent = e.code ? `${e.message} (${e.code})` : e.message;
      err.hidden = false;
    }
  }
  return card;
}
