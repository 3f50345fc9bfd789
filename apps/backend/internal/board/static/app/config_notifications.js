// Settings › Notifications: which kinds the workspace's inbox records,
// the outgoing channels (Apprise URLs and signed webhooks: their URL and
// secret go to the server and are never shown again, only the scheme)
// and the delivery log.
import { api } from './api.js';
import { h, toast, when } from './dom.js';
import { form } from './form.js';
import { ctx } from './context.js';
import {
  CHANNEL_TYPES, NOTIFICATION_CHANNEL_CREATE, NOTIFICATION_CHANNEL_DELETE, NOTIFICATION_CHANNEL_LIST, NOTIFICATION_CHANNEL_UPDATE,
  NOTIFICATION_DELIVERY_LIST, NOTIFICATION_KINDS, NOTIFICATION_SETTINGS_GET, NOTIFICATION_SETTINGS_SET
} from './contract.js';

const again = () => window.dispatchEvent(new HashChangeEvent('hashchange'));

function settingsPanel(settings) {
  return h('section', { class: 'panel', 'aria-label': 'Inbox' }, h('h2', {}, 'Inbox'),
    h('p', { class: 'hint' }, 'The kinds of notification this workspace’s inbox records.'),
    settings.map((s) => {
      const box = h('input', { type: 'checkbox', id: `inbox-${s.kind}`, checked: s.inbox });
      box.addEventListener('change', async () => {
        try { await api.request(NOTIFICATION_SETTINGS_SET, { workspace_id: ctx.workspaceId, kind: s.kind, inbox: box.checked }); toast('Saved'); } catch (e) { toast(e.message, 'error'); box.checked = !box.checked; }
      });
      return h('div', { class: 'field check' }, box, h('label', { for: `inbox-${s.kind}` }, s.kind.replace(/_/g, ' ')));
    }));
}

function eventBoxes(selected) {
  return NOTIFICATION_KINDS.map((k) => ({ name: `event:${k}`, label: `Send ${k.replace(/_/g, ' ')}`, type: 'checkbox', value: selected.includes(k) }));
}

// channelValues turns the form's event:* checkboxes into events.
function channelValues(v) {
  const out = { events: [] };
  for (const [k, val] of Object.entries(v)) {
    if (k.startsWith('event:')) { if (val) out.events.push(k.slice(6)); } else if (val !== '') out[k] = val;
  }
  return out;
}

function channelRow(c) {
  return h('div', { class: 'step-row', dataset: { channel: c.id } },
    h('div', { class: 'actions' }, h('strong', {}, c.name), h('span', { class: 'badge' }, c.type), h('code', {}, c.url),
      c.has_secret ? h('span', { class: 'badge' }, 'signed') : null, c.enabled ? null : h('span', { class: 'badge' }, 'off'),
      h('span', { class: 'hint' }, c.events.join(', ') || 'no events')),
    h('details', { class: 'edit' }, h('summary', {}, `Edit ${c.name}`), form({
      fields: [{ name: 'name', label: 'Name', value: c.name }, { name: 'enabled', label: 'Enabled', type: 'checkbox', value: c.enabled },
        { name: 'url', label: 'New URL (leave empty to keep it)', type: 'password' },
        ...(c.type === 'webhook' ? [{ name: 'secret', label: 'New signing secret (leave empty to keep it)', type: 'password' }] : []),
        ...eventBoxes(c.events)],
      submit: (v) => api.request(NOTIFICATION_CHANNEL_UPDATE, { id: c.id, ...channelValues(v) }),
      onDone: () => { toast('Channel saved'); again(); },
      extra: [h('button', { type: 'button', class: 'danger', onclick: async () => {
        if (!window.confirm(`Delete the channel “${c.name}” and its delivery log?`)) return;
        try { await api.request(NOTIFICATION_CHANNEL_DELETE, { id: c.id }); toast('Channel deleted'); again(); } catch (e) { toast(e.message, 'error'); }
      } }, 'Delete channel')],
    })));
}

function deliveriesPanel(names) {
  const rows = h('tbody', { id: 'deliveries' });
  const more = h('button', { type: 'button', hidden: true }, 'Older deliveries');
  let cursor = '';
  const page = async () => {
    const p = await api.request(NOTIFICATION_DELIVERY_LIST, { workspace_id: ctx.workspaceId, ...(cursor ? { cursor } : {}) });
    p.items.forEach((d) => rows.append(h('tr', { dataset: { state: d.state } }, h('td', {}, when(d.created_at)), h('td', {}, names.get(d.channel_id) || d.channel_id),
      h('td', {}, d.kind), h('td', {}, d.state), h('td', {}, String(d.attempts)), h('td', {}, d.status ? String(d.status) : ''), h('td', {}, d.error || ''))));
    cursor = p.next_cursor || '';
    more.hidden = !cursor;
  };
  more.addEventListener('click', page);
  const panel = h('section', { class: 'panel', 'aria-label': 'Deliveries' }, h('h2', {}, 'Deliveries'),
    h('table', {}, h('thead', {}, h('tr', {}, ['When', 'Channel', 'Kind', 'State', 'Attempts', 'Status', 'Error'].map((c) => h('th', { scope: 'col' }, c)))), rows), more);
  return { panel, page };
}

export async function renderNotifications(el) {
  const ws = ctx.workspaceId;
  const [settings, channels] = await Promise.all([api.request(NOTIFICATION_SETTINGS_GET, { workspace_id: ws }),
    api.listAll(NOTIFICATION_CHANNEL_LIST, { workspace_id: ws })]);
  const deliveries = deliveriesPanel(new Map(channels.map((c) => [c.id, c.name])));
  el.append(settingsPanel(settings.settings),
    h('section', { class: 'panel', 'aria-label': 'Channels' }, h('h2', {}, 'Channels'),
      h('p', { class: 'hint' }, 'Apprise URLs (Slack, Discord, e-mail, ntfy… — see the Apprise docs) run through the apprise program on the backend’s machine; webhooks get a signed JSON POST. The URL and secret stay on the server.'),
      channels.map(channelRow),
      h('h3', {}, 'New channel'), form({
        fields: [{ name: 'name', label: 'Name' }, { name: 'type', label: 'Type', type: 'select', value: 'apprise', options: CHANNEL_TYPES.map((t) => ({ value: t, label: t })) },
          { name: 'url', label: 'URL', type: 'password', help: 'An Apprise URL (service://…) or the webhook’s http(s) URL.' },
          { name: 'secret', label: 'Signing secret (webhook)', type: 'password', help: 'At least 16 characters; the receiver checks X-Kandev-Signature with it.' },
          ...eventBoxes(NOTIFICATION_KINDS)],
        submitLabel: 'Add channel',
        submit: (v) => api.request(NOTIFICATION_CHANNEL_CREATE, { workspace_id: ws, ...channelValues(v) }),
        onDone: () => { toast('Channel added'); again(); },
      })),
    deliveries.panel);
  await deliveries.page();
  return () => {};
}
