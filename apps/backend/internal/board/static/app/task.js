// A task's page: prompt, state, subtasks and dependencies, each session's
// live conversation and controls, plan, documents and other artifacts,
// and the questions and permission requests its agents wait on.
import { api } from './api.js';
import { h, fill, badge, taskBadge, sessionBadge, when, toast, stateLabel, clip, older } from './dom.js';
import { useWorkspace } from './context.js';
import { markdown } from './md.js';
import { form } from './form.js';
import { Conversation } from './conversation.js';
import { planPanel, documentsPanel, walkthroughPanel, findingsPanel, richOutputPanel } from './artifacts.js';
import { waitingList } from './waiting.js';
import { ChangesView } from './changes.js';
import { FilesView } from './files.js';
import { TerminalView } from './terminal.js';
import { prList } from './ship.js';
import { profileOptions, executorOptions } from './taskform.js';
import { taskActions } from './taskedit.js';
import { UsageLine } from './usage.js';
import { decisionForm } from './approvals.js';
import {
  ARTIFACT_CREATED, ARTIFACT_DELETED, DOCUMENT_UPDATED, PLAN_DELETED, PLAN_UPDATED, SESSION_CREATED, SESSION_LIST,
  SESSION_MESSAGE, SESSION_MODES, SESSION_MODE_CHANGED, SESSION_SET_MODE, SESSION_SPAWN, SESSION_UPDATED,
  TASK_CREATED, TASK_DELETED, TASK_DEPENDENCY_ADDED, TASK_DEPENDENCY_LIST, TASK_GET, TASK_LIST, TASK_MESSAGE,
  TASK_MOVED, TASK_PR_UPDATED, TASK_STOP, TASK_UPDATED, TASK_USAGE, WORKFLOW_STEP_LIST, REPOSITORY_CLONE_PROGRESS,
  TASK_COMMENT_ADD
} from './contract.js';

// ACTIVE are the states of a session whose agent may be at work.
const ACTIVE = new Set(['CREATED', 'QUEUED', 'STARTING', 'RUNNING']);

export async function renderTask(main, taskId) {
  const page = new TaskPage(main, await api.request(TASK_GET, { id: taskId }));
  await page.load();
  return () => page.close();
}

class TaskPage {
  constructor(main, task) {
    this.main = main;
    this.task = task;
    this.off = [];
    this.panels = Object.fromEntries(['plan', 'walkthrough', 'findings', 'output', 'documents', 'relations', 'waiting', 'office']
      .map((k) => [k, h('section', { class: 'panel', id: `panel-${k}` })]));
    this.head = h('div');
    // The clone of a repository known only by its remote URL, made for
    // this task's worktree (repository.clone_progress).
    this.cloneLine = h('p', { class: 'hint', id: 'task-clone', role: 'status', hidden: true });
    this.sessionBox = h('section', { class: 'panel', id: 'panel-conversation', 'aria-labelledby': 'conv-title' });
    // The tokens and cost its agents reported, summed over its sessions.
    this.usage = new UsageLine({ id: 'task-usage', label: 'Agent usage', action: TASK_USAGE, payload: { task_id: task.id },
      match: (s) => s.task_id === task.id });
  }

  async load() {
    await useWorkspace(this.task.workspace_id);
    const [steps, sessions, profiles, executors] = await Promise.all([
      api.listAll(WORKFLOW_STEP_LIST, { workflow_id: this.task.workflow_id }),
      api.listAll(SESSION_LIST, { task_id: this.task.id }),
      profileOptions(), executorOptions()]);
    this.steps = steps;
    this.sessions = sessions;
    // A spawn naming no profile starts with the task's: its step's, else
    // the one chosen at its creation, else its workflow's, else the default.
    this.profiles = profiles;
    this.executors = executors;
    this.drawHead();
    const controls = h('section', { class: 'panel', id: 'panel-controls' }, h('h2', {}, 'Agent'), this.spawnForm(), this.stopButton());
    this.overview = h('div', { class: 'grid2', id: 'task-overview' },
      h('div', {}, this.sessionBox, this.panels.plan, this.panels.walkthrough, this.panels.findings, this.panels.output, this.panels.documents),
      h('div', {}, this.panels.waiting, this.panels.office, controls, this.panels.relations));
    this.drawOffice();
    this.changes = new ChangesView(this.task);
    this.changes.el.hidden = true;
    this.files = new FilesView(this.task);
    this.files.el.hidden = true;
    this.terminal = new TerminalView(this.task);
    this.terminal.el.hidden = true;
    this.pageTabs = h('div', { class: 'sessions', role: 'group', 'aria-label': 'Task views', id: 'task-tabs' });
    this.drawPageTabs('overview');
    fill(this.main, this.head, this.usage.el, this.cloneLine, this.pageTabs, this.overview, this.changes.el, this.files.el, this.terminal.el);
    this.listen();
    await Promise.all([this.selectSession(''), this.drawArtifacts(), this.drawRelations(), this.drawWaiting(), this.usage.load()]);
  }

  // drawPageTabs switches between the task's overview and its Changes,
  // Files and Terminal tabs; Changes and Files are read afresh each time
  // they are opened, the terminal keeps its shell while the page lives.
  drawPageTabs(which) {
    const tab = (key, text) => h('button', { type: 'button', id: `tab-${key}`, 'aria-pressed': String(key === which), onclick: () => this.showPage(key) }, text);
    fill(this.pageTabs, tab('overview', 'Task'), tab('changes', 'Changes'), tab('files', 'Files'), tab('terminal', 'Terminal'));
  }

  async showPage(which) {
    this.drawPageTabs(which);
    this.overview.hidden = which !== 'overview';
    this.changes.el.hidden = which !== 'changes';
    this.files.el.hidden = which !== 'files';
    this.terminal.el.hidden = which !== 'terminal';
    const views = { changes: this.changes, files: this.files };
    try {
      if (views[which]) await views[which].load();
      if (which === 'terminal') await this.terminal.open();
    } catch (e) { toast(e.message, 'error'); }
  }

  drawHead() {
    const t = this.task;
    const step = this.steps.find((s) => s.id === t.workflow_step_id);
    fill(this.head, h('p', {}, h('a', { href: `#/?ws=${encodeURIComponent(t.workspace_id)}&wf=${encodeURIComponent(t.workflow_id)}` }, '← Board')),
      h('div', { class: 'task-head' }, h('h1', { id: 'task-title' }, t.title), taskBadge(t.state), step ? h('span', { class: 'badge' }, `Step: ${step.name}`) : null,
        t.queued_for_step_id ? h('span', { class: 'badge queued', id: 'task-queued' }, h('span', { 'aria-hidden': 'true' }, '⇢'),
          `Waiting for room in ${(this.steps.find((s) => s.id === t.queued_for_step_id) || { name: 'a full step' }).name} since ${when(t.queued_at)}`) : null,
        t.archived_at ? h('span', { class: 'badge', id: 'task-archived' }, 'Archived') : null),
      taskActions(this), this.profileLine(),
      h('section', { class: 'panel', 'aria-label': 'Prompt' }, h('h2', {}, 'Prompt'), t.description ? markdown(t.description) : h('p', { class: 'muted' }, 'No prompt.'),
        h('p', { class: 'hint' }, `Created ${when(t.created_at)} · updated ${when(t.updated_at)}`)));
  }

  // profileLine names the profiles kept with the task, if any.
  profileLine() {
    const t = this.task;
    const name = (opts, v) => (opts.find((o) => o.value === v) || { label: 'a deleted profile' }).label;
    const parts = [t.agent_profile_id ? `Agent profile: ${name(this.profiles, t.agent_profile_id)}` : '',
      t.executor_profile_id ? `Executor profile: ${name(this.executors, t.executor_profile_id)}` : ''].filter(Boolean);
    return parts.length ? h('p', { class: 'hint', id: 'task-profiles' }, parts.join(' · ')) : null;
  }

  // retask redraws the page's head for a changed task.
  retask(t) {
    if (t.id !== this.task.id || older(t, this.task)) return;
    this.task = t;
    this.drawHead();
    this.drawOffice();
  }

  // drawOffice shows the comment form and, when the task's step lists the
  // operator among its participants, the operator's decision on it.
  drawOffice() {
    const step = (this.steps || []).find((s) => s.id === this.task.workflow_step_id);
    const me = step && step.approval ? step.approval.participants.find((p) => p.operator) : null;
    const comment = form({
      fields: [{ name: 'body', label: 'Comment', type: 'textarea', rows: 2, help: 'Shown in the conversation; the step\'s on_comment automations decide who is woken.' }],
      submitLabel: 'Comment',
      submit: (v) => api.request(TASK_COMMENT_ADD, { task_id: this.task.id, body: v.body }),
      onDone: () => { comment.reset(); toast('Comment added'); },
    });
    comment.id = 'comment-form';
    const decide = me ? decisionForm(this.task.id, me.role, step.name) : null;
    if (decide) {
      decide.id = 'decide-form';
      decide.querySelector('button.reject').id = 'reject';
    }
    fill(this.panels.office, h('h2', {}, 'Office'), comment, decide);
  }

  // selectSession shows one session's conversation, or with '' the whole
  // task's (every session and the workflow's records). The controls act
  // on the selected session, else on the newest.
  async selectSession(sessionId) {
    if (this.sessionTopic) await api.unsubscribe(this.sessionTopic);
    this.sessionTopic = null;
    this.view = sessionId;
    this.current = this.sessions.find((s) => s.id === sessionId) || this.sessions[0] || null;
    this.tabs = h('div', { class: 'sessions', role: 'group', 'aria-label': 'Sessions' });
    this.drawTabs();
    const label = (id) => { const i = this.sessions.findIndex((s) => s.id === id); return i < 0 || this.sessions.length < 2 ? '' : `Session ${this.sessions.length - i}`; };
    if (this.conversation) this.conversation.close();
    this.conversation = new Conversation(this.task.id, sessionId, label);
    fill(this.sessionBox, h('h2', { id: 'conv-title' }, 'Conversation'), this.tabs, this.current ? this.sessionInfo() : null,
      this.current ? null : h('p', { class: 'muted', id: 'no-session' }, 'No agent session yet.'), this.conversation.el,
      this.current ? this.composer() : null);
    if (this.current) {
      this.sessionTopic = `session:${this.current.id}`;
      await api.subscribe(this.sessionTopic);
    }
    await this.conversation.load();
  }

  drawTabs() {
    const tab = (id, text) => h('button', { type: 'button', 'aria-pressed': String(id === this.view), dataset: { session: id }, onclick: () => this.selectSession(id) }, text);
    this.tabs.hidden = this.sessions.length < 2;
    fill(this.tabs, tab('', 'All sessions'), this.sessions.map((s, i) => tab(s.id, `Session ${this.sessions.length - i} · ${stateLabel(s.state)}`)));
  }

  sessionInfo() {
    const s = this.current;
    const mode = h('select', { id: 'session-mode', onchange: async (e) => {
      try {
        const out = await api.request(SESSION_SET_MODE, { id: s.id, mode: e.target.value });
        s.mcp_mode = out.mcp_mode;
        toast(`Mode switched to ${out.mcp_mode}`);
      } catch (err) { e.target.value = s.mcp_mode; toast(err.message, 'error'); }
    } }, SESSION_MODES.map((m) => h('option', { value: m, selected: m === s.mcp_mode }, m)));
    const ended = s.state === 'FAILED' && s.exit_code !== undefined && s.exit_code !== null ? `Exit code ${s.exit_code}` : '';
    return h('div', { id: 'session-info' }, h('div', { class: 'actions' }, sessionBadge(s),
      h('span', { class: 'badge' }, s.mcp_attached ? '⚡ Tools connected' : 'Tools not connected'),
      h('span', { class: 'badge', title: s.managed ? 'Kandev launched this agent' : 'An agent you connect yourself' }, s.managed ? 'Run by Kandev' : 'Connected by hand'),
      ended ? h('span', { class: 'badge state-FAILED' }, ended) : null,
      h('label', { for: 'session-mode' }, 'Tool mode'), mode),
    s.error ? h('p', { class: 'form-error', id: 'session-error' }, clip(s.error, 2000)) : null);
  }

  composer() {
    let mode = 'queued';
    const f = form({
      fields: [{ name: 'message', label: 'Message the agent', type: 'textarea', rows: 3, help: 'Send waits for the agent\'s turn to end; Interrupt stops the current turn first.' }],
      submitLabel: 'Send',
      extra: [h('button', { type: 'submit', id: 'interrupt', onclick: () => { mode = 'interrupt'; } }, 'Interrupt and send')],
      submit: async (v) => {
        const delivery = mode;
        mode = 'queued';
        return api.request(TASK_MESSAGE, { task_id: this.task.id, prompt: v.message, delivery_mode: delivery });
      },
      onDone: () => { f.reset(); toast('Message sent'); },
    });
    f.querySelector('button.primary').addEventListener('click', () => { mode = 'queued'; });
    f.id = 'composer';
    return f;
  }

  spawnForm() {
    const f = form({
      fields: [
        { name: 'agent_profile_id', label: 'Agent profile', type: 'select', options: [{ value: '', label: 'The task’s profile' }, ...this.profiles.slice(1)] },
        { name: 'executor_profile_id', label: 'Executor profile', type: 'select', options: [{ value: '', label: 'The task’s executor profile' }, ...this.executors.slice(1)] },
        { name: 'prompt', label: 'Prompt (optional)', type: 'textarea', rows: 2, help: 'Empty: the task\'s prompt.' },
      ],
      submitLabel: 'Start agent',
      submit: (v) => api.request(SESSION_SPAWN, { ...v, task_id: this.task.id }),
      onDone: (res) => { toast('Agent session started'); this.addSession(res.session); },
    });
    f.id = 'spawn';
    return f;
  }

  stopButton() {
    return h('p', {}, h('button', { type: 'button', class: 'danger', id: 'stop-agent', onclick: async () => {
      try {
        const res = await api.request(TASK_STOP, { task_id: this.task.id, reason: 'stopped from the board' });
        toast(res.stopped_session_ids.length ? 'Agent stopped' : 'No agent was running');
      } catch (e) { toast(e.message, 'error'); }
    } }, 'Stop agent'));
  }

  // addSession adds a new session (and shows it) or redraws a changed one.
  addSession(s) {
    const i = this.sessions.findIndex((x) => x.id === s.id);
    if (i < 0) {
      this.sessions.unshift(s);
      this.selectSession(this.sessions.length > 1 ? s.id : '');
      return;
    }
    this.sessions[i] = s;
    this.drawTabs();
    if (this.current && this.current.id === s.id) {
      this.current = s;
      const info = this.sessionBox.querySelector('#session-info');
      if (info) info.replaceWith(this.sessionInfo());
    }
  }

  async drawArtifacts() {
    const p = this.panels;
    await Promise.all([planPanel(p.plan, this.task.id), walkthroughPanel(p.walkthrough, this.task.id), findingsPanel(p.findings, this.task.id),
      richOutputPanel(p.output, this.task.id), documentsPanel(p.documents, this.task.id)]);
  }

  async drawRelations() {
    const t = this.task;
    const [subtasks, blockers, blocked, parent] = await Promise.all([
      api.listAll(TASK_LIST, { workspace_id: t.workspace_id, parent_id: t.id }),
      api.listAll(TASK_DEPENDENCY_LIST, { task_id: t.id, direction: 'blockers' }),
      api.listAll(TASK_DEPENDENCY_LIST, { task_id: t.id, direction: 'blocked' }),
      t.parent_id ? api.request(TASK_GET, { id: t.parent_id }).catch(() => null) : null]);
    const links = (items, none) => (items.length ? h('ul', {}, items.map((x) => h('li', {}, h('a', { href: `#/task/${encodeURIComponent(x.id)}` }, x.title), ' ', badge(x.state))))
      : h('p', { class: 'muted' }, none));
    fill(this.panels.relations, h('h2', {}, 'Related tasks'),
      t.parent_id ? h('p', {}, h('a', { href: `#/task/${encodeURIComponent(t.parent_id)}`, id: 'parent-link' },
        parent ? `↑ Subtask of “${parent.title}”` : '↑ Parent task')) : null,
      h('h3', {}, 'Subtasks'), links(subtasks, 'None.'),
      h('h3', {}, 'Blocked by'), links(blockers, 'Nothing.'),
      h('h3', {}, 'Blocks'), links(blocked, 'Nothing.'));
  }

  // drawWaiting lists the questions and permission requests of this
  // task's agents (hidden when there are none).
  async drawWaiting() {
    const panel = this.panels.waiting;
    const p = h('div', { id: 'task-permissions' });
    const q = h('div', { id: 'task-questions' });
    fill(panel, h('h2', {}, 'Waiting on you'), p, q);
    // Answered cards stay (with their notice) until the page is left.
    const shown = () => { panel.hidden = !panel.querySelector('article'); };
    shown();
    const stops = await Promise.all([waitingList(p, 'permissions', { taskId: this.task.id, emptyText: '', onChange: shown }),
      waitingList(q, 'questions', { taskId: this.task.id, emptyText: '', onChange: shown })]);
    this.off.push(...stops);
  }

  listen() {
    const on = (ev, fn) => this.off.push(api.on(ev, fn));
    const mine = (x) => x && (x.task_id === this.task.id || x.id === this.task.id);
    on(TASK_UPDATED, (t) => this.retask(t));
    on(TASK_MOVED, (t) => this.retask(t));
    on(TASK_DELETED, (t) => { if (t.id === this.task.id) fill(this.main, h('h1', {}, 'Task deleted'), h('p', {}, h('a', { href: '#/' }, 'Back to the board'))); });
    on(SESSION_CREATED, (s) => { if (mine(s)) this.addSession(s); });
    on(SESSION_UPDATED, (s) => { if (mine(s)) { this.turnEnded(s); this.addSession(s); } });
    on(SESSION_MODE_CHANGED, (p) => {
      if (!this.current || p.session_id !== this.current.id) return;
      this.current.mcp_mode = p.mode;
      const sel = document.getElementById('session-mode');
      if (sel) sel.value = p.mode;
    });
    on(PLAN_UPDATED, (p) => { if (mine(p)) planPanel(this.panels.plan, this.task.id); });
    on(PLAN_DELETED, (p) => { if (mine(p)) planPanel(this.panels.plan, this.task.id); });
    on(SESSION_MESSAGE, (ev) => { if (ev && ev.message && ev.message.type === 'plan' && mine(ev.message)) planPanel(this.panels.plan, this.task.id); });
    on(DOCUMENT_UPDATED, (d) => { if (mine(d)) documentsPanel(this.panels.documents, this.task.id); });
    const art = (a) => { if (mine(a)) this.drawArtifacts(); };
    on(ARTIFACT_CREATED, art);
    on(ARTIFACT_DELETED, art);
    on(TASK_PR_UPDATED, (p) => { if (mine(p) && !this.changes.el.hidden) prList(this.changes.prs, this.task.id).catch((e) => toast(e.message, 'error')); });
    on(REPOSITORY_CLONE_PROGRESS, (p) => { if (mine(p)) this.drawClone(p); });
    on(TASK_CREATED, (t) => { if (t.parent_id === this.task.id) this.drawRelations(); });
    on(TASK_DEPENDENCY_ADDED, (d) => { if (d.task_id === this.task.id || d.depends_on_task_id === this.task.id) this.drawRelations(); });
  }

  // turnEnded refreshes an open Changes tab when one of the task's agent
  // sessions stops being at work (its turn ended, or it waits on the
  // operator): the agent may have changed the worktree.
  turnEnded(s) {
    const before = (this.sessions.find((x) => x.id === s.id) || {}).state;
    if (before && before !== s.state && !ACTIVE.has(s.state) && !this.changes.el.hidden) this.changes.refreshSoon();
  }

  // drawClone shows a repository clone's state: its phase and percent,
  // then done or the (safe) reason it failed.
  drawClone(p) {
    const phase = p.phase ? `: ${p.phase} ${p.percent}%` : '…';
    const text = { cloning: `Cloning a repository for this task's worktree${phase}`, done: 'Repository cloned for this task.' }[p.state]
      || `The repository's clone failed: ${p.error || 'see the session'}`;
    this.cloneLine.textContent = text;
    this.cloneLine.hidden = false;
  }

  close() {
    this.usage.close();
    this.changes.close();
    this.off.forEach((f) => f());
    this.terminal.close();
    if (this.conversation) this.conversation.close();
    if (this.sessionTopic) api.unsubscribe(this.sessionTopic);
  }
}
