// Subtasks on the board: a parent's card lists its subtasks on this board
// (collapsed, with their count, each a link with its state and step); a
// subtask's card says whose subtask it is and links there, so a subtask
// never looks like an unrelated top-level card. Built from the tasks the
// board already holds: no request per card.
import { h, badge } from './dom.js';

// Family indexes the board's cards by parent.
export class Family {
  constructor(cards, stepName) {
    this.cards = cards; // task id → card (card.task)
    this.stepName = stepName; // step id → its name
    this.open = new Set(); // parents whose list was left open
    this.index();
  }

  index() {
    this.children = new Map();
    for (const card of this.cards.values()) {
      const p = card.task.parent_id;
      if (!p) continue;
      if (!this.children.has(p)) this.children.set(p, []);
      this.children.get(p).push(card.task);
    }
  }

  // draw (re)draws a card's family block: its parent link and its list of
  // subtasks.
  draw(card) {
    const t = card.task;
    const old = card.querySelector(':scope > .family');
    if (old) old.remove();
    card.classList.toggle('subtask', !!t.parent_id);
    const kids = (this.children.get(t.id) || []).slice().sort((a, b) => a.title.localeCompare(b.title));
    if (!t.parent_id && !kids.length) return;
    const parentCard = t.parent_id && this.cards.get(t.parent_id);
    const up = t.parent_id ? h('a', { class: 'parent-link', href: `#/task/${encodeURIComponent(t.parent_id)}`, draggable: 'false' },
      h('span', { 'aria-hidden': 'true' }, '↳ '), parentCard ? `Subtask of “${parentCard.task.title}”` : 'Subtask of another task') : null;
    let list = null;
    if (kids.length) {
      list = h('details', { class: 'subtasks', open: this.open.has(t.id) },
        h('summary', {}, `Subtasks (${kids.length})`),
        h('ul', {}, kids.map((k) => h('li', {}, h('a', { href: `#/task/${encodeURIComponent(k.id)}`, draggable: 'false' }, k.title), ' ',
          badge(k.state), this.stepName(k.workflow_step_id) ? h('span', { class: 'muted' }, ` · ${this.stepName(k.workflow_step_id)}`) : null))));
      list.addEventListener('toggle', () => { if (list.open) this.open.add(t.id); else this.open.delete(t.id); });
    }
    card.append(h('div', { class: 'family' }, up, list));
  }

  // redraw re-indexes and redraws the cards of the given task ids, of
  // their parents and of their subtasks (which show their titles).
  redraw(...ids) {
    this.index();
    const seen = new Set();
    for (const id of ids) {
      const card = this.cards.get(id);
      const kids = (this.children.get(id) || []).map((k) => k.id);
      for (const x of [id, card && card.task.parent_id, ...kids]) {
        if (!x || seen.has(x)) continue;
        seen.add(x);
        if (this.cards.has(x)) this.draw(this.cards.get(x));
      }
    }
  }

  drawAll() {
    this.index();
    for (const card of this.cards.values()) this.draw(card);
  }
}
