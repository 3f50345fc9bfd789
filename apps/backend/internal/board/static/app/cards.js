// Board cards: title, state, agent status, waiting-for-you badges
// (questions, permission requests), the admission-queue badge and the
// badges of the task's pull requests (state, checks, review).
import { h, fill, taskBadge, sessionBadge, stateLabel, when, clip } from './dom.js';

export const MOVE_HINT_ID = 'move-hint';

// cardFor builds the card of a task.
export function cardFor(task) {
  const card = h('li', { class: 'card', tabindex: '0', 'aria-describedby': MOVE_HINT_ID, dataset: { id: task.id } });
  fillCard(card, task, {});
  return card;
}

// fillCard (re)draws a card's content from the task and what the board
// knows about it: its newest session, its counts of pending questions and
// permission requests, the name of the full step it waits to enter, and
// its linked pull requests.
export function fillCard(card, task, { session, questions = 0, permissions = 0, queuedFor = '', prs = [] }) {
  card.dataset.step = task.workflow_step_id;
  card.dataset.position = task.position;
  card.dataset.state = task.state;
  card.task = task;
  const meta = h('div', { class: 'meta' }, task.archived_at ? h('span', { class: 'badge archived' }, 'Archived') : null, taskBadge(task.state));
  if (session) meta.append(agentBadge(session));
  if (questions > 0) meta.append(waitingBadge('questions', '⚑', 'Question for you', questions));
  if (permissions > 0) meta.append(waitingBadge('permissions', '☑', 'Permission needed', permissions));
  if (task.queued_for_step_id) {
    meta.append(h('span', { class: 'badge queued', title: task.queued_at ? `Waiting since ${when(task.queued_at)}` : null },
      h('span', { 'aria-hidden': 'true' }, '⇢'), `Waiting for room in ${queuedFor || 'a full step'}`));
  }
  for (const p of prs.slice(0, MAX_PR_BADGES)) meta.append(prBadge(p));
  if (prs.length > MAX_PR_BADGES) meta.append(h('span', { class: 'badge pr-more' }, `+${prs.length - MAX_PR_BADGES} pull requests`));
  meta.append(h('button', { type: 'button', class: 'move', 'aria-label': `Move “${task.title}”`, dataset: { action: 'move' } }, 'Move'));
  fill(card, h('a', { class: 'title', href: `#/task/${encodeURIComponent(task.id)}`, draggable: 'false', tabindex: '-1' }, task.title), meta);
}

// MAX_PR_BADGES bounds the pull request badges drawn on one card.
const MAX_PR_BADGES = 2;
const CHECKS = { passing: ['✓', 'checks passing'], failing: ['✗', 'checks failing'], pending: ['…', 'checks pending'] };
const REVIEW = { approved: 'approved', changes_requested: 'changes requested', pending: 'review pending' };

// prBadge says a pull request's state, checks and review in words (an
// icon beside each, never colour alone).
export function prBadge(p) {
  const checks = CHECKS[p.checks];
  const review = REVIEW[p.review];
  const words = [`PR #${p.number} ${stateLabel(p.state).toLowerCase()}`, checks && checks[1], review].filter(Boolean).join(' · ');
  return h('span', { class: `badge pr-badge pr-${p.state}${checks ? ` checks-${p.checks}` : ''}`, title: `Pull request ${words}`,
    dataset: { pr: p.id, state: p.state, checks: p.checks, review: p.review } },
  h('span', { 'aria-hidden': 'true' }, p.state === 'merged' ? '⛙' : '⇄'), `#${p.number} ${stateLabel(p.state)}`,
  checks ? h('span', { class: 'pr-checks' }, ` ${checks[0]}`, h('span', { class: 'sr-label' }, checks[1])) : null,
  review ? ` · ${stateLabel(review)}` : null);
}

function waitingBadge(kind, icon, words, n) {
  return h('span', { class: 'badge waiting', dataset: { waiting: kind } }, h('span', { 'aria-hidden': 'true' }, icon),
    n === 1 ? words : `${words} (${n})`);
}

// agentBadge says what the task's newest agent session is doing, whether
// its MCP server (the agent's Kandev tools) is attached, and how a failed
// agent ended.
export function agentBadge(s) {
  const tools = s.mcp_attached ? 'tools connected' : 'tools not connected';
  const el = sessionBadge(s);
  el.prepend('Agent: ');
  const exit = s.exit_code !== undefined && s.exit_code !== null && s.state === 'FAILED' ? ` (exit ${s.exit_code})` : '';
  if (exit) el.append(exit);
  el.title = `Agent session ${stateLabel(s.state)}${exit}, ${tools}${s.error ? `: ${clip(s.error, 300)}` : ''}`;
  el.append(h('span', { 'aria-hidden': 'true' }, s.mcp_attached ? ' ⚡' : ''));
  return el;
}

// openMoveMenu shows a menu of the other steps next to a card's Move
// button; choose(stepId) moves the card there.
export function openMoveMenu(button, steps, currentStepId, choose) {
  closeMoveMenu();
  const menu = h('div', { class: 'movemenu', role: 'menu', id: 'movemenu', 'aria-label': 'Move to step' });
  for (const st of steps) {
    if (st.id === currentStepId) continue;
    menu.append(h('button', { type: 'button', role: 'menuitem', onclick: () => { closeMoveMenu(); button.focus(); choose(st.id); } }, `Move to ${st.name}`));
  }
  menu.append(h('button', { type: 'button', role: 'menuitem', onclick: () => { closeMoveMenu(); button.focus(); } }, 'Cancel'));
  menu.addEventListener('keydown', (ev) => {
    const items = [...menu.querySelectorAll('button')];
    const at = items.indexOf(document.activeElement);
    if (ev.key === 'Escape') { ev.preventDefault(); closeMoveMenu(); button.focus(); }
    if (ev.key === 'ArrowDown') { ev.preventDefault(); items[(at + 1) % items.length].focus(); }
    if (ev.key === 'ArrowUp') { ev.preventDefault(); items[(at - 1 + items.length) % items.length].focus(); }
  });
  document.body.append(menu);
  const r = button.getBoundingClientRect();
  const top = Math.min(r.bottom + 4, window.innerHeight - menu.offsetHeight - 8);
  menu.style.top = `${Math.max(8, top)}px`;
  menu.style.left = `${Math.max(8, Math.min(r.left, window.innerWidth - menu.offsetWidth - 8))}px`;
  menu.querySelector('button').focus();
  setTimeout(() => document.addEventListener('pointerdown', outside), 0);
}

function outside(ev) {
  const menu = document.getElementById('movemenu');
  if (menu && !menu.contains(ev.target)) closeMoveMenu();
}

export function closeMoveMenu() {
  document.removeEventListener('pointerdown', outside);
  const menu = document.getElementById('movemenu');
  if (menu) menu.remove();
}
