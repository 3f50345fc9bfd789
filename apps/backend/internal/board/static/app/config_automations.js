// The automations of a workflow step as a form: for each step event (when
// a task arrives, leaves, an agent turn starts or ends…) the automations
// run in order, each a type of the engine's closed set with its typed
// settings. Types, their settings and the events come from the table the
// workflow.step.* contracts are built from (AUTOMATION_TYPES in
// contract.js), so the form offers exactly what the backend accepts. Every
// control is named by its payload path (events.on_enter[0].config.prompt),
// so a refusal lands next to the control it names.
import { h, fill } from './dom.js';
import { field } from './form.js';
import { AUTOMATION_TYPES, MAX_STEP_ACTIONS, STEP_EVENT_KINDS, TASK_STATES } from './contract.js';

const EVENT_LABELS = {
  on_enter: 'When a task arrives on the step',
  on_exit: 'When a task leaves the step',
  on_turn_start: 'When an agent turn starts',
  on_turn_complete: 'When an agent turn ends',
  on_comment: 'When someone comments on it or its pull request',
  on_children_completed: 'When its last subtask ends',
  on_pr_merged: 'When its pull request is merged',
  on_agent_error: 'When one of its agents fails',
  on_approval_resolved: 'When the step\'s participants reach the quorum',
  on_budget_alert: 'When a budget covering it reaches an alert threshold',
  on_heartbeat: 'On a heartbeat (every heartbeat minutes on the step)',
};

const byName = new Map(AUTOMATION_TYPES.map((t) => [t.name, t]));

// automationEditor returns {el, value}: the editor of a step's events
// (st.events) and a function reading them back in the payload's shape.
// opts: {steps (the workflow's), agents, executors (profiles)}.
export function automationEditor(events, opts) {
  const lists = new Map();
  const el = h('div', { class: 'automations', dataset: { field: 'events' } },
    h('p', { class: 'hint' }, 'What Kandev does by itself on this step, in order, at each event.'),
    h('p', { class: 'field-error', hidden: true }));
  for (const kind of STEP_EVENT_KINDS) {
    const list = { kind, rows: [], box: h('div', { class: 'automation-list' }) };
    lists.set(kind, list);
    for (const a of (events || {})[kind] || []) list.rows.push({ ...a, config: { ...(a.config || {}) } });
    const add = h('button', { type: 'button', class: 'add-automation', 'aria-label': `Add an automation ${EVENT_LABELS[kind] || kind}`,
      onclick: () => { read(list); list.rows.push({ type: AUTOMATION_TYPES[0].name, config: {} }); draw(list, opts); } }, 'Add automation');
    el.append(h('fieldset', { class: 'event', dataset: { event: kind } },
      h('legend', {}, EVENT_LABELS[kind] || kind, ' ', h('code', {}, kind)), list.box, add));
    draw(list, opts);
  }
  const value = () => {
    const out = {};
    for (const list of lists.values()) {
      read(list);
      list.rows.forEach((a, i) => check(`events.${list.kind}[${i}]`, a));
      if (list.rows.length) out[list.kind] = list.rows.map(clean);
    }
    return out;
  };
  return { el, value };
}

// draw renders an event's automations from list.rows.
function draw(list, opts) {
  fill(list.box, list.rows.map((a, i) => row(list, a, i, opts)));
  list.box.closest('fieldset')?.querySelector('.add-automation')?.toggleAttribute('disabled', list.rows.length >= MAX_STEP_ACTIONS);
}

// read copies the controls' values back into list.rows.
function read(list) {
  list.box.querySelectorAll('.automation').forEach((r, i) => {
    const a = list.rows[i];
    a.type = r.querySelector('select.automation-type').value;
    a.config = {};
    for (const c of r.querySelectorAll('[data-param]')) {
      const v = c.dataset.kind === 'number' ? (c.value.trim() === '' ? '' : Number(c.value)) : c.value;
      if (v !== '') a.config[c.dataset.param] = v;
    }
  });
}

// check refuses, before anything is sent, an automation its type's table
// refuses too (kanban.CheckAutomation): a required setting left empty, or
// not exactly one of a type's alternatives. The error names the control.
function check(path, a) {
  const t = byName.get(a.type);
  const refuse = (name, why) => Object.assign(new Error(`${path}.config.${name}: ${why}`), { field: `${path}.config.${name}` });
  for (const p of t.params) if (p.required && !(p.name in a.config)) throw refuse(p.name, `is required for ${t.name}`);
  if (t.one_of.length && t.one_of.filter((n) => n in a.config).length !== 1) {
    const shown = params(t).map((p) => p.name).filter((n) => t.one_of.includes(n));
    throw refuse(shown[0] || t.one_of[0], shown.length > 1 ? `${t.name} needs exactly one of ${shown.join(', ')}` : `is required for ${t.name}`);
  }
}

// clean is an automation in the payload's shape: config only when set.
// Settings of another type (left from before the type was changed) are
// dropped.
function clean(a) {
  const names = new Set(byName.get(a.type).params.map((p) => p.name));
  const config = Object.fromEntries(Object.entries(a.config).filter(([k]) => names.has(k)));
  return Object.keys(config).length ? { type: a.type, config } : { type: a.type };
}

function row(list, a, i, opts) {
  const path = `events.${list.kind}[${i}]`;
  const t = byName.get(a.type) || AUTOMATION_TYPES[0];
  const type = field({ name: `${path}.type`, label: `Automation ${i + 1}`, type: 'select', value: t.name,
    options: AUTOMATION_TYPES.map((x) => ({ value: x.name, label: `${x.name} — ${x.desc}` })) });
  const sel = type.querySelector('select');
  sel.classList.add('automation-type');
  sel.addEventListener('change', () => { read(list); draw(list, opts); list.box.querySelectorAll('select.automation-type')[i]?.focus(); });
  const move = (to) => { read(list); const [x] = list.rows.splice(i, 1); list.rows.splice(to, 0, x); draw(list, opts); };
  return h('div', { class: 'automation', dataset: { field: path, type: t.name } },
    type,
    params(t).map((p) => paramField(path, p, a.config[p.name], opts)),
    h('p', { class: 'field-error', hidden: true }),
    h('div', { class: 'actions' },
      h('button', { type: 'button', disabled: i === 0, 'aria-label': `Run automation ${i + 1} earlier`, onclick: () => move(i - 1) }, '↑'),
      h('button', { type: 'button', disabled: i === list.rows.length - 1, 'aria-label': `Run automation ${i + 1} later`, onclick: () => move(i + 1) }, '↓'),
      h('button', { type: 'button', class: 'danger remove-automation', onclick: () => { read(list); list.rows.splice(i, 1); draw(list, opts); } }, 'Remove')));
}

// params are the settings a type's form shows: a position parameter
// ("documents only") is left out where the type offers an id instead.
function params(t) {
  return t.params.filter((p) => p.kind !== 'index' || !t.one_of.some((n) => n !== p.name && t.params.some((q) => q.name === n && q.kind !== 'index')));
}

function paramField(path, p, value, opts) {
  const spec = { name: `${path}.config.${p.name}`, label: `${p.name}${p.required ? '' : ' (optional)'}`, help: p.desc, value: value ?? '' };
  const none = (label) => (p.required ? [] : [{ value: '', label }]);
  if (p.kind === 'state') Object.assign(spec, { type: 'select', options: [...none('—'), ...TASK_STATES.map((s) => ({ value: s, label: s }))] });
  else if (p.kind === 'index') spec.type = 'number';
  else if (p.kind === 'enum') Object.assign(spec, { type: 'select', options: [...none('The default'), ...p.values.map((v) => ({ value: v, label: v }))] });
  else if (p.kind === 'id') {
    const choices = { step_id: opts.steps, agent_profile_id: opts.agents, executor_profile_id: opts.executors }[p.name];
    if (choices) Object.assign(spec, { type: 'select', options: [...(p.name === 'step_id' ? [{ value: '', label: 'Choose a step' }] : none('The default')), ...choices.map((x) => ({ value: x.id, label: x.name }))] });
  } else if (p.kind === 'text') Object.assign(spec, p.max_len > 200 ? { type: 'textarea', rows: 2 } : {});
  const f = field(spec);
  const c = f.querySelector('[name]');
  c.dataset.param = p.name;
  c.dataset.kind = spec.type === 'number' ? 'number' : 'param';
  if (p.max_len && c.tagName !== 'SELECT') c.maxLength = p.max_len;
  return f;
}
