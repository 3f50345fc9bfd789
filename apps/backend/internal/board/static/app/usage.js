// What agents reported they consumed (task.usage, workspace.usage): one
// line of tokens and cost, refreshed when a session's usage changes.
import { api } from './api.js';
import { h, fill } from './dom.js';
import { SESSION_USAGE_UPDATED } from './contract.js';

const num = (n) => Number(n || 0).toLocaleString('en-US');

// costText renders amounts per currency ("0.4200 USD"): four decimals
// under one unit, two above.
function costText(costs) {
  return (costs || []).map((c) => `${c.amount < 1 ? c.amount.toFixed(4) : c.amount.toFixed(2)}${c.currency ? ` ${c.currency}` : ''}`).join(' + ');
}

// usageText renders totals: tokens in, out, cached and the cost, or that
// no agent reported any.
export function usageText(u) {
  if (!u || !u.turns) return 'No usage reported yet.';
  const parts = [`${num(u.input_tokens)} tokens in`, `${num(u.output_tokens)} out`,
    `${num(u.cached_read_tokens)} cached read`];
  if (u.cached_write_tokens) parts.push(`${num(u.cached_write_tokens)} cached write`);
  if (u.thought_tokens) parts.push(`${num(u.thought_tokens)} thought`);
  const cost = costText(u.costs);
  parts.push(cost ? `cost ${cost}` : 'no cost reported');
  return parts.join(' · ');
}

// UsageLine is a line showing the sums action (task.usage or
// workspace.usage) returns for payload, read again whenever a session
// match accepts reports new usage (session.usage_updated).
export class UsageLine {
  constructor({ id, label, action, payload, match }) {
    this.label = label;
    this.action = action;
    this.payload = payload;
    this.el = h('p', { class: 'hint usage', id, role: 'status' });
    this.off = api.on(SESSION_USAGE_UPDATED, (s) => { if (s && match(s)) this.load(); });
  }

  async load() {
    try {
      fill(this.el, h('strong', {}, `${this.label}: `), usageText(await api.request(this.action, this.payload)));
    } catch (e) {
      fill(this.el, `${this.label}: ${e.message}`);
    }
  }

  close() { this.off(); }
}
