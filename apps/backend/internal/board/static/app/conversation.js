// A session's live conversation: agent messages as Markdown, thoughts
// collapsed, tool calls with their status and bounded input and output.
// It is message.list plus session.message notifications; a streamed
// message is re-published with the same id and more content, and replaces
// its earlier form in place.
import { api } from './api.js';
import { h, fill, when, clip, stateLabel } from './dom.js';
import { markdown } from './md.js';

// MAX_TOOL_TEXT bounds the shown input or output of a tool call.
const MAX_TOOL_TEXT = 4000;
const PAGE = 200;

export class Conversation {
  constructor(taskId, sessionId) {
    this.taskId = taskId;
    this.sessionId = sessionId;
    this.items = new Map(); // message id → element
    this.list = h('ol', { class: 'conversation', 'aria-label': 'Conversation', 'aria-live': 'polite', 'aria-relevant': 'additions text' });
    this.more = h('button', { type: 'button', class: 'link', hidden: true, onclick: () => this.older() }, 'Show earlier messages');
    this.el = h('div', {}, this.more, this.list);
  }

  async load() {
    const page = await api.request('message.list', { task_id: this.taskId, session_id: this.sessionId, sort: 'desc', limit: PAGE });
    this.before = page.next_cursor || '';
    this.more.hidden = !this.before;
    for (const m of [...page.items].reverse()) this.put(m);
    if (!this.items.size) this.list.append(h('li', { class: 'muted', dataset: { empty: '1' } }, 'No messages yet.'));
    this.list.scrollTop = this.list.scrollHeight;
  }

  async older() {
    const page = await api.request('message.list', { task_id: this.taskId, session_id: this.sessionId, sort: 'desc', limit: PAGE, before: this.before });
    this.before = page.next_cursor || '';
    this.more.hidden = !this.before;
    for (const m of page.items) {
      if (this.items.has(m.id)) continue;
      const el = render(m);
      this.items.set(m.id, el);
      this.list.prepend(el);
    }
  }

  // put adds a message, or replaces the one with the same id.
  put(m) {
    if (m.session_id && m.session_id !== this.sessionId) return;
    const empty = this.list.querySelector('[data-empty]');
    if (empty) empty.remove();
    const el = render(m);
    const cur = this.items.get(m.id);
    const atEnd = this.list.scrollHeight - this.list.scrollTop - this.list.clientHeight < 40;
    if (cur) cur.replaceWith(el);
    else this.list.append(el);
    this.items.set(m.id, el);
    if (atEnd) this.list.scrollTop = this.list.scrollHeight;
  }
}

function render(m) {
  const who = h('div', { class: 'who' }, h('strong', {}, author(m)), h('span', {}, stateLabel(m.type)), h('time', { datetime: m.created_at }, when(m.created_at)));
  const li = h('li', { class: `msg type-${cls(m.type)} author-${cls(m.author)}`, dataset: { id: m.id, type: m.type } }, who, body(m));
  return li;
}

function cls(s) { return String(s || '').replace(/[^a-z0-9_-]/gi, '_'); }

function author(m) {
  if (m.author === 'user' || m.author === 'operator') return 'You';
  if (m.author === 'agent' || m.author === 'assistant') return 'Agent';
  if (m.author && m.author.startsWith('task:')) return 'Another task';
  return m.author || 'System';
}

function body(m) {
  switch (m.type) {
    case 'thought':
    case 'thinking':
      return h('details', {}, h('summary', {}, 'Thought'), markdown(m.content));
    case 'tool_call':
    case 'tool_result':
      return toolCall(m);
    case 'status':
    case 'error':
      return h('p', {}, clip(m.content, MAX_TOOL_TEXT));
    default:
      return markdown(m.content);
  }
}

// toolCall shows a tool call: its name and status, and its input and
// output collapsed and bounded. The content is JSON when the runtime
// records structure ({name|title, status, input|raw_input, output|
// raw_output}); anything else is shown as bounded text.
function toolCall(m) {
  let data = null;
  try { data = JSON.parse(m.content); } catch { /* plain text */ }
  if (!data || typeof data !== 'object' || Array.isArray(data)) {
    return h('details', {}, h('summary', {}, m.type === 'tool_result' ? 'Tool result' : 'Tool call'), h('pre', {}, clip(m.content, MAX_TOOL_TEXT)));
  }
  const name = data.title || data.name || data.tool || 'Tool call';
  const status = data.status || (m.type === 'tool_result' ? 'completed' : '');
  const part = (label, v) => (v === undefined || v === null ? null
    : h('details', {}, h('summary', {}, label), h('pre', {}, clip(typeof v === 'string' ? v : JSON.stringify(v, null, 2), MAX_TOOL_TEXT))));
  return h('div', { class: 'tool' },
    h('p', {}, h('code', {}, String(name)), ' ', status ? h('span', { class: `badge tool-${cls(status)}` }, stateLabel(status)) : null),
    part('Input', data.input ?? data.raw_input ?? data.arguments),
    part('Output', data.output ?? data.raw_output ?? data.result));
}

export function emptyConversation(el) { fill(el, h('p', { class: 'muted' }, 'No agent session yet.')); }
