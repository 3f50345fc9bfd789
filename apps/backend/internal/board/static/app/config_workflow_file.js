// Workflow files: download a workflow as its portable document
// (workflow.export, the format workflow.import reads on every transport)
// and upload such a file (JSON or YAML) to create its workflows in the
// current workspace. A file over the backend's bound is refused here,
// before it is read; the backend checks the bound and the whole document
// again and creates nothing from a document it refuses.
import { api } from './api.js';
import { h, toast } from './dom.js';
import { ctx } from './context.js';
import { field, clearErrors, showError } from './form.js';
import { MAX_WORKFLOW_DOC_BYTES, WORKFLOW_EXPORT, WORKFLOW_IMPORT } from './contract.js';

// fileName is a download name made of a workflow's name.
export function fileName(name) {
  const slug = name.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-+|-+$/g, '').slice(0, 60);
  return `${slug || 'workflow'}.kandev-workflow.json`;
}

// exportButton downloads workflow w's document as a JSON file.
export function exportButton(w) {
  return h('button', { type: 'button', class: 'export', 'aria-label': `Export ${w.name} as a file`, onclick: async () => {
    try {
      const doc = await api.request(WORKFLOW_EXPORT, { workflow_id: w.id });
      const url = URL.createObjectURL(new Blob([`${JSON.stringify(doc, null, 2)}\n`], { type: 'application/json' }));
      const a = h('a', { href: url, download: fileName(w.name), hidden: true });
      document.body.append(a);
      a.click();
      a.remove();
      setTimeout(() => URL.revokeObjectURL(url), 60000);
      toast(`Exported “${w.name}”`);
    } catch (e) { toast(e.message, 'error'); }
  } }, 'Export file');
}

// importForm uploads a workflow document file to workflow.import. Its
// refusals (the document's field paths start with "document") are shown
// next to the file control.
export function importForm() {
  const kib = Math.floor(MAX_WORKFLOW_DOC_BYTES / 1024);
  const file = field({ name: 'document', label: 'Workflow file', type: 'file',
    help: `A document exported from Kandev (JSON or YAML), at most ${kib} KiB. Workflows whose name the workspace has are skipped.` });
  const input = file.querySelector('input');
  input.accept = '.json,.yaml,.yml,application/json,application/yaml,text/yaml';
  const status = h('p', { class: 'hint', role: 'status', id: 'import-status' });
  const button = h('button', { type: 'submit', class: 'primary' }, 'Import file');
  const el = h('form', { novalidate: true, id: 'workflow-import' }, file, h('div', { class: 'form-error', role: 'alert', hidden: true }),
    h('div', { class: 'actions' }, button), status);
  el.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    clearErrors(el);
    status.textContent = '';
    button.disabled = true;
    try {
      const res = await upload(input.files[0]);
      status.textContent = summary(res);
      if (res.created.length) toast(`Imported ${res.created.map((n) => `“${n}”`).join(', ')}`);
      else toast(status.textContent, 'error');
    } catch (e) {
      showError(el, e.field ? e : Object.assign(e, { field: 'document' }));
    } finally {
      button.disabled = false;
    }
  });
  return el;
}

function refusal(message) {
  const e = new Error(message);
  e.field = 'document';
  return e;
}

async function upload(f) {
  if (!f) throw refusal('document: choose a file first');
  if (f.size > MAX_WORKFLOW_DOC_BYTES) throw refusal(`document: the file is larger than ${MAX_WORKFLOW_DOC_BYTES} bytes; nothing was imported`);
  if (f.size === 0) throw refusal('document: the file is empty');
  return api.request(WORKFLOW_IMPORT, { workspace_id: ctx.workspaceId, document: await f.text() });
}

// summary says what an import did: created, skipped and what it could
// not carry over.
function summary(res) {
  const parts = [];
  if (res.created.length) parts.push(`Created ${res.created.map((n) => `“${n}”`).join(', ')}.`);
  if (res.skipped.length) parts.push(`Skipped ${res.skipped.map((n) => `“${n}”`).join(', ')}: the workspace has a workflow of that name (rename it in the file, or rename yours).`);
  if (res.warnings.length) parts.push(`Not carried over: ${res.warnings.join('; ')}.`);
  return parts.join(' ') || 'The file holds no workflow.';
}
