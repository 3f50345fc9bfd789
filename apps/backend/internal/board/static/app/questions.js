// Questions agents are waiting on: answered with the offered options (by
// option_id) or a custom text, first answer wins (a later one is told so).
import { api } from './api.js';
import { h, when, toast, id } from './dom.js';
import { clearErrors, showError } from './form.js';
import { QUESTION_ANSWER } from './contract.js';

// questionCard is the answer form of one pending question bundle.
export function questionCard(q, taskTitle) {
  const form = h('form', { novalidate: true });
  const sets = q.questions.map((item) => {
    const multi = item.multi_select;
    const gid = id('q');
    const other = h('input', { type: 'text', name: `custom-${item.id}`, 'aria-label': `Your own answer to: ${item.prompt}`, placeholder: 'Or type your own answer' });
    return {
      item, other,
      el: h('fieldset', { dataset: { field: 'answers' } },
        h('legend', {}, item.title ? `${item.title}: ${item.prompt}` : item.prompt),
        item.options.map((o, i) => h('label', { class: 'option', for: `${gid}-${i}` },
          h('input', { type: multi ? 'checkbox' : 'radio', name: `${gid}`, value: o.option_id, id: `${gid}-${i}` }),
          h('span', {}, h('strong', {}, o.label), o.description ? h('span', { class: 'muted' }, ` — ${o.description}`) : null))),
        other,
        h('p', { class: 'field-error', hidden: true })),
      gid,
    };
  });
  const err = h('div', { class: 'form-error', role: 'alert', hidden: true });
  const send = h('button', { type: 'submit', class: 'primary' }, 'Send answer');
  const decline = h('button', { type: 'button', onclick: () => answer({ pending_id: q.id, rejected: true, reject_reason: 'declined by the operator' }) }, 'Decline');
  const card = h('article', { class: 'question', 'aria-label': `Question from ${taskTitle || 'an agent'}`, dataset: { id: q.id } },
    h('p', { class: 'hint' }, 'From ', h('a', { href: `#/task/${encodeURIComponent(q.task_id)}` }, taskTitle || 'a task'), ` · ${when(q.created_at)}`),
    q.context ? h('p', { class: 'context' }, q.context) : null,
    form);
  form.append(...sets.map((s) => s.el), err, h('div', { class: 'actions' }, send, decline));

  async function answer(payload) {
    clearErrors(form);
    send.disabled = decline.disabled = true;
    card.dataset.mine = '1';
    try {
      const res = await api.request(QUESTION_ANSWER, payload);
      for (const c of form.querySelectorAll('input, textarea, button')) c.disabled = true;
      if (res.claimed) {
        card.append(h('p', { class: 'notice', role: 'status' }, payload.rejected ? 'Declined. The agent was told.' : 'Answer sent. The agent continues.'));
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
      return { question_id: item.id, selected_options: selected };
    });
    answer({ pending_id: q.id, answers });
  });
  return card;
}
