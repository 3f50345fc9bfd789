// A task's artifacts: plan, documents, walkthrough, review findings and
// rich output (files, charts, metrics).
import { api } from './api.js';
import { h, fill, when, clip, stateLabel } from './dom.js';
import { markdown } from './md.js';
import { chart } from './charts.js';
import { ARTIFACT_LATEST, ARTIFACT_LIST, DOCUMENT_GET, DOCUMENT_LIST, MESSAGE_LIST, PLAN_GET } from './contract.js';

const MAX_FILE_TEXT = 65536;

async function optional(p) {
  try { return await p; } catch (e) { if (e.code === 'NOT_FOUND') return null; throw e; }
}

export async function planPanel(el, taskId) {
  const plan = await optional(api.request(PLAN_GET, { task_id: taskId }));
  if (!plan) {
    // No saved plan, but the agent may have shown its working plan (ACP)
    // in the conversation: say so rather than "no plan" beside it.
    const working = await api.request(MESSAGE_LIST, { task_id: taskId, message_types: ['plan'], sort: 'desc', limit: 1 });
    const m = working.items && working.items[0];
    const entries = m ? planEntries(m.content) : [];
    if (!entries.length) { fill(el, h('h2', {}, 'Plan'), h('p', { class: 'muted', id: 'plan-none' }, 'No plan yet.')); return; }
    fill(el, h('h2', {}, 'Plan'), h('p', { class: 'hint', id: 'plan-working' }, `The agent's working plan, from its conversation (${when(m.created_at)}); it has not saved a plan to the task.`),
      h('ol', {}, entries.map((e) => h('li', {}, String(e.content ?? ''), h('span', { class: 'muted' }, ` (${String(e.status || 'pending').replace(/_/g, ' ')})`)))));
    return;
  }
  fill(el, h('h2', {}, 'Plan'), h('p', { class: 'hint' }, `${plan.title || 'Plan'} · revision ${plan.revision} · ${when(plan.updated_at)}`), markdown(plan.content));
}

// planEntries reads the entries of a conversation plan message (JSON
// {entries: [{content, priority, status}]}; [] when it is not one).
function planEntries(content) {
  try {
    const v = JSON.parse(content);
    return v && Array.isArray(v.entries) ? v.entries.slice(0, 100) : [];
  } catch { return []; }
}

export async function documentsPanel(el, taskId) {
  const docs = await api.listAll(DOCUMENT_LIST, { task_id: taskId });
  if (!docs.length) { fill(el, h('h2', {}, 'Documents'), h('p', { class: 'muted' }, 'No documents.')); return; }
  fill(el, h('h2', {}, 'Documents'), docs.map((d) => {
    const body = h('div', {}, h('p', { class: 'muted' }, 'Loading…'));
    const det = h('details', {}, h('summary', {}, `${d.title || d.key} (${d.type}, revision ${d.revision})`), body);
    det.addEventListener('toggle', async () => {
      if (!det.open || det.dataset.loaded) return;
      det.dataset.loaded = '1';
      const full = await api.request(DOCUMENT_GET, { task_id: taskId, document_key: d.key });
      fill(body, d.type === 'markdown' || d.type === 'md' ? markdown(full.content) : h('pre', {}, clip(full.content, MAX_FILE_TEXT)));
    });
    return det;
  }));
}

export async function walkthroughPanel(el, taskId) {
  const a = await optional(api.request(ARTIFACT_LATEST, { task_id: taskId, kind: 'walkthrough' }));
  el.hidden = !a;
  if (!a) return;
  const w = a.data || {};
  fill(el, h('h2', {}, 'Walkthrough'), w.title ? h('p', {}, h('strong', {}, w.title)) : null,
    h('ol', {}, (w.steps || []).map((st) => h('li', {},
      h('p', {}, st.title ? h('strong', {}, `${st.title} `) : null, h('code', {}, `${st.repo ? `${st.repo}:` : ''}${st.file}:${st.line}${st.line_end ? `-${st.line_end}` : ''}`)),
      markdown(st.text)))));
}

const SEVERITY = { blocker: '⊗', major: '▲', minor: '●', nit: '·' };

export async function findingsPanel(el, taskId) {
  const a = await optional(api.request(ARTIFACT_LATEST, { task_id: taskId, kind: 'review_findings' }));
  el.hidden = !a;
  if (!a) return;
  const r = a.data || {};
  const findings = r.findings || [];
  fill(el, h('h2', {}, `Review findings (${findings.length})`), r.summary ? markdown(r.summary) : null,
    findings.length ? h('ul', { class: 'findings' }, findings.map((f) => h('li', {},
      h('p', {}, h('span', { class: `badge sev-${f.severity}` }, h('span', { 'aria-hidden': 'true' }, SEVERITY[f.severity] || '•'), stateLabel(f.severity)), ' ',
        h('strong', {}, f.title), f.category ? h('span', { class: 'muted' }, ` · ${f.category}`) : null),
      f.file ? h('p', {}, h('code', {}, `${f.file}${f.line ? `:${f.line}` : ''}`)) : null,
      markdown(f.body),
      f.suggestion ? h('details', {}, h('summary', {}, 'Suggested fix'), h('pre', {}, clip(f.suggestion, MAX_FILE_TEXT))) : null)))
      : h('p', {}, 'The review found nothing.'));
}

export async function richOutputPanel(el, taskId) {
  const items = (await api.request(ARTIFACT_LIST, { task_id: taskId, kind: 'rich_output', limit: 20 })).items || [];
  el.hidden = !items.length;
  if (!items.length) return;
  fill(el, h('h2', {}, 'Output'), items.map((a) => {
    const r = a.data || {};
    return h('section', { class: 'rich' }, h('h3', {}, r.title || 'Output'), r.description ? h('p', {}, r.description) : null, (r.blocks || []).map(block));
  }));
}

function block(b) {
  switch (b.type) {
    case 'file':
      return h('figure', {}, h('figcaption', {}, b.title ? h('strong', {}, `${b.title} `) : null, h('code', {}, b.path),
        b.repo ? h('span', { class: 'muted' }, ` · ${b.repo}`) : null, b.mime_type ? h('span', { class: 'muted' }, ` · ${b.mime_type}`) : null),
        b.caption ? h('p', { class: 'muted' }, b.caption) : null,
        b.binary ? h('p', { class: 'muted' }, `Binary file, ${(b.size || 0).toLocaleString()} bytes: not shown.`)
          : h('pre', {}, h('code', {}, clip(b.content || '', MAX_FILE_TEXT))),
        b.truncated ? h('p', { class: 'muted' }, `Showing the start of ${(b.size || 0).toLocaleString()} bytes.`) : null);
    case 'chart':
      return chart(b);
    case 'metrics':
      return h('dl', { class: 'metrics' }, (b.items || []).map((m) => h('div', {},
        h('dt', {}, m.label),
        h('dd', {}, m.value, m.detail ? h('span', { class: 'muted' }, ` (${m.detail})`) : null))));
    default:
      return null;
  }
}
