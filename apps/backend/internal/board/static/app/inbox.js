// The notification inbox: the unread count in the navigation, the inbox
// view (#/inbox) and, once the operator opts in, a browser notification
// (the Notification API) for each new entry. Everything is live over the
// WebSocket: notification.created and notification.read.
import { api } from './api.js';
import { h, fill, toast, when } from './dom.js';
import { ctx } from './context.js';
import { NOTIFICATION_CREATED, NOTIFICATION_LIST, NOTIFICATION_MARK_READ, NOTIFICATION_READ } from './contract.js';

const OPT_IN = 'kandev.browserNotifications';
const LABELS = {
  turn_finished: 'Turn finished', question_asked: 'Question', permission_needed: 'Permission', task_failed: 'Failed',
  pr_state_changed: 'Pull request',
};

const state = { unread: 0 };

function showCount() {
  const el = document.getElementById('inbox-count');
  if (!el) return;
  el.hidden = state.unread === 0;
  el.textContent = String(state.unread);
  el.setAttribute('aria-label', `${state.unread} unread`);
}

// browserOn says whether the operator opted in and the browser allows it.
export function browserOn() {
  return 'Notification' in window && Notification.permission === 'granted' && localStorage.getItem(OPT_IN) === '1';
}

function notifyBrowser(n) {
  if (!browserOn()) return;
  const shown = new Notification(n.title, { body: n.body || '', tag: n.id });
  shown.onclick = () => { window.focus(); location.hash = n.task_id ? `#/task/${n.task_id}` : '#/inbox'; };
  window.kandevShown = (window.kandevShown || 0) + 1; // counted for the browser tests
}

// watchInbox keeps the unread count live and shows browser notifications.
export function watchInbox() {
  const load = async () => {
    if (!ctx.workspaceId) return;
    const page = await api.request(NOTIFICATION_LIST, { workspace_id: ctx.workspaceId, unread_only: true, limit: 1 });
    state.unread = page.unread;
    showCount();
  };
  api.on(NOTIFICATION_CREATED, (n) => {
    if (n.workspace_id !== ctx.workspaceId) return;
    state.unread += 1;
    showCount();
    notifyBrowser(n);
  });
  api.on(NOTIFICATION_READ, (r) => { if (r.workspace_id === ctx.workspaceId) { state.unread = r.unread; showCount(); } });
  api.on('reconnected', load);
  api.on('workspace', load);
  return load();
}

function optInButton() {
  if (!('Notification' in window)) return h('p', { class: 'hint' }, 'This browser has no notifications.');
  const label = () => (browserOn() ? 'Turn off browser notifications' : 'Turn on browser notifications');
  const btn = h('button', { type: 'button', id: 'browser-notify' }, label());
  btn.addEventListener('click', async () => {
    if (browserOn()) localStorage.removeItem(OPT_IN);
    else if (await Notification.requestPermission() === 'granted') localStorage.setItem(OPT_IN, '1');
    else toast('The browser refused notifications for this page; allow them in its site settings.', 'error');
    btn.textContent = label();
  });
  return btn;
}

function entry(n, markRead) {
  const unread = !n.read_at;
  const li = h('li', { class: unread ? 'note unread' : 'note', dataset: { notification: n.id, kind: n.kind } },
    h('span', { class: 'badge' }, LABELS[n.kind] || n.kind),
    n.task_id ? h('a', { href: `#/task/${n.task_id}` }, n.title) : h('strong', {}, n.title),
    n.body ? h('p', { class: 'hint' }, n.body) : null,
    h('time', { datetime: n.created_at }, when(n.created_at)));
  if (unread) {
    li.append(h('button', { type: 'button', class: 'link', onclick: () => markRead([n.id]) }, 'Mark read'));
  }
  return li;
}

// renderInbox is #/inbox: the workspace's notifications, newest first, a
// page at a time.
export async function renderInbox(main) {
  const list = h('ul', { id: 'inbox', class: 'notes' });
  const more = h('button', { type: 'button', hidden: true }, 'Older notifications');
  const empty = h('p', { class: 'muted' }, 'Nothing yet: agents finishing turns, asking questions, waiting for permission or failing show up here.');
  const markRead = async (ids) => {
    try {
      await api.request(NOTIFICATION_MARK_READ, ids ? { workspace_id: ctx.workspaceId, ids } : { workspace_id: ctx.workspaceId, all: true });
    } catch (e) { toast(e.message, 'error'); }
  };
  let cursor = '';
  const page = async () => {
    const p = await api.request(NOTIFICATION_LIST, { workspace_id: ctx.workspaceId, ...(cursor ? { cursor } : {}) });
    p.items.forEach((n) => list.append(entry(n, markRead)));
    cursor = p.next_cursor || '';
    more.hidden = !cursor;
    empty.hidden = list.children.length > 0;
  };
  more.addEventListener('click', page);
  fill(main, h('h1', {}, 'Inbox'),
    h('div', { class: 'actions' }, h('button', { type: 'button', id: 'mark-all-read', onclick: () => markRead(null) }, 'Mark all read'), optInButton(),
      h('a', { href: '#/config/notifications' }, 'Notification settings')),
    empty, list, more);
  const off = [
    api.on(NOTIFICATION_CREATED, (n) => { if (n.workspace_id === ctx.workspaceId) { list.prepend(entry(n, markRead)); empty.hidden = true; } }),
    api.on(NOTIFICATION_READ, (r) => {
      if (r.workspace_id !== ctx.workspaceId) return;
      for (const li of list.querySelectorAll('li.unread')) {
        if (r.all || (r.ids || []).includes(li.dataset.notification)) { li.classList.remove('unread'); li.querySelector('button')?.remove(); }
      }
    }),
  ];
  await page();
  return () => off.forEach((f) => f());
}
