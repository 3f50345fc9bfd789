// DOM helpers. Everything the board shows is built with createElement and
// textContent: no HTML string from the server or an agent is ever parsed.

// h builds an element: h('a', {href: '#/', class: 'x'}, 'text', child, [more]).
// Attributes starting with "on" become listeners; false/null skip.
export function h(tag, attrs, ...children) {
  const el = tag.startsWith('svg:')
    ? document.createElementNS('http://www.w3.org/2000/svg', tag.slice(4))
    : document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === false || v === null || v === undefined) continue;
    if (k.startsWith('on') && typeof v === 'function') el.addEventListener(k.slice(2), v);
    else if (k === 'dataset') Object.assign(el.dataset, v);
    else if (k === 'value' && 'value' in el && !el.namespaceURI.endsWith('svg')) el.value = v;
    else if (k === 'checked' || k === 'selected' || k === 'disabled' || k === 'hidden') el[k] = !!v;
    else el.setAttribute(k, v === true ? '' : String(v));
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    if (Array.isArray(c)) append(el, c);
    else el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
}

// clear empties an element and fills it with children.
export function fill(el, ...children) {
  el.replaceChildren();
  append(el, children);
  return el;
}

let uid = 0;
// id returns a page-unique element id with a prefix.
export function id(prefix) { uid += 1; return `${prefix}-${uid}`; }

// toast shows a short message in the live region (errors stay longer).
export function toast(message, kind = 'info') {
  const box = document.getElementById('toast');
  const p = h('p', { class: kind }, message);
  box.append(p);
  setTimeout(() => p.remove(), kind === 'error' ? 10000 : 4000);
}

// when formats a timestamp for people, in their locale.
export function when(iso) {
  if (!iso) return '';
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? '' : d.toLocaleString();
}

// older reports whether task snapshot a is older than b (by updated_at,
// when both have one): events and answers may arrive out of order.
export function older(a, b) {
  const [as, af] = stamp(a && a.updated_at);
  const [bs, bf] = stamp(b && b.updated_at);
  if (Number.isNaN(as) || Number.isNaN(bs)) return false;
  return as < bs || (as === bs && af < bf);
}

// stamp splits an RFC 3339 UTC time into its whole seconds (as a number)
// and its fraction padded to nanoseconds: the store stamps changes in
// microseconds, Date.parse keeps milliseconds, and Go trims trailing zeros.
function stamp(s) {
  const m = /^(.*?)(?:\.(\d+))?Z$/.exec(s || '');
  return m ? [Date.parse(m[1] + 'Z'), (m[2] || '').padEnd(9, '0')] : [NaN, ''];
}

// stateLabel turns an enum value (IN_PROGRESS) into words (In progress).
export function stateLabel(s) {
  if (!s) return '';
  const w = String(s).replace(/[_-]+/g, ' ').toLowerCase();
  return w.charAt(0).toUpperCase() + w.slice(1);
}

// stateIcon gives each task or session state a shape, so colour is never
// the only signal.
const icons = {
  TODO: '○', IN_PROGRESS: '◐', REVIEW: '◑', BLOCKED: '⊗', WAITING_FOR_INPUT: '⚑', COMPLETED: '✓', FAILED: '✗',
  CANCELLED: '⊘', CREATED: '○', QUEUED: '…', STARTING: '◔', RUNNING: '▶', IDLE: '‖',
};
// taskStateWhy says what a task's state means: it follows the task's
// agents, while the card's column is the task's workflow step, so the two
// can differ (a card moved by hand, an agent stopped mid-work).
const taskStateWhy = {
  TODO: 'no agent has worked on it yet',
  IN_PROGRESS: 'its agent is working',
  REVIEW: 'its agent finished its turn: yours to review',
  BLOCKED: 'it is blocked',
  WAITING_FOR_INPUT: 'its agent waits for your answer',
  COMPLETED: 'it is done',
  FAILED: 'its agent failed',
  CANCELLED: 'its agent was stopped before it finished (or someone cancelled the task)',
};
export function taskBadge(state) {
  const el = badge(state);
  el.title = `State ${stateLabel(state)}: ${taskStateWhy[state] || 'set by hand'}. The state follows the task's agents; the column is its workflow step.`;
  return el;
}

// sessionBadge is badge for an agent session: a session made by hand
// that waits for its agent (CREATED: none attached yet, or it went away)
// says so instead of "Created".
export function sessionBadge(s) {
  const el = badge(s.state, 'agent');
  if (!s.managed && s.state === 'CREATED') {
    fill(el, h('span', { 'aria-hidden': 'true' }, icons.CREATED), 'Not connected');
    el.title = 'No agent is connected to this session: connect one with kandev mcp --session';
  }
  return el;
}

export function badge(state, extra) {
  return h('span', { class: `badge state-${state}${extra ? ` ${extra}` : ''}` },
    h('span', { 'aria-hidden': 'true' }, icons[state] || '•'), stateLabel(state));
}

// clip bounds text shown in the page.
export function clip(s, max) {
  const t = String(s ?? '');
  return t.length > max ? `${t.slice(0, max)}… (${t.length - max} more characters)` : t;
}
