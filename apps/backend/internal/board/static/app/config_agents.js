// Settings › Agents: agent profiles (create, edit, delete) and each
// profile's MCP servers. Secret values come back masked and are kept when
// left unchanged.
import { api } from './api.js';
import { h, toast } from './dom.js';
import { form } from './form.js';
import { reloadOn } from './config.js';
import { scopeBadge } from './context.js';
import {
  AGENT_LIST, AGENT_PROFILE_CREATE, AGENT_PROFILE_DELETE, AGENT_PROFILE_LIST, AGENT_PROFILE_UPDATE, MCP_CONFIG_GET,
  MCP_CONFIG_UPDATE
} from './contract.js';

export async function renderAgents(el) {
  const [agents, profiles] = await Promise.all([api.listAll(AGENT_LIST), api.listAll(AGENT_PROFILE_LIST)]);
  el.append(h('h2', {}, 'New agent profile'), form({
    fields: [
      { name: 'agent_id', label: 'Agent', type: 'select', options: [{ value: '', label: 'Choose an agent' }, ...agents.map((a) => ({ value: a.id, label: a.display_name || a.name }))] },
      { name: 'name', label: 'Name' },
      { name: 'model', label: 'Model', help: 'Empty: the agent\'s default model.' },
      { name: 'auto_approve', label: 'Approve the agent\'s permission requests automatically', type: 'checkbox' },
      { name: 'user_question', label: 'The agent may ask you questions', type: 'checkbox', value: true },
    ],
    submitLabel: 'Create profile',
    submit: (v) => api.request(AGENT_PROFILE_CREATE, v),
    onDone: () => { toast('Profile created'); window.dispatchEvent(new HashChangeEvent('hashchange')); },
  }));
  for (const a of agents) {
    const mine = profiles.filter((p) => p.agent_id === a.id);
    el.append(h('section', { class: 'panel', 'aria-label': a.display_name || a.name }, h('h2', {}, a.display_name || a.name),
      h('p', { class: 'hint' }, a.supports_mcp ? 'Supports MCP.' : 'Does not support MCP.'),
      mine.length ? mine.map(profileRow) : h('p', { class: 'muted' }, 'No profiles.')));
  }
  return reloadOn(api, []);
}

function profileRow(p) {
  const del = h('button', { type: 'button', class: 'danger', onclick: async () => {
    if (!window.confirm(`Delete the profile “${p.name}”?`)) return;
    try { await api.request(AGENT_PROFILE_DELETE, { profile_id: p.id }); toast('Profile deleted'); window.dispatchEvent(new HashChangeEvent('hashchange')); } catch (e) { toast(e.message, 'error'); }
  } }, 'Delete profile');
  const mcp = h('div', {}, h('p', { class: 'muted' }, 'Loading…'));
  const det = h('details', { class: 'edit' }, h('summary', {}, 'MCP servers'), mcp);
  det.addEventListener('toggle', () => { if (det.open && !det.dataset.loaded) { det.dataset.loaded = '1'; mcpForm(mcp, p); } });
  return h('div', { class: 'step-row', dataset: { profile: p.id } },
    h('div', { class: 'actions' }, h('strong', {}, p.name), p.is_default ? h('span', { class: 'badge' }, 'Default') : null, p.model ? h('span', { class: 'badge' }, p.model) : null, scopeBadge(h, p)),
    h('details', { class: 'edit' }, h('summary', {}, `Edit ${p.name}`), form({
      fields: [
        { name: 'name', label: 'Name', value: p.name },
        { name: 'model', label: 'Model', value: p.model },
        { name: 'auto_approve', label: 'Approve permission requests automatically', type: 'checkbox', value: p.auto_approve },
        { name: 'user_question', label: 'The agent may ask you questions', type: 'checkbox', value: p.user_question },
      ],
      submit: (v) => api.request(AGENT_PROFILE_UPDATE, { profile_id: p.id, ...v }),
      onDone: () => toast('Profile saved'),
      extra: [del],
    })),
    det);
}

async function mcpForm(el, p) {
  try {
    const cfg = await api.request(MCP_CONFIG_GET, { profile_id: p.id });
    el.replaceChildren(h('p', { class: 'hint' }, 'Servers as JSON: {"name": {"type": "stdio", "command": "…", "args": […], "env": {…}} or {"type": "http", "url": "…", "headers": {…}}}. ',
      'Secret env and header values are shown masked; leave a masked value as it is to keep it. ',
      'env may not set loader or interpreter variables (LD_*, DYLD_*, PATH, NODE_OPTIONS, PYTHONPATH, BASH_ENV, GIT_*, KANDEV_*…); headers may not hold line breaks or other control characters.'), form({
      fields: [
        { name: 'enabled', label: 'Give the agent these MCP servers', type: 'checkbox', value: cfg.enabled },
        { name: 'servers', label: 'Servers', type: 'json', rows: 8, value: cfg.servers || {} },
      ],
      submit: (v) => api.request(MCP_CONFIG_UPDATE, { profile_id: p.id, ...v }),
      onDone: () => toast('MCP servers saved'),
    }));
  } catch (e) {
    el.replaceChildren(h('p', { class: 'form-error', role: 'alert' }, e.message));
  }
}
