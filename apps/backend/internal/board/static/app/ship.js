// Ship a repository's changes from the Changes tab: commit them on the
// task branch (task.commit), push the branch to the repository's
// configured remote (task.push), open a pull request (task.pr.open), and
// the task's pull requests with their state, checks and review
// (task.pr.list), and merge one with the method the operator chooses,
// confirmed first (task.pr.merge). Forge tokens stay on the server.
import { api } from './api.js';
import { h, fill, toast, stateLabel } from './dom.js';
import { form } from './form.js';
import { TASK_COMMIT, TASK_PR_LIST, TASK_PR_MERGE, TASK_PR_OPEN, TASK_PUSH } from './contract.js';

// AGENT_COMMIT_TIMEOUT_MS outlasts task.commit's default wait for the
// agent's message (120 s).
const AGENT_COMMIT_TIMEOUT_MS = 135000;

// shipPanel is the Ship controls of one repository of a task; onDone runs
// after a commit (the changes moved).
export function shipPanel(taskId, repositoryId, onDone) {
  const status = h('p', { class: 'hint ship-status', role: 'status' });
  const commit = form({
    fields: [{ name: 'message', label: 'Commit message', type: 'textarea', rows: 2 },
      { name: 'from_agent', label: "The task's agent writes the message (the text above, if any, is its instructions)", type: 'checkbox' }],
    submitLabel: 'Commit',
    submit: async (v) => {
      if (!v.from_agent) return api.request(TASK_COMMIT, { task_id: taskId, repository_id: repositoryId, message: v.message });
      fill(status, "Waiting for the agent's commit message…");
      try { // the backend waits up to wait_seconds (default 120) for the answer
        return await api.request(TASK_COMMIT, { task_id: taskId, repository_id: repositoryId, message_from_agent: true,
          ...(v.message ? { instructions: v.message } : {}) }, AGENT_COMMIT_TIMEOUT_MS);
      } catch (e) { fill(status, ''); throw e; }
    },
    onDone: (res) => {
      const by = res.message_from === 'agent' ? `, message by the agent: ${res.commit.subject}` : '';
      fill(status, `Committed ${res.commit.sha.slice(0, 10)} on ${res.branch}${by}`); toast('Committed'); onDone();
    },
  });
  commit.classList.add('ship-commit');
  const push = h('button', { type: 'button', class: 'ship-push', onclick: async () => {
    push.disabled = true;
    try {
      const res = await api.request(TASK_PUSH, { task_id: taskId, repository_id: repositoryId });
      fill(status, `Pushed ${res.branch}: ${stateLabel(res.status)}`);
    } catch (e) { toast(e.message, 'error'); } finally { push.disabled = false; }
  } }, 'Push');
  const pr = form({
    fields: [{ name: 'title', label: 'Pull request title' }, { name: 'body', label: 'Description (optional)', type: 'textarea', rows: 2 }],
    submitLabel: 'Open pull request',
    submit: (v) => api.request(TASK_PR_OPEN, { task_id: taskId, repository_id: repositoryId, title: v.title, ...(v.body ? { body: v.body } : {}) }),
    onDone: (res) => { fill(status, `Opened pull request #${res.number}`); toast('Pull request opened'); onDone(); },
  });
  pr.classList.add('ship-pr');
  return h('details', { class: 'ship' }, h('summary', {}, 'Commit, push, pull request'), commit, h('p', {}, push), pr, status);
}

// prList shows the task's pull requests (every page, bounded by listAll)
// and a Merge control under each open or draft one. The controls are kept
// across redraws (a poll's task.pr_updated), so a confirmation or a
// refusal on screen stays.
export async function prList(el, taskId) {
  const prs = await api.listAll(TASK_PR_LIST, { task_id: taskId });
  el.hidden = !prs.length;
  if (!el.merges) el.merges = new Map();
  fill(el, h('h3', {}, 'Pull requests'), prs.map((p) => {
    const row = h('div', { class: 'pr', dataset: { id: p.id, state: p.state } },
      h('a', { href: safeURL(p.url), rel: 'noopener noreferrer', target: '_blank' }, `#${p.number} ${p.title || ''}`), ' ',
      h('span', { class: `badge pr-${p.state}` }, stateLabel(p.state)), ' ',
      h('span', { class: `badge checks-${p.checks}` }, `Checks: ${stateLabel(p.checks)}`), ' ',
      h('span', { class: 'badge' }, `Review: ${stateLabel(p.review)}`));
    if (p.state === 'open' || p.state === 'draft') {
      if (!el.merges.has(p.id)) el.merges.set(p.id, mergeControl(p));
      row.append(el.merges.get(p.id));
    }
    return row;
  }));
}

const MERGE_METHODS = [['merge', 'Merge commit'], ['squash', 'Squash and merge'], ['rebase', 'Rebase and merge']];

// mergeControl is a pull request's merge method, its Merge button and
// the confirmation it asks for; a refusal (not mergeable, head moved,
// checks or reviews missing) is shown under it as the forge's reason.
function mergeControl(p) {
  const method = h('select', { class: 'merge-method', 'aria-label': `How to merge #${p.number}` },
    MERGE_METHODS.map(([v, words]) => h('option', { value: v }, words)));
  const err = h('p', { class: 'form-error merge-error', role: 'alert', hidden: true });
  const ask = h('span', { class: 'merge-confirm', hidden: true });
  const start = h('button', { type: 'button', class: 'pr-merge', onclick: () => {
    const words = MERGE_METHODS.find(([v]) => v === method.value)[1];
    fill(ask, `${words}: #${p.number} into ${p.base_branch || 'its base branch'}? `, confirm, ' ', cancel);
    ask.hidden = false; start.hidden = true; method.disabled = true; err.hidden = true;
    confirm.focus();
  } }, 'Merge…');
  const reset = () => { ask.hidden = true; start.hidden = false; method.disabled = false; confirm.disabled = false; };
  const cancel = h('button', { type: 'button', class: 'merge-cancel', onclick: () => { reset(); start.focus(); } }, 'Cancel');
  const confirm = h('button', { type: 'button', class: 'primary merge-go', onclick: async () => {
    confirm.disabled = true;
    try {
      const out = await api.request(TASK_PR_MERGE, { id: p.id, method: method.value });
      ask.hidden = true;
      fill(err); err.hidden = true;
      box.append(h('span', { class: 'merge-done', role: 'status' }, ` ${stateLabel(out.state)} (${method.value})`));
      toast(`Pull request #${p.number} merged`);
    } catch (e) {
      reset();
      err.textContent = `Not merged: ${e.message}`;
      err.hidden = false;
    }
  } }, 'Confirm merge');
  const box = h('div', { class: 'merge' }, method, ' ', start, ask, err);
  return box;
}

// safeURL keeps only http(s) links (a forge's answer is not trusted).
function safeURL(u) {
  try {
    const x = new URL(String(u));
    return x.protocol === 'https:' || x.protocol === 'http:' ? x.href : '#';
  } catch { return '#'; }
}
