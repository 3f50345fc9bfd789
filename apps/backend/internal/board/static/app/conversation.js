// A task's live conversation: what was said to its agents, what they
// said (Markdown), thought (collapsed), did (tool calls with their status
// and bounded input and output) and planned, and what Kandev and the
// workflow engine did. It is message.list plus session.message
// notifications; a streamed message or a tool call is re-published with
// the same id as it changes, and replaces its earlier form in place.
import { api } from './api.js';
import { h, when, clip, stateLabel } from './dom.js';
import { markdown } from './md.js';
import { MAX_LIMIT, MESSAGE_LIST, SESSION_MESSAGE } from './contract.js';

// MAX_TOOL_TEXT bounds the shown input or output of a tool call.
const MAX_TOOL_TEXT = 4000;
const PAGE = MAX_LIMIT;

export class Conversation {
  // sessionId: one session's messages; empty: the whole task (every
  // session, and the workflow's records, which belong to no session).
  // label(sessionId) names a session in the whole-task view.
  constructor(taskId, sessionId, label) {
    this.taskId = taskId;
    this.sessionId = sessionId || '';
    this.label = label || (() => '');
    this.items = new Map(); // message id → element
    this.waiting = null; // notifications held while the first page loads
    this.list = h('ol', { class: 'conversation', 'aria-label': 'Conversation', 'aria-live': 'polite', 'aria-relevant': 'additions text' });
    this.more = h('button', { type: 'button', class: 'link', hidden: true, onclick: () => this.older() }, 'Show earlier messages');
    this.el = h('div', {}, this.more, this.list);
    this.off = api.on(SESSION_MESSAGE, (p) => { if (p.message) this.put(p.message); });
  }

  // close stops following notifications.
  close() { this.off(); }

  query(extra) {
    return { task_id: this.taskId, ...(this.sessionId ? { session_id: this.sessionId } : {}), sort: 'desc', limit: PAGE, ...extra };
  }

  // load shows the newest page. Notifications that arrive meanwhile are
  // applied after it, in order: each version of a message is published
  // after it is saved, so the last one applied is the newest.
  async load() {
    this.waiting = [];
    let page;
    try {
      page = await api.request(MESSAGE_LIST, this.query({}));
    } finally {
      const live = this.waiting;
      this.waiting = null;
      if (page) {
        this.before = page.next_cursor || '';
        this.more.hidden = !this.before;
        for (const m of [...page.items].reverse()) this.put(m);
      }
      live.forEach((m) => this.put(m));
    }
    if (!this.items.size) this.list.append(h('li', { class: 'muted', dataset: { empty: '1' } }, 'No messages yet.'));
    this.list.scrollTop = this.list.scrollHeight;
  }

  async older() {
    const page = await api.request(MESSAGE_LIST, this.query({ before: this.before }));
    this.before = page.next_cursor || '';
    this.more.hidden = !this.before;
    for (const m of page.items) {
      if (this.items.has(m.id)) continue;
      const el = this.render(m);
      this.items.set(m.id, el);
      this.list.prepend(el);
    }
  }

  // put adds a message of this conversation, or replaces the one with the
  // same id (keeping open what the reader opened).
  put(m) {
    if (m.task_id !== this.taskId || (this.sessionId && m.session_id !== this.sessionId)) return;
    if (this.waiting) { this.waiting.push(m); return; }
    const empty = this.list.querySelector('[data-empty]');
    if (empty) empty.remove();
    const el = this.render(m);
    const cur = this.items.get(m.id);
    const atEnd = this.list.scrollHeight - this.list.scrollTop - this.list.clientHeight < 40;
    if (cur) {
      const open = [...cur.querySelectorAll('details')].map((d) => d.open);
      el.querySelectorAll('details').forEach((d, i) => { if (open[i]) d.open = true; });
      cur.replaceWith(el);
    } else this.list.append(el);
    this.items.set(m.id, el);
    if (atEnd) this.list.scrollTop = this.list.scrollHeight;
  }

  render(m) {
    const session = !this.sessionId && m.session_id ? this.label(m.session_id) : '';
    const who = h('div', { class: 'who' }, h('strong', {}, author(m)), h('span', {}, typeLabel(m.type)),
      session ? h('span', {}, session) : null, h('time', { datetime: m.created_at }, when(m.created_at)));
    return h('li', { class: `msg type-${cls(m.type)} author-${cls(m.author)}`, dataset: { id: m.id, type: m.type } }, who, body(m));
  }
}

function cls(s) { return String(s || '').replace(/[^a-z0-9_-]/gi, '_'); }

function author(m) {
  if (m.author === 'user' || m.author === 'operator') return 'You';
  if (m.author === 'agent') return 'Agent';
  if (m.author === 'kandev') return 'Kandev';
  if (m.author === 'workflow') return 'Workflow';
  if (m.author && m.author.startsWith('task:')) return 'Another task';
  if (m.author && m.author.startsWith('session:')) return 'An agent';
  return m.author || 'Kandev';
}

const TYPE_LABELS = { message: 'Message', prompt: 'Prompt', thought: 'Thought', tool_call: 'Tool call', plan: 'Plan',
  permission: 'Permission', status: 'Status', error: 'Error', comment: 'Comment' };

function typeLabel(t) { return TYPE_LABELS[t] || stateLabel(t); }

function body(m) {
  switch (m.type) {
    case 'thought':
      return h('details', {}, h('summary', {}, 'Thought (select to show)'), markdown(m.content));
    case 'tool_call':
      return toolCall(m);
    case 'plan':
      return plan(m);
    case 'permission':
      return h('p', {}, h('span', { 'aria-hidden': 'true' }, '☑ '), clip(m.content, MAX_TOOL_TEXT));
    case 'status':
    case 'error':
      return h('p', {}, m.type === 'error' ? h('span', { 'aria-hidden': 'true' }, '⚠ ') : null, clip(m.content, MAX_TOOL_TEXT));
    default:
      return markdown(m.content);
  }
}

function parse(content) {
  try {
    const v = JSON.parse(content);
    return v && typeof v === 'object' && !Array.isArray(v) ? v : null;
  } catch { return null; }
}

// pretty shows a tool's input or output: JSON text indented, other text
// as it is, bounded either way.
function pretty(text) {
  let out = text;
  try { out = JSON.stringify(JSON.parse(text), null, 2); } catch { /* not JSON: as it is */ }
  return clip(out, MAX_TOOL_TEXT);
}

const TOOL_ICONS = { pending: '○', in_progress: '◐', completed: '✓', failed: '✗' };

// toolCall shows a tool call recorded as JSON {tool_call_id, title, kind,
// status, input, output}: its title and status, and its input and output
// collapsed and bounded.
function toolCall(m) {
  const data = parse(m.content);
  if (!data) return h('details', {}, h('summary', {}, 'Tool call'), h('pre', {}, clip(m.content, MAX_TOOL_TEXT)));
  const status = String(data.status || 'pending');
  const part = (label, v) => (v ? h('details', {}, h('summary', {}, label), h('pre', {}, pretty(v))) : null);
  return h('div', { class: 'tool', dataset: { status } },
    h('p', {}, h('code', {}, String(data.title || 'Tool call')), data.kind && data.kind !== 'other' ? h('span', { class: 'muted' }, ` · ${data.kind}`) : null, ' ',
      h('span', { class: `badge tool-${cls(status)}` }, h('span', { 'aria-hidden': 'true' }, TOOL_ICONS[status] || '•'), stateLabel(status))),
    part('Input', data.input), part('Output', data.output));
}

const PLAN_ICONS = { pending: '○', in_progress: '◐', completed: '✓' };

// plan shows an agent's plan, JSON {entries: [{content, priority, status}]}.
function plan(m) {
  const data = parse(m.content);
  const entries = data && Array.isArray(data.entries) ? data.entries : null;
  if (!entries) return h('pre', {}, clip(m.content, MAX_TOOL_TEXT));
  if (!entries.length) return h('p', { class: 'muted' }, 'The plan is empty.');
  return h('ol', { class: 'agent-plan' }, entries.map((e) => h('li', { dataset: { status: e.status || 'pending' } },
    h('span', { 'aria-hidden': 'true' }, `${PLAN_ICONS[e.status] || '•'} `), String(e.content ?? ''),
    h('span', { class: 'muted' }, ` (${stateLabel(e.status || 'pending')}${e.priority ? `, ${e.priority} priority` : ''})`))));
}
