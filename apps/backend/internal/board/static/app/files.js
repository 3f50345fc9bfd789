// A task's Files tab: its working directory as a tree, each directory
// read when opened (a page at a time, as task.files.list serves it), and
// a read-only viewer of one file (task.files.read: text up to its bound;
// a binary file is reported, not shown). Links, FIFOs and devices are
// listed as what they are and never opened. Every name and line is put in
// the page as text (textContent), never parsed.
import { api } from './api.js';
import { h, fill, toast } from './dom.js';
import { TASK_FILES_LIST, TASK_FILES_READ } from './contract.js';

const PAGE = 200;
const KIND_LABEL = { symlink: 'link (not followed)', other: 'special file (not opened)' };

export class FilesView {
  constructor(task) {
    this.task = task;
    this.tree = h('div', { class: 'files-tree', id: 'files-tree', role: 'tree', 'aria-label': 'Working directory' });
    this.viewer = h('div', { class: 'file-view', id: 'file-view' }, h('p', { class: 'muted' }, 'Choose a file to view it.'));
    this.el = h('section', { class: 'panel', id: 'panel-files', 'aria-labelledby': 'files-title' },
      h('h2', { id: 'files-title' }, 'Files'),
      h('p', { class: 'hint' }, 'The task’s working directory, read-only.'),
      h('div', { class: 'grid2 files' }, this.tree, this.viewer));
  }

  // load reads the directory's top level afresh.
  async load() {
    const top = h('ul', { role: 'group' });
    fill(this.tree, top);
    await this.more(top, '', '');
  }

  // more appends a page of directory path's entries to list (and a "More"
  // button while entries remain).
  async more(list, path, cursor) {
    let page;
    try {
      page = await api.request(TASK_FILES_LIST, { task_id: this.task.id, path, limit: PAGE, ...(cursor ? { cursor } : {}) });
    } catch (e) {
      list.append(h('li', { class: 'form-error' }, e.message));
      return;
    }
    if (!page.items.length && !cursor) list.append(h('li', { class: 'muted' }, 'Empty directory.'));
    for (const e of page.items) list.append(this.entry(path, e));
    if (page.partial && !cursor) list.append(h('li', { class: 'hint' }, 'This directory is too large to list in full; only part of it is shown.'));
    if (page.next_cursor) {
      const li = h('li', {}, h('button', { type: 'button', class: 'link', onclick: async () => { li.remove(); await this.more(list, path, page.next_cursor); } }, 'More…'));
      list.append(li);
    }
  }

  entry(dir, e) {
    const path = dir ? `${dir}/${e.name}` : e.name;
    if (e.kind === 'dir') {
      const sub = h('ul', { role: 'group', hidden: true });
      const btn = h('button', { type: 'button', class: 'link', 'aria-expanded': 'false', dataset: { path }, onclick: async () => {
        const open = btn.getAttribute('aria-expanded') !== 'true';
        btn.setAttribute('aria-expanded', String(open));
        sub.hidden = !open;
        if (open && !sub.childElementCount) await this.more(sub, path, '');
      } }, `📁 ${e.name}`);
      return h('li', { role: 'treeitem' }, btn, sub);
    }
    if (e.kind === 'file') {
      return h('li', { role: 'treeitem' }, h('button', { type: 'button', class: 'link', dataset: { path }, onclick: () => this.show(path) }, e.name),
        h('span', { class: 'hint' }, ` ${size(e.size)}`));
    }
    return h('li', { role: 'treeitem' }, h('span', { dataset: { path } }, e.name), h('span', { class: 'hint' }, ` ${KIND_LABEL[e.kind] || e.kind}`));
  }

  async show(path) {
    fill(this.viewer, h('p', { class: 'muted' }, 'Loading…'));
    try {
      const f = await api.request(TASK_FILES_READ, { task_id: this.task.id, path });
      fill(this.viewer, h('h3', { id: 'file-path' }, path), h('p', { class: 'hint' }, size(f.size)),
        f.binary ? h('p', { class: 'muted', id: 'file-binary' }, 'Binary file: not shown.') : h('pre', { class: 'file-text', id: 'file-text' }, f.content));
    } catch (e) {
      fill(this.viewer, h('h3', {}, path), h('p', { class: 'form-error', id: 'file-error' }, e.message));
      toast(e.message, 'error');
    }
  }
}

function size(n) {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KiB`;
  return `${(n / 1024 / 1024).toFixed(1)} MiB`;
}
