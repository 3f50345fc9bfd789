// Settings: workflows and steps, workspaces and repositories, agent profiles and their MCP servers,
// executor profiles. Every form submits through the same actions as every
// other transport, so the same validation and errors apply.
import { h, fill } from './dom.js';
import { renderWorkflows } from './config_workflows.js';
import { renderAgents } from './config_agents.js';
import { renderExecutors } from './config_executors.js';
import { renderNotifications } from './config_notifications.js';
import { renderWorkspaces } from './config_workspaces.js';

const PAGES = { workflows: ['Workflows', renderWorkflows], workspaces: ['Workspaces', renderWorkspaces], agents: ['Agents', renderAgents], executors: ['Executors', renderExecutors],
  notifications: ['Notifications', renderNotifications] };

export async function renderConfig(main, page, params) {
  const [, render] = PAGES[page] || PAGES.workflows;
  const body = h('div', { id: 'config' });
  fill(main, h('h1', {}, 'Settings'),
    h('nav', { class: 'subnav', 'aria-label': 'Settings' }, Object.entries(PAGES).map(([k, [label]]) => h('a', { href: `#/config/${k}`, 'aria-current': k === page ? 'page' : null }, label))),
    body);
  return render(body, params);
}

// reloadOn re-renders a settings page when one of events arrives.
export function reloadOn(api, events) {
  const again = () => window.dispatchEvent(new HashChangeEvent('hashchange'));
  const off = events.map((ev) => api.on(ev, again));
  return () => off.forEach((f) => f());
}
