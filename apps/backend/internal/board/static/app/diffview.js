// One file's diff on the Changes tab (see changes.js), with the
// operator's line comments. Every text of the diff is put in the page as
// text (textContent), never parsed.
import { api } from './api.js';
import { h, fill, toast, when, clip, stateLabel } from './dom.js';
import { REVIEW_COMMENT_CREATE, REVIEW_COMMENT_UPDATE } from './contract.js';

// MAX_LINE bounds one diff line shown (the rest is cut, said so).
const MAX_LINE = 4000;

// DiffView is one file's diff as a table, unified (old and new line
// numbers, the line) or side by side (the old side's number and line, the
// new side's, a deleted run beside the added run that replaces it), and
// under a line the comments that end on it. A line's number is a button
// that opens the comment form. The view's split flag picks the layout
// (kept across files).
export class DiffView {
  constructor(view, repo, d, comments) {
    this.view = view;
    this.repo = repo;
    this.d = d;
    this.comments = comments;
    this.el = h('div', { class: 'diff', dataset: { path: d.path } });
    this.draw();
  }

  draw() {
    const d = this.d;
    this.placed = new Set();
    this.cols = this.view.split ? 4 : 3;
    const title = h('h3', { id: 'diff-title' }, d.old_path ? `${d.old_path} → ${d.path}` : d.path);
    const mode = d.binary || d.too_large ? null : h('button', { type: 'button', id: 'diff-mode', 'aria-pressed': String(!!this.view.split),
      onclick: () => { this.view.split = !this.view.split; this.draw(); } }, 'Side by side');
    fill(this.el, title, mode, this.body());
  }

  body() {
    const d = this.d;
    if (d.binary) return h('p', { class: 'notice', id: 'diff-binary' }, 'Binary file: its content is not shown.');
    if (d.too_large) return h('p', { class: 'notice', id: 'diff-too-large' }, 'File too large to show (over 1 MiB): its content is not sent.');
    const rows = this.rows();
    const rest = this.comments.filter((c) => !this.placed.has(c.id));
    return [d.truncated ? h('p', { class: 'notice', id: 'diff-truncated' }, 'The diff is cut here: it is longer than the board shows.') : null,
      rest.length ? h('div', { id: 'comments-elsewhere' }, h('h4', {}, 'Comments not on the current diff'), rest.map((c) => this.comment(c))) : null,
      h('table', { class: `diff-lines${this.view.split ? ' split' : ''}` }, h('colgroup', {}, this.view.split
        ? [h('col', { class: 'num' }), h('col'), h('col', { class: 'num' }), h('col')]
        : [h('col', { class: 'num' }), h('col', { class: 'num' }), h('col')]), h('tbody', {}, rows))];
  }

  // entries parses the patch: hunk headers, and context, added and
  // deleted lines with their old and new numbers.
  entries() {
    const out = [];
    let oldN = 0;
    let newN = 0;
    let inHunk = false;
    for (const line of (this.d.patch || '').split('\n')) {
      const m = /^@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@/.exec(line);
      if (m) {
        oldN = Number(m[1]); newN = Number(m[2]); inHunk = true;
        out.push({ hunk: line });
        continue;
      }
      if (!inHunk || !line || !' +-'.includes(line[0])) continue;
      const kind = line[0] === '+' ? 'add' : line[0] === '-' ? 'del' : 'ctx';
      const o = kind === 'add' ? null : oldN;
      const n = kind === 'del' ? null : newN;
      if (o !== null) oldN += 1;
      if (n !== null) newN += 1;
      out.push({ kind, o, n, text: line });
    }
    return out;
  }

  // rows turns the entries into table rows, each comment after the line
  // it ends on.
  rows() {
    const entries = this.entries();
    if (this.view.split) return this.splitRows(entries);
    return entries.flatMap((e) => (e.hunk ? [this.hunkRow(e.hunk)] : this.line(e.kind, e.o, e.n, e.text)));
  }

  hunkRow(text) { return h('tr', { class: 'hunk' }, h('td', { colspan: this.cols }, clip(text, MAX_LINE))); }

  // splitRows pairs each run of deleted lines with the run of added lines
  // that follows it; context lines sit on both sides.
  splitRows(entries) {
    const out = [];
    let dels = [];
    let adds = [];
    const flush = () => {
      for (let i = 0; i < Math.max(dels.length, adds.length); i += 1) out.push(...this.pair(dels[i], adds[i]));
      dels = []; adds = [];
    };
    for (const e of entries) {
      if (e.hunk) { flush(); out.push(this.hunkRow(e.hunk)); } else if (e.kind === 'del') { if (adds.length) flush(); dels.push(e); } else if (e.kind === 'add') adds.push(e); else { flush(); out.push(...this.pair(e, e)); }
    }
    flush();
    return out;
  }

  // pair is one side-by-side row: l on the old side (a deleted or context
  // line), r on the new side (an added or context line); either may be
  // missing. Deleted lines take comments on the old side, the others on
  // the new side, as in the unified layout.
  pair(l, r) {
    const row = h('tr', { class: 'line split' });
    const cell = (e, side) => {
      if (!e) return [h('td', { class: 'num' }), h('td', { class: 'text none' })];
      const num = side === 'old' ? e.o : e.n;
      const takes = side === 'old' ? e.kind === 'del' : e.kind !== 'del';
      return [h('td', { class: 'num', dataset: takes ? { side, line: String(num) } : {} }, takes ? this.numButton(side, num) : String(num)),
        h('td', { class: `text ${e.kind}` }, h('code', {}, clip(e.text, MAX_LINE)))];
    };
    row.append(...cell(l, 'old'), ...cell(r, 'new'));
    const at = (side, num) => (c) => c.side === side && c.end_line === num && !this.placed.has(c.id);
    const here = [...(l && l.kind === 'del' ? this.comments.filter(at('old', l.o)) : []),
      ...(r && r.kind !== 'del' ? this.comments.filter(at('new', r.n)) : [])];
    here.forEach((c) => this.placed.add(c.id));
    return [row, ...here.map((c) => h('tr', { class: 'comment-row' }, h('td', { colspan: this.cols }, this.comment(c))))];
  }

  // numButton is a line's number, which opens the comment form under its
  // row.
  numButton(side, num, label = String(num)) {
    return h('button', { type: 'button', class: 'link line-comment', title: 'Comment on this line', 'aria-label': `Comment on ${side} line ${num}`,
      onclick: (ev) => this.lineClicked(ev.currentTarget.closest('tr'), side, num, ev.shiftKey) }, label);
  }

  line(kind, o, n, text) {
    const side = kind === 'del' ? 'old' : 'new';
    const num = side === 'old' ? o : n;
    const row = h('tr', { class: `line ${kind}`, dataset: { side, line: String(num) } },
      h('td', { class: 'num' }, o === null ? '' : String(o)),
      h('td', { class: 'num' }, this.numButton(side, num, n === null ? '−' : String(n))),
      h('td', { class: 'text' }, h('code', {}, clip(text, MAX_LINE))));
    const here = this.comments.filter((c) => c.side === side && c.end_line === num && !this.placed.has(c.id));
    here.forEach((c) => this.placed.add(c.id));
    return [row, ...here.map((c) => h('tr', { class: 'comment-row' }, h('td', { colspan: this.cols }, this.comment(c))))];
  }

  comment(c) {
    const lines = c.start_line === c.end_line ? `line ${c.start_line}` : `lines ${c.start_line}–${c.end_line}`;
    // An outdated comment can be resolved; reopened, it would be found
    // outdated again.
    const next = c.state === 'resolved' ? 'open' : 'resolved';
    const toggle = h('button', { type: 'button', class: 'comment-state', onclick: () => this.setState(c, next) }, next === 'resolved' ? 'Resolve' : 'Reopen');
    return h('div', { class: `review-comment state-${c.state}`, dataset: { id: c.id, state: c.state } },
      h('p', { class: 'hint' }, h('span', { class: `badge comment-${c.state}` }, stateLabel(c.state)), ` ${c.side === 'old' ? 'old ' : ''}${lines} · ${c.author} · ${when(c.created_at)}`),
      h('p', { class: 'comment-body' }, c.body), toggle);
  }

  async setState(c, state) {
    try {
      await api.request(REVIEW_COMMENT_UPDATE, { id: c.id, state });
      await Promise.all([this.view.showDiff(this.repo, this.view.file.change), this.view.drawReview()]);
    } catch (e) { toast(e.message, 'error'); }
  }

  // lineClicked opens the comment form on a line; with Shift, on the
  // lines from the open form's first line to this one (same side).
  lineClicked(row, side, num, shift) {
    const p = this.pending;
    if (shift && p && p.side === side && num > p.start && this.el.querySelector('.comment-form-row')) this.openForm(row, side, p.start, num);
    else this.openForm(row, side, num, num);
  }

  // openForm shows the comment form under the last line (one at a time).
  openForm(row, side, line, end) {
    this.el.querySelector('.comment-form-row')?.remove();
    this.pending = { side, start: line };
    const what = end === line ? `${side} line ${line}` : `${side} lines ${line}–${end}`;
    const body = h('textarea', { name: 'body', rows: 3, 'aria-label': `Comment on ${what}` });
    const err = h('p', { class: 'form-error', role: 'alert', hidden: true });
    const f = h('form', { class: 'comment-form', novalidate: true }, h('p', { class: 'hint' }, `Comment on ${what}. Shift-select a later line's number for a range.`), body, err,
      h('div', { class: 'actions' }, h('button', { type: 'submit', class: 'primary' }, 'Comment'),
        h('button', { type: 'button', onclick: () => { f.closest('tr').remove(); this.view.formClosed(); } }, 'Cancel')));
    f.addEventListener('submit', async (ev) => {
      ev.preventDefault();
      try {
        await api.request(REVIEW_COMMENT_CREATE, { task_id: this.view.task.id, repository_id: this.repo.repository_id, path: this.d.path,
          ...(this.d.old_path ? { old_path: this.d.old_path } : {}), start_line: line, end_line: end, side, body: body.value });
        toast('Comment added');
        this.view.diffStale = false;
        await Promise.all([this.view.showDiff(this.repo, this.view.file.change), this.view.drawReview()]);
      } catch (e) { err.textContent = e.message; err.hidden = false; }
    });
    row.after(h('tr', { class: 'comment-form-row' }, h('td', { colspan: this.cols }, f)));
    body.focus();
  }
}
