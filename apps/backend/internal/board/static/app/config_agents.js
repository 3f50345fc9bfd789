// Settings › Agents: every agent type with whether it is installed on the
// backend's machine (agent.detect: version, or the command that installs
// it) and the models and modes its sessions offered; agent profiles
// (create, edit, delete) and each profile's MCP servers. Secret values
// come back masked and are kept when left unchanged.
import { api } from './api.js';
import { h, toast } from './dom.js';
import { form } from './form.js';
import { reloadOn } from './config.js';
import { scopeBadge } from './context.js';
import {
  AGENT_DETECT, AGENT_LIST, AGENT_PROFILE_CREATE, AGENT_PROFILE_DELETE, AGENT_PROFILE_LIST, AGENT_PROFILE_UPDATE, MCP_CONFIG_GET,
  MCP_CONFIG_UPDATE
} from './contract.js';

export async function renderAgents(el) {
  const [agents, profiles] = await Promise.all([api.listAll(AGENT_LIST), api.listAll(AGENT_PROFILE_LIST)]);
  el.append(h('h2', {}, 'New agent profile'), form({
    fields: [
      { name: 'agent_id', label: 'Agent', type: 'select', options: [{ value: '', label: 'Choose an agent' }, ...agents.map((a) => ({ value: a.id, label: a.display_name || a.name }))] },
      { name: 'name', label: 'Name' },
      { name: 'model', label: 'Model', help: 'Empty: the agent\'s default model. The models an agent\'s sessions offered are listed with it below; one it does not offer fails the launch.' },
      { name: 'auto_approve', label: 'Approve the agent\'s permission requests automatically', type: 'checkbox' },
      { name: 'user_question', label: 'The agent may ask you questions', type: 'checkbox', value: true },
    ],
    submitLabel: 'Create profile',
    submit: (v) => api.request(AGENT_PROFILE_CREATE, v),
    onDone: () => { toast('Profile created'); window.dispatchEvent(new HashChangeEvent('hashchange')); },
  }));
  // The new profile's model field suggests the chosen agent's models.
  const create = el.querySelector('form');
  create?.querySelector('[name=agent_id]')?.addEventListener('change', (ev) => {
    const a = agents.find((x) => x.id === ev.target.value);
    const list = a && el.querySelector(`section[data-agent="${CSS.escape(a.name)}"]`)?.dataset.models;
    const model = create.querySelector('input[name=model]');
    if (list) model.setAttribute('list', list); else model.removeAttribute('list');
  });
  const refresh = h('button', { type: 'button', id: 'agents-detect-refresh', onclick: () => detect(el, true) }, 'Detect installed agents again');
  el.append(h('p', { class: 'actions' }, refresh));
  for (const a of agents) {
    const mine = profiles.filter((p) => p.agent_id === a.id);
    el.append(h('section', { class: 'panel', 'aria-label': a.display_name || a.name, dataset: { agent: a.name } }, h('h2', {}, a.display_name || a.name),
      h('p', { class: 'hint' }, a.supports_mcp ? 'Supports MCP.' : 'Does not support MCP.'),
      h('div', { class: 'agent-detect' }, h('p', { class: 'muted' }, 'Detecting…')),
      mine.length ? mine.map(profileRow) : h('p', { class: 'muted' }, 'No profiles.')));
  }
  detect(el, false);
  return reloadOn(api, []);
}

// DETECT_TIMEOUT_MS: a refresh probes every agent type (each bounded).
const DETECT_TIMEOUT_MS = 300000;

// detect fills each agent's section with its detection, without holding
// up the page (a first detection probes every type).
async function detect(el, refresh) {
  let items;
  try {
    items = [];
    let cursor = '';
    for (let i = 0; i < 20; i += 1) {
      const page = await api.request(AGENT_DETECT, { refresh: refresh && i === 0, ...(cursor ? { cursor } : {}) }, DETECT_TIMEOUT_MS);
      items.push(...(page.items || []));
      if (!page.next_cursor) break;
      cursor = page.next_cursor;
    }
  } catch (e) {
    for (const box of el.querySelectorAll('.agent-detect')) box.replaceChildren(h('p', { class: 'muted' }, e.message));
    return;
  }
  for (const d of items) {
    const section = el.querySelector(`section[data-agent="${CSS.escape(d.name)}"]`);
    if (!section) continue;
    section.querySelector('.agent-detect').replaceChildren(...detection(d));
    offerModels(el, section, d);
  }
  if (refresh) toast('Agents detected');
}

// offerModels makes the models the agent's sessions offered the
// suggestions of its profiles' model fields (a datalist; any name may
// still be typed, and one the agent does not offer fails the launch).
function offerModels(el, section, d) {
  if (!d.models || !d.models.length) return;
  const id = `models-${d.name}`;
  el.querySelector(`datalist#${CSS.escape(id)}`)?.remove();
  el.append(h('datalist', { id }, d.models.map((m) => h('option', { value: m.id }, m.name || m.id))));
  for (const input of section.querySelectorAll('input[name=model]')) input.setAttribute('list', id);
  section.dataset.models = id;
}

function detection(d) {
  const out = [];
  if (d.status === 'installed') {
    out.push(h('p', {}, h('span', { class: 'badge', dataset: { status: d.status } }, 'Installed'), d.version ? ` version ${d.version}` : ''));
  } else if (d.status === 'not_installed') {
    out.push(h('p', {}, h('span', { class: 'badge', dataset: { status: d.status } }, 'Not installed'), d.detail ? ` ${d.detail}.` : ''),
      h('p', { class: 'hint' }, 'Install it with: ', h('code', { class: 'install' }, d.install)));
  } else {
    out.push(h('p', { class: 'muted' }, 'Not detected yet.'));
  }
  if (d.model_env && d.model_env.length) out.push(h('p', { class: 'hint' }, 'Model API variables: ', d.model_env.join(', ')));
  if (d.models && d.models.length) out.push(h('p', { class: 'hint models' }, 'Models offered: ', d.models.map((m) => m.id).join(', ')));
  if (d.modes && d.modes.length) out.push(h('p', { class: 'hint modes' }, 'Modes offered: ', d.modes.join(', ')));
  return out;
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
