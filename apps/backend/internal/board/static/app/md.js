// A small Markdown renderer that builds DOM nodes, never HTML strings: raw
// HTML in the source stays literal text, and a link is live only when its
// target is http:, https: or mailto: (anything else, javascript: included,
// renders as plain text). Covers what agents write: headings, paragraphs,
// lists, block quotes, fenced code, rules, emphasis, code spans, links.
import { h } from './dom.js';

const SAFE_SCHEMES = ['http:', 'https:', 'mailto:'];
// MAX_SOURCE bounds what one call renders; the rest is cut with a note.
const MAX_SOURCE = 200000;

export function safeHref(raw) {
  const href = String(raw).trim();
  try {
    const u = new URL(href);
    return SAFE_SCHEMES.includes(u.protocol) ? u.href : null;
  } catch {
    return null; // relative or malformed: not a live link
  }
}

// markdown renders source into a <div class="md">.
export function markdown(source) {
  let src = String(source ?? '');
  const root = h('div', { class: 'md' });
  if (src.length > MAX_SOURCE) src = `${src.slice(0, MAX_SOURCE)}\n\n… (truncated)`;
  blocks(root, src.replace(/\r\n?/g, '\n').split('\n'));
  return root;
}

function blocks(parent, lines) {
  let i = 0;
  while (i < lines.length) {
    const line = lines[i];
    let m;
    if (!line.trim()) { i += 1; continue; }
    if ((m = /^\s*(`{3,}|~{3,})\s*([\w+-]*)/.exec(line))) {
      const fence = m[1];
      const body = [];
      i += 1;
      while (i < lines.length && !lines[i].trim().startsWith(fence)) { body.push(lines[i]); i += 1; }
      i += 1;
      parent.append(h('pre', {}, h('code', m[2] ? { 'data-lang': m[2] } : {}, body.join('\n'))));
      continue;
    }
    if ((m = /^(#{1,6})\s+(.*?)\s*#*\s*$/.exec(line))) {
      // Agent headings sit inside a page that has its own h1/h2.
      parent.append(h(`h${Math.min(6, m[1].length + 2)}`, {}, inline(m[2])));
      i += 1;
      continue;
    }
    if (/^\s*([-*_])(\s*\1){2,}\s*$/.test(line)) { parent.append(h('hr')); i += 1; continue; }
    if (/^\s*>/.test(line)) {
      const body = [];
      while (i < lines.length && /^\s*>/.test(lines[i])) { body.push(lines[i].replace(/^\s*>\s?/, '')); i += 1; }
      const q = h('blockquote');
      blocks(q, body);
      parent.append(q);
      continue;
    }
    if (/^\s*([-*+]|\d{1,9}[.)])\s+/.test(line)) { i = list(parent, lines, i); continue; }
    const para = [];
    while (i < lines.length && lines[i].trim() && !startsBlock(lines[i])) { para.push(lines[i].trim()); i += 1; }
    if (!para.length) { para.push(line.trim()); i += 1; }
    parent.append(h('p', {}, inline(para.join('\n'))));
  }
}

function startsBlock(line) {
  return /^\s*(`{3,}|~{3,}|#{1,6}\s|>|([-*+]|\d{1,9}[.)])\s+)/.test(line) || /^\s*([-*_])(\s*\1){2,}\s*$/.test(line);
}

function list(parent, lines, start) {
  const ordered = /^\s*\d/.test(lines[start]);
  const el = h(ordered ? 'ol' : 'ul');
  let i = start;
  let item = null;
  while (i < lines.length) {
    const line = lines[i];
    const m = /^(\s*)([-*+]|\d{1,9}[.)])\s+(.*)$/.exec(line);
    if (m && m[1].length < 2) {
      item = [m[3]];
      el.append(h('li'));
      el.lastChild.itemLines = item;
    } else if (item && line.trim() && /^\s+/.test(line)) {
      item.push(line.replace(/^\s{1,4}/, ''));
    } else if (item && !line.trim() && i + 1 < lines.length && /^\s+\S/.test(lines[i + 1])) {
      item.push('');
    } else break;
    i += 1;
  }
  for (const li of el.children) {
    const body = li.itemLines;
    delete li.itemLines;
    if (body.length === 1) li.append(...inline(body[0]));
    else blocks(li, body);
  }
  parent.append(el);
  return i;
}

// inline renders emphasis, code spans and links of one paragraph.
export function inline(text) {
  const out = [];
  let buf = '';
  const flush = () => { if (buf) { out.push(document.createTextNode(buf)); buf = ''; } };
  let i = 0;
  while (i < text.length) {
    const c = text[i];
    const rest = text.slice(i);
    let m;
    if (c === '\\' && i + 1 < text.length && /[\\`*_[\]()#+\-.!<>~|]/.test(text[i + 1])) { buf += text[i + 1]; i += 2; continue; }
    if (c === '\n') { flush(); out.push(h('br')); i += 1; continue; }
    if (c === '`' && (m = /^(`+)([\s\S]*?[^`])\1(?!`)/.exec(rest))) {
      flush(); out.push(h('code', {}, m[2].trim())); i += m[0].length; continue;
    }
    if ((c === '*' || c === '_') && (m = /^(\*\*|__)(?=\S)([\s\S]*?\S)\1/.exec(rest))) {
      flush(); out.push(h('strong', {}, inline(m[2]))); i += m[0].length; continue;
    }
    if ((c === '*' || c === '_') && (m = /^([*_])(?=\S)([\s\S]*?\S)\1/.exec(rest)) && (c === '*' || !/\w/.test(text[i - 1] || ''))) {
      flush(); out.push(h('em', {}, inline(m[2]))); i += m[0].length; continue;
    }
    if (c === '~' && (m = /^~~(?=\S)([\s\S]*?\S)~~/.exec(rest))) {
      flush(); out.push(h('del', {}, inline(m[1]))); i += m[0].length; continue;
    }
    if ((c === '[' || (c === '!' && text[i + 1] === '[')) && (m = /^!?\[([^\]]*)\]\(\s*<?([^)\s>]*)>?(?:\s+"[^"]*")?\s*\)/.exec(rest))) {
      flush();
      const href = c === '!' ? null : safeHref(m[2]);
      const label = m[1] || m[2];
      out.push(href ? h('a', { href, rel: 'noopener noreferrer nofollow', target: '_blank' }, inline(label)) : h('span', { class: 'inert-link' }, label));
      i += m[0].length;
      continue;
    }
    if ((m = /^https?:\/\/[^\s<>()]+[^\s<>().,;:!?'"]/.exec(rest)) && !/\w/.test(text[i - 1] || '')) {
      flush(); out.push(h('a', { href: safeHref(m[0]) || '#', rel: 'noopener noreferrer nofollow', target: '_blank' }, m[0])); i += m[0].length; continue;
    }
    buf += c;
    i += 1;
  }
  flush();
  return out;
}
