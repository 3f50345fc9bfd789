// The board's entry point: connection status, navigation and routing.
import { api } from './api.js';
import { fill, h } from './dom.js';
import { ctx, loadWorkspaces, useWorkspace } from './context.js';
import { renderBoard } from './board.js';
import { renderTask } from './task.js';
import { renderWaiting, watchCounts, KINDS } from './waiting.js';
import { renderConfig } from './config.js';
import { renderInbox, watchInbox } from './inbox.js';
import { watchCommandPanel } from './command.js';
import { renderApprovals, watchApprovals } from './approvals.js';

const main = document.getElementById('main');
let cleanup = () => {};
let generation = 0;

function parseRoute() {
  const raw = location.hash.replace(/^#/, '') || '/';
  const [path, query] = raw.split('?');
  const parts = path.split('/').filter(Boolean);
  return { parts, params: new URLSearchParams(query || '') };
}

async function route() {
  const gen = ++generation;
  cleanup();
  cleanup = () => {};
  delete main.dataset.ready;
  const { parts, params } = parseRoute();
  const view = parts[0] || 'board';
  for (const a of document.querySelectorAll('[data-nav]')) {
    if (a.dataset.nav === (view === 'task' ? 'board' : view)) a.setAttribute('aria-current', 'page');
    else a.removeAttribute('aria-current');
  }
  try {
    let done;
    if (view === 'task' && parts[1]) done = await renderTask(main, parts[1]);
    else if (KINDS[view]) done = await renderWaiting(main, view);
    else if (view === 'inbox') done = await renderInbox(main);
    else if (view === 'approvals') done = await renderApprovals(main);
    else if (view === 'config') done = await renderConfig(main, parts[1] || 'workflows', params);
    else done = await renderBoard(main, params);
    if (gen !== generation) { if (done) done(); return; }
    cleanup = done || (() => {});
    document.body.dataset.view = view;
    main.dataset.ready = '1';
  } catch (e) {
    if (gen !== generation) return;
    fill(main, h('h1', {}, 'Something went wrong'), h('p', { class: 'form-error', role: 'alert' }, e.message || String(e)),
      h('p', {}, h('a', { href: '#/' }, 'Back to the board')));
    main.dataset.ready = '1';
  }
}

function showConnection() {
  const el = document.getElementById('conn');
  api.on('connection', ({ state }) => {
    el.dataset.state = state;
    el.textContent = state === 'up' ? 'Live' : 'Reconnecting…';
  });
  // After a reconnect, notifications may have been missed: redraw.
  api.on('reconnected', () => route());
}

async function start() {
  showConnection();
  await api.connect();
  await loadWorkspaces();
  if (ctx.workspaceId) await useWorkspace(ctx.workspaceId);
  watchCounts();
  watchInbox();
  watchApprovals();
  watchCommandPanel();
  window.addEventListener('hashchange', route);
  await route();
}

start();
