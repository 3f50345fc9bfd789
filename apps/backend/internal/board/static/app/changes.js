// A task's Changes tab: for each repository it works in, the changed
// files (a page at a time, as task.changes.list serves them), one file's
// diff (diffview.js) with the operator's line comments, the commits on the task
// branch, and "Send review". Every text from the diff — paths, lines,
// commit subjects — is put in the page as text (textContent), never parsed.
// When the task's agent ends a turn the tab reads its changes again
// (refreshSoon: debounced, one read at a time), keeping the scroll
// position, an open comment form and the open commit lists.
import { api } from './api.js';
import { h, fill, toast, when, clip, stateLabel } from './dom.js';
import { shipPanel, prList } from './ship.js';
import { DiffView } from './diffview.js';
import {
  REVIEW_COMMENT_LIST, REVIEW_SEND,
  TASK_CHANGES_COMMITS, TASK_CHANGES_DIFF, TASK_CHANGES_LIST, TASK_CHANGES_SUMMARY
} from './contract.js';

// FILES_PAGE and COMMITS_PAGE are the page sizes asked for.
const FILES_PAGE = 100;
const COMMITS_PAGE = 50;
// REFRESH_DEBOUNCE_MS gathers a burst of turn ends into one read.
const REFRESH_DEBOUNCE_MS = 400;

export class ChangesView {
  constructor(task) {
    this.task = task;
    this.el = h('section', { class: 'panel', id: 'panel-changes', 'aria-labelledby': 'changes-title' });
    this.reviewBox = h('div', { id: 'review-send', class: 'actions' });
    this.repos = h('div', { id: 'changes-repos' });
    this.diffBox = h('div', { id: 'diff-view' });
    this.prs = h('div', { id: 'task-prs', hidden: true });
    // One ship panel per repository, kept across reloads (its open forms
    // and status survive a commit's refresh); the repositories whose
    // commit list is open.
    this.ship = new Map();
    this.commitsOpen = new Set();
  }

  // load reads the tab afresh (one read at a time: a call during a read
  // makes one more after it).
  async load() {
    if (!this.drawn) {
      fill(this.el, h('h2', { id: 'changes-title' }, 'Changes'), this.reviewBox, this.prs, this.repos, this.diffBox);
      this.drawn = true;
    }
    if (this.reading) { this.again = true; return this.reading; }
    this.reading = (async () => {
      try {
        do { this.again = false; await this.redraw(); } while (this.again);
        performance.mark('changes-rendered'); // make bench times the tab to here
      } finally { this.reading = null; }
    })();
    return this.reading;
  }

  // refreshSoon reloads the tab shortly (the agent's turn ended): a burst
  // of calls makes one read.
  refreshSoon() {
    clearTimeout(this.soon);
    this.soon = setTimeout(() => this.load().catch((e) => toast(e.message, 'error')), REFRESH_DEBOUNCE_MS);
  }

  close() { clearTimeout(this.soon); }

  // redraw reads the repositories' changes and their first pages of files
  // off screen, then swaps them in, keeping what the operator looks at
  // (the comment form, else the diff) where it was on screen. The file's
  // diff is read again unless a comment is being written on it; then it
  // is marked, and read again once the form closes.
  async redraw() {
    const [repos] = await Promise.all([api.listAll(TASK_CHANGES_SUMMARY, { task_id: this.task.id }), this.drawReview(),
      prList(this.prs, this.task.id).catch((e) => toast(e.message, 'error'))]);
    if (!repos.length) { fill(this.repos, h('p', { class: 'muted', id: 'changes-none' }, 'The task works in no repository.')); return; }
    const panels = repos.map((r) => this.repoPanel(r));
    const attach = await Promise.all(panels.map((p) => p.ready));
    const anchor = () => (this.diffBox.querySelector('.comment-form-row') || this.diffBox).getBoundingClientRect().top;
    const top = anchor();
    attach.forEach((f) => f());
    fill(this.repos, panels.map((p) => p.box));
    if (this.file && this.diffBox.querySelector('.comment-form-row')) {
      this.diffStale = true;
      if (!this.diffBox.querySelector('#diff-stale')) {
        this.diffBox.querySelector('.diff')?.prepend(h('p', { class: 'notice', id: 'diff-stale', role: 'status' },
          'The agent ended a turn: this diff is read again once your comment is added or cancelled.'));
      }
    } else if (this.file) await this.showDiff(this.file.repo, this.file.change);
    window.scrollBy(0, anchor() - top);
  }

  // formClosed reads a diff that changed under an open comment form.
  formClosed() {
    if (this.diffStale && this.file) { this.diffStale = false; this.showDiff(this.file.repo, this.file.change); }
  }

  // drawReview shows the open comments' count and the Send review button.
  async drawReview(note) {
    const open = await api.listAll(REVIEW_COMMENT_LIST, { task_id: this.task.id, state: 'open' });
    const send = h('button', { type: 'button', class: 'primary', id: 'send-review', disabled: !open.length, onclick: () => this.sendReview(send) }, 'Send review');
    const refresh = h('button', { type: 'button', id: 'changes-refresh', onclick: () => this.load().catch((e) => toast(e.message, 'error')) }, 'Refresh');
    fill(this.reviewBox, send, refresh, h('span', { id: 'review-open' }, `${open.length} open comment${open.length === 1 ? '' : 's'}`),
      note ? h('span', { id: 'review-result', role: 'status' }, note) : null);
  }

  async sendReview(button) {
    button.disabled = true;
    try {
      const out = await api.request(REVIEW_SEND, { task_id: this.task.id });
      const note = `Sent ${out.sent.length} to the agent · ${out.remaining} remaining${out.outdated ? ` · ${out.outdated} outdated, not sent` : ''}`;
      toast('Review sent');
      await this.drawReview(note);
      if (this.file) await this.showDiff(this.file.repo, this.file.change);
    } catch (e) { toast(e.message, 'error'); button.disabled = false; }
  }

  // repoPanel is a repository's panel; ready settles, once its first page
  // of files is in, with what completes it (attach, at the swap).
  repoPanel(r) {
    const box = h('div', { class: 'repo-changes', dataset: { repo: r.repository_id } });
    const head = h('h3', {}, r.name || 'Repository', ' ', h('span', { class: 'muted' }, r.branch ? `${r.branch} against ${r.base_branch}` : ''));
    if (r.error) { fill(box, head, h('p', { class: 'muted repo-error' }, r.error)); return { box, ready: Promise.resolve(() => {}) }; }
    const files = h('ul', { class: 'files' });
    const more = h('p', {});
    const commits = h('details', { class: 'commits' }, h('summary', {}, 'Commits on the task branch'));
    fill(box, head, h('p', { class: 'hint' }, `${r.total} changed file${r.total === 1 ? '' : 's'} · `, h('span', { class: 'add' }, `+${r.additions}`), ' ',
      h('span', { class: 'del' }, `−${r.deletions}`)), files, more, commits);
    // The ship panel (on screen, in the panel being replaced) moves in
    // with the swap, not before: its controls stay usable meanwhile.
    const ready = this.filesPage(r, files, more, '').then(() => () => box.append(this.shipOf(r.repository_id)));
    commits.addEventListener('toggle', () => {
      if (commits.open) this.commitsOpen.add(r.repository_id); else this.commitsOpen.delete(r.repository_id);
      if (commits.open && !commits.dataset.loaded) { commits.dataset.loaded = '1'; this.commitsPage(r, commits, ''); }
    });
    if (this.commitsOpen.has(r.repository_id)) commits.open = true;
    return { box, ready };
  }

  shipOf(repositoryId) {
    if (!this.ship.has(repositoryId)) this.ship.set(repositoryId, shipPanel(this.task.id, repositoryId, () => this.load().catch((e) => toast(e.message, 'error'))));
    return this.ship.get(repositoryId);
  }

  // filesPage appends one page of the repository's changed files; a
  // "More files" button fetches the next.
  async filesPage(r, list, more, cursor) {
    fill(more);
    try {
      const page = await api.request(TASK_CHANGES_LIST, { task_id: this.task.id, repository_id: r.repository_id, limit: FILES_PAGE, ...(cursor ? { cursor } : {}) });
      list.append(...(page.items || []).map((c) => this.fileRow(r, c)));
      if (page.next_cursor) fill(more, h('button', { type: 'button', class: 'more-files', onclick: () => this.filesPage(r, list, more, page.next_cursor) }, 'More files'));
    } catch (e) { fill(more, h('span', { class: 'form-error' }, e.message)); }
  }

  fileRow(r, c) {
    const where = [c.staged && 'staged', c.unstaged && 'unstaged', c.untracked && 'untracked'].filter(Boolean).join(', ') || 'committed';
    const counts = c.binary ? 'binary' : c.too_large ? 'too large' : null;
    return h('li', { class: 'file', dataset: { path: c.path } },
      h('button', { type: 'button', class: 'link file-open', onclick: () => this.showDiff(r, c) }, c.old_path ? `${c.old_path} → ${c.path}` : c.path), ' ',
      h('span', { class: `badge change-${c.status}` }, stateLabel(c.status)), ' ', h('span', { class: 'muted' }, where), ' ',
      counts ? h('span', { class: 'muted' }, counts) : [h('span', { class: 'add' }, `+${c.additions}`), ' ', h('span', { class: 'del' }, `−${c.deletions}`)]);
  }

  async commitsPage(r, box, cursor) {
    box.querySelector('.more-commits')?.remove();
    try {
      const page = await api.request(TASK_CHANGES_COMMITS, { task_id: this.task.id, repository_id: r.repository_id, limit: COMMITS_PAGE, ...(cursor ? { cursor } : {}) });
      const items = page.items || [];
      if (!items.length && !cursor) box.append(h('p', { class: 'muted' }, 'No commits on the task branch yet.'));
      box.append(...items.map((c) => h('p', { class: 'commit' }, h('code', {}, c.sha.slice(0, 10)), ' ', clip(c.subject, 200), ' ',
        h('span', { class: 'muted' }, `${c.author_name} · ${when(c.committed_at)}`))));
      if (page.next_cursor) box.append(h('button', { type: 'button', class: 'more-commits', onclick: () => this.commitsPage(r, box, page.next_cursor) }, 'More commits'));
    } catch (e) { box.append(h('p', { class: 'form-error' }, e.message)); }
  }

  // showDiff reads one file's diff and its comments and draws them.
  // Only the newest call draws: an older answer arriving late is dropped;
  // the file shown stays until its new diff replaces it.
  async showDiff(r, c) {
    this.file = { repo: r, change: c };
    this.seq = (this.seq || 0) + 1;
    const seq = this.seq;
    const shown = this.diffBox.querySelector('.diff');
    if (!shown || shown.dataset.path !== c.path) fill(this.diffBox, h('p', { class: 'muted' }, 'Loading…'));
    try {
      const [d, comments] = await Promise.all([
        api.request(TASK_CHANGES_DIFF, { task_id: this.task.id, repository_id: r.repository_id, path: c.path, ...(c.old_path ? { old_path: c.old_path } : {}) }),
        api.listAll(REVIEW_COMMENT_LIST, { task_id: this.task.id, repository_id: r.repository_id, path: c.path })]);
      if (seq === this.seq) fill(this.diffBox, new DiffView(this, r, d, comments).el);
    } catch (e) { if (seq === this.seq) fill(this.diffBox, h('p', { class: 'form-error' }, e.message)); }
  }
}
