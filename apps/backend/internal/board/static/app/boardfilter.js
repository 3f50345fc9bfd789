// The board's search and filters: text in the title, state, agent profile
// and "show archived", kept in the page's URL so that a reload keeps them.
// The board holds every task of its workflow (no per-card request), so the
// text, state and profile filters hide cards in the page; showing archived
// tasks reloads the board with them (task.list include_archived).
import { h, stateLabel } from './dom.js';
import { profileOptions } from './taskform.js';
import { TASK_STATES } from './contract.js';

// NONE is the agent filter's value for tasks with no profile of their
// own, their step's or their workflow's: they start with the default.
const NONE = 'none';

export class BoardFilter {
  constructor(params) {
    this.params = params;
    this.text = params.get('q') || '';
    this.state = params.get('state') || '';
    this.agent = params.get('agent') || '';
    this.showArchived = params.get('archived') === '1';
    this.profiles = [];
  }

  // options reads the agent profiles the filter offers (the board reads
  // them with its tasks).
  async options() { this.profiles = (await profileOptions()).slice(1); }

  // use sets the board the filter works on.
  use(wsId, wf, steps) {
    this.wsId = wsId;
    this.wf = wf;
    this.stepProfile = new Map(steps.map((s) => [s.id, s.agent_profile_id || '']));
  }

  // profileOf is the agent profile a task's next agent starts with: its
  // step's, else its own, else its workflow's; '' is the default.
  profileOf(t) {
    return this.stepProfile.get(t.workflow_step_id) || t.agent_profile_id || (this.wf && this.wf.agent_profile_id) || '';
  }

  active() { return !!(this.text || this.state || this.agent); }

  matches(t) {
    if (this.text && !t.title.toLowerCase().includes(this.text.toLowerCase())) return false;
    if (this.state && t.state !== this.state) return false;
    if (this.agent && (this.profileOf(t) || NONE) !== this.agent) return false;
    return true;
  }

  // controls returns the filter's form; apply() is called after a change
  // that hides cards; "show archived" reloads the board with its new URL.
  controls(apply) {
    const changed = () => { this.keep(); apply(); };
    const text = h('input', { type: 'search', id: 'filter-text', value: this.text, placeholder: 'Title contains…', autocomplete: 'off',
      oninput: (e) => { this.text = e.target.value.trim(); changed(); } });
    const state = h('select', { id: 'filter-state', onchange: (e) => { this.state = e.target.value; changed(); } },
      h('option', { value: '' }, 'Any state'), TASK_STATES.map((s) => h('option', { value: s, selected: s === this.state }, stateLabel(s))));
    const agent = h('select', { id: 'filter-agent', onchange: (e) => { this.agent = e.target.value; changed(); } },
      h('option', { value: '' }, 'Any agent profile'),
      this.profiles.map((p) => h('option', { value: p.value, selected: p.value === this.agent }, p.label)),
      h('option', { value: NONE, selected: this.agent === NONE }, 'The default profile (none chosen)'));
    const archived = h('input', { type: 'checkbox', id: 'show-archived', checked: this.showArchived,
      onchange: (e) => { this.showArchived = e.target.checked; location.hash = this.hash(); } });
    this.count = h('p', { class: 'hint', id: 'filter-count', 'aria-live': 'polite' });
    return h('form', { class: 'toolbar filters', role: 'search', id: 'board-filters', onsubmit: (e) => e.preventDefault() },
      h('div', { class: 'field' }, h('label', { for: 'filter-text' }, 'Search'), text),
      h('div', { class: 'field' }, h('label', { for: 'filter-state' }, 'State'), state),
      h('div', { class: 'field' }, h('label', { for: 'filter-agent' }, 'Agent profile'), agent),
      h('div', { class: 'field check' }, archived, h('label', { for: 'show-archived' }, 'Show archived')),
      this.count);
  }

  // show hides the cards the filter leaves out and says how many match.
  show(cards) {
    let shown = 0;
    const all = !this.active();
    for (const card of cards) {
      const hide = !all && !this.matches(card.task);
      if (card.hidden !== hide) card.hidden = hide;
      if (!hide) shown += 1;
    }
    if (this.count) this.count.textContent = this.active() ? `${shown} of ${cards.length} tasks match` : '';
  }

  // hash is the board's route with the filter in it.
  hash() {
    const p = new URLSearchParams();
    if (this.wsId) p.set('ws', this.wsId);
    if (this.wf) p.set('wf', this.wf.id);
    if (this.text) p.set('q', this.text);
    if (this.state) p.set('state', this.state);
    if (this.agent) p.set('agent', this.agent);
    if (this.showArchived) p.set('archived', '1');
    return `#/?${p}`;
  }

  // keep puts the filter in the URL without a new history entry or a
  // redraw of the board.
  keep() { history.replaceState(null, '', this.hash()); }
}
