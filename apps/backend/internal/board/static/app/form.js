// Forms whose fields are named after the action payload's fields, so that a
// server VALIDATION_ERROR naming a field is shown next to that field.
import { h, id, fill } from './dom.js';

// field builds one labelled control. spec: {name, label, type (text,
// textarea, select, checkbox, number, password, json), value, options
// [{value,label}], help, rows, placeholder}.
export function field(spec) {
  const fid = id(`f-${spec.name.replace(/\W/g, '_')}`);
  const errId = `${fid}-error`;
  const helpId = spec.help ? `${fid}-help` : null;
  const common = { id: fid, name: spec.name, 'aria-describedby': [helpId, errId].filter(Boolean).join(' ') };
  let control;
  switch (spec.type) {
    case 'textarea':
    case 'json':
      control = h('textarea', { ...common, rows: spec.rows || 4, spellcheck: spec.type === 'json' ? 'false' : null, placeholder: spec.placeholder },
        spec.type === 'json' ? JSON.stringify(spec.value ?? {}, null, 2) : (spec.value ?? ''));
      break;
    case 'select':
      control = h('select', common, (spec.options || []).map((o) => h('option', { value: o.value, selected: String(o.value) === String(spec.value ?? '') }, o.label)));
      break;
    case 'checkbox':
      control = h('input', { ...common, type: 'checkbox', checked: !!spec.value });
      break;
    default:
      control = h('input', { ...common, type: spec.type || 'text', value: spec.value ?? '', placeholder: spec.placeholder, autocomplete: 'off', inputmode: spec.type === 'number' ? 'numeric' : null });
  }
  control.dataset.kind = spec.type || 'text';
  const label = h('label', { for: fid }, spec.label);
  const err = h('p', { id: errId, class: 'field-error', hidden: true });
  const help = spec.help ? h('p', { id: helpId, class: 'hint' }, spec.help) : null;
  const wrap = spec.type === 'checkbox'
    ? h('div', { class: 'field check' }, control, label, help, err)
    : h('div', { class: 'field' }, label, control, help, err);
  wrap.dataset.field = spec.name;
  return wrap;
}

// form builds a <form> of fields (then the nodes of body) that calls
// submit(values) and shows the server's errors. submit returns a promise;
// its rejection (an ApiError) is shown next to the field it names, or
// above the buttons.
export function form({ fields, submit, submitLabel = 'Save', extra = [], body = [], onDone }) {
  const formError = h('div', { class: 'form-error', role: 'alert', hidden: true });
  const button = h('button', { type: 'submit', class: 'primary' }, submitLabel);
  const el = h('form', { novalidate: true }, fields.map(field), body, formError, h('div', { class: 'actions' }, button, extra));
  el.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    clearErrors(el);
    let values;
    try {
      values = readValues(el);
    } catch (e) {
      showError(el, e);
      return;
    }
    button.disabled = true;
    try {
      const res = await submit(values);
      if (onDone) onDone(res);
    } catch (e) {
      showError(el, e);
    } finally {
      button.disabled = false;
    }
  });
  return el;
}

// readValues reads every named control: checkboxes as booleans, numbers
// as numbers (empty: omitted), JSON fields parsed (a parse error names the
// field), empty selects omitted.
export function readValues(el) {
  const out = {};
  for (const c of el.querySelectorAll('[name]')) {
    const kind = c.dataset.kind;
    if (kind === 'checkbox') out[c.name] = c.checked;
    else if (kind === 'number') { if (c.value.trim() !== '') out[c.name] = Number(c.value); }
    else if (kind === 'json') {
      try { out[c.name] = c.value.trim() ? JSON.parse(c.value) : {}; } catch {
        const e = new Error(`${c.name}: is not valid JSON`);
        e.field = c.name;
        throw e;
      }
    } else if (kind === 'select') { if (c.value !== '') out[c.name] = c.value; }
    else out[c.name] = c.value;
  }
  return out;
}

export function clearErrors(el) {
  for (const e of el.querySelectorAll('.field-error')) { e.hidden = true; e.textContent = ''; }
  for (const c of el.querySelectorAll('[aria-invalid]')) c.removeAttribute('aria-invalid');
  const fe = el.querySelector('.form-error');
  if (fe) { fe.hidden = true; fe.textContent = ''; }
}

// showError puts an error next to the field it names, else next to the
// nearest field enclosing it (a nested name such as "servers.x.command",
// "steps[2].name" or "events.on_enter[0].config" lands on the closest
// field its path starts with), else in the form's error box.
export function showError(el, e) {
  const wrap = fieldWrap(el, e.field || '');
  if (wrap) {
    const msg = wrap.querySelector(':scope > .field-error');
    fill(msg, e.message);
    msg.hidden = false;
    const control = wrap.querySelector('[name]');
    if (control) {
      control.setAttribute('aria-invalid', 'true');
      control.focus();
    }
    return;
  }
  const fe = el.querySelector('.form-error');
  fill(fe, e.code ? `${e.message} (${e.code})` : e.message);
  fe.hidden = false;
}

// fieldWrap finds the field named name in el, dropping the path's last
// segment (".x", "[2]") until one matches.
function fieldWrap(el, name) {
  const wraps = [...el.querySelectorAll('[data-field]')];
  for (let n = name; n;) {
    const found = wraps.find((w) => w.dataset.field === n);
    if (found) return found;
    const up = n.replace(/(?:\.[^.[]*|\[[^\]]*\])$/, '');
    if (up === n) return null;
    n = up;
  }
  return null;
}
