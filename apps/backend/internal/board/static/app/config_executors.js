// Settings › Executors: executor profiles (create, edit, delete).
import { api } from './api.js';
import { h, toast } from './dom.js';
import { form } from './form.js';
import { reloadOn } from './config.js';
import { scopeBadge } from './context.js';
import {
  EXECUTOR_LIST, EXECUTOR_PROFILE_CREATE, EXECUTOR_PROFILE_DELETE, EXECUTOR_PROFILE_LIST, EXECUTOR_PROFILE_UPDATE
} from './contract.js';

const POLICIES = ['inherit', 'enabled', 'disabled', 'restricted'].map((p) => ({ value: p, label: p }));

function fields(p) {
  return [
    { name: 'name', label: 'Name', value: p.name },
    { name: 'mcp_policy', label: 'MCP policy', type: 'select', value: p.mcp_policy || 'inherit', options: POLICIES },
    { name: 'config', label: 'Settings (JSON)', type: 'json', rows: 4, value: p.config || {} },
    { name: 'prepare_script', label: 'Prepare script', type: 'textarea', rows: 3, value: p.prepare_script, help: 'Runs before the agent starts.' },
    { name: 'cleanup_script', label: 'Clean-up script', type: 'textarea', rows: 3, value: p.cleanup_script, help: 'Runs after the session ends.' },
  ];
}

export async function renderExecutors(el) {
  const [executors, profiles] = await Promise.all([api.listAll(EXECUTOR_LIST), api.listAll(EXECUTOR_PROFILE_LIST)]);
  const again = () => window.dispatchEvent(new HashChangeEvent('hashchange'));
  el.append(h('h2', {}, 'New executor profile'), form({
    fields: [{ name: 'executor_id', label: 'Executor', type: 'select', options: [{ value: '', label: 'Choose an executor' }, ...executors.map((x) => ({ value: x.id, label: x.name }))] }, ...fields({})],
    submitLabel: 'Create profile',
    submit: (v) => api.request(EXECUTOR_PROFILE_CREATE, v),
    onDone: () => { toast('Profile created'); again(); },
  }));
  for (const x of executors) {
    const mine = profiles.filter((p) => p.executor_id === x.id);
    el.append(h('section', { class: 'panel', 'aria-label': x.name }, h('h2', {}, x.name), x.description ? h('p', { class: 'hint' }, x.description) : null,
      mine.map((p) => h('div', { class: 'step-row', dataset: { profile: p.id } },
        h('div', { class: 'actions' }, h('strong', {}, p.name), p.is_default ? h('span', { class: 'badge' }, 'Default') : null, h('span', { class: 'badge' }, `MCP ${p.mcp_policy}`), scopeBadge(h, p)),
        h('details', { class: 'edit' }, h('summary', {}, `Edit ${p.name}`), form({
          fields: fields(p),
          submit: (v) => api.request(EXECUTOR_PROFILE_UPDATE, { profile_id: p.id, ...v }),
          onDone: () => toast('Profile saved'),
          extra: [h('button', { type: 'button', class: 'danger', onclick: async () => {
            if (!window.confirm(`Delete the profile “${p.name}”?`)) return;
            try { await api.request(EXECUTOR_PROFILE_DELETE, { profile_id: p.id }); toast('Profile deleted'); again(); } catch (e) { toast(e.message, 'error'); }
          } }, 'Delete profile')],
        }))))));
  }
  return reloadOn(api, []);
}
