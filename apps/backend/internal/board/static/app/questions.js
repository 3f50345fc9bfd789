// Questions agents are waiting on: answered with the offered options or a
// custom text, first answer wins (a later one is told so).
import { api } from './api.js';
import { h, fill, when, toast, id } from './dom.js';
import { ctx } from './context.js';
import { clearErrors, showError } from './form.js';

export async function renderQuestions(main) {
  const list = h('div', { id: 'questions' });
  fill(main, h('h1', {}, 'Waiting on you'), h('p', { class: 'hint' }, 'Agents blocked on a question continue as soon as it is answered.'), list);
  const qs = await api.listAll('question.list', { workspace_id: ctx.workspaceId, state: 'pending' });
  const titles = await taskTitles(qs.map((q) => q.task_id));
  const cards = new Map();
  const empty = h('p', { class: 'muted', id: 'no-questions' }, 'No agent is waiting on you.');
  const refreshEmpty = () => { empty.hidden = cards.size > 0; };
  list.append(empty);
  const add = (q, title) => {
    if (cards.has(q.id)) return;
    const card = questionCard(q, title);
    cards.set(q.id, card);
    list.append(card);
    refreshEmpty();
  };
  qs.forEach((q) => add(q, titles.get(q.task_id)));
  refreshEmpty();
  const off = [
    api.on('question.created', async (q) => add(q, (await taskTitles([q.task_id])).get(q.task_id))),
    api.on('question.answered', (q) => {
      const card = cards.get(q.id);
      if (!card) return;
      if (!card.dataset.mine) answeredElsewhere(card);
      cards.delete(q.id);
      refreshEmpty();
    }),
  ];
  return () => off.forEach((f) => f());
}

async function taskTitles(ids) {
  const out = new Map();
  await Promise.all([...new Set(ids)].map(async (tid) => {
    try { out.set(tid, (await api.request('task.get', { id: tid })).title); } catch { out.set(tid, 'a task'); }
  }));
  return out;
}

function answeredElsewhere(card) {
  for (const c of card.querySelectorAll('input, textarea, button')) c.disabled = true;
  card.append(h('p', { class: 'notice', role: 'status' }, 'This question was answered elsewhere.'));
}

// questionCard is the answer form of one pending question bundle.
export function questionCard(q, taskTitle) {
  const form = h('form', { novalidate: true });
  const sets = q.questions.map((item) => {
    const multi = item.multi_select;
    const gid = id('q');
    const other = h('input', { type: 'text', name: `custom-${item.id}`, 'aria-label': `Your own answer to: ${item.question}`, placeholder: 'Or type your own answer' });
    return {
      item, other,
      el: h('fieldset', { dataset: { field: 'answers' } },
        h('legend', {}, item.header ? `${item.header}: ${item.question}` : item.question),
        item.options.map((o, i) => h('label', { class: 'option', for: `${gid}-${i}` },
          h('input', { type: multi ? 'checkbox' : 'radio', name: `${gid}`, value: o.label, id: `${gid}-${i}` }),
          h('span', {}, h('strong', {}, o.label), o.description ? h('span', { class: 'muted' }, ` — ${o.description}`) : null))),
        other,
        h('p', { class: 'field-error', hidden: true })),
      gid,
    };
  });
  const err = h('div', { class: 'form-error', role: 'alert', hidden: true });
  const send = h('button', { type: 'submit', class: 'primary' }, 'Send answer');
  const decline = h('button', { type: 'button', onclick: () => answer({ id: q.id, reject: true, reason: 'declined by the operator' }) }, 'Decline');
  const card = h('article', { class: 'question', 'aria-label': `Question from ${taskTitle || 'an agent'}`, dataset: { id: q.id } },
    h('p', { class: 'hint' }, 'From ', h('a', { href: `#/task/${encodeURIComponent(q.task_id)}` }, taskTitle || 'a task'), ` · ${when(q.created_at)}`),
    form);
  form.append(...sets.map((s) => s.el), err, h('div', { class: 'actions' }, send, decline));

  async function answer(payload) {
    clearErrors(form);
    send.disabled = decline.disabled = true;
    card.dataset.mine = '1';
    try {
      const res = await api.request('question.answer', payload);
      for (const c of form.querySelectorAll('input, textarea, button')) c.disabled = true;
      if (res.claimed) {
        card.append(h('p', { class: 'notice', role: 'status' }, payload.reject ? 'Declined. The agent was told.' : 'Answer sent. The agent continues.'));
        toast('Answer sent');
      } else {
        card.append(h('p', { class: 'notice warn', role: 'alert' }, 'Someone answered first: the agent received that answer, not this one.'));
      }
    } catch (e) {
      delete card.dataset.mine;
      send.disabled = decline.disabled = false;
      showError(form, e);
    }
  }
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    const answers = sets.map(({ item, other, gid }) => {
      const text = other.value.trim();
      if (text) return { question_id: item.id, custom_text: text };
      const selected = [...form.querySelectorAll(`input[name="${gid}"]:checked`)].map((c) => c.value);
      return { question_id: item.id, selected };
    });
    answer({ id: q.id, answers });
  });
  return card;
}

// watchQuestionCount keeps the navigation's pending-question count live.
export function watchQuestionCount() {
  const el = document.getElementById('question-count');
  const pending = new Set();
  const show = () => { el.hidden = pending.size === 0; el.textContent = String(pending.size); el.setAttribute('aria-label', `${pending.size} waiting`); };
  const load = async () => {
    pending.clear();
    if (ctx.workspaceId) (await api.listAll('question.list', { workspace_id: ctx.workspaceId, state: 'pending' })).forEach((q) => pending.add(q.id));
    show();
  };
  api.on('question.created', (q) => { if (q.state === 'pending') pending.add(q.id); show(); });
  api.on('question.answered', (q) => { pending.delete(q.id); show(); });
  api.on('reconnected', load);
  return load();
}
