// Executable documentation: reads the fenced code blocks of a docs page
// that carry a marker, so tests run exactly what the page tells users.
//
// A marker is an HTML comment on the line right before a fence (Markdown
// renderers do not show it):
//
//   <!-- e2e: start -->            a shell block that starts a long-running
//                                  process (`make run`): started in the
//                                  background, stopped at the end
//   <!-- e2e: run -->              a shell block run in page order
//   <!-- e2e: run key=NAME ... --> ... whose output lines `key=value` give
//                                  the placeholder NAME its value for the
//                                  blocks after it
//   <!-- e2e: setup ID -->         a shell block that configures an agent
//                                  client, run by the agent tests as ID
//   <!-- e2e: setup ID file=PATH --> a config file the agent tests write to
//                                  PATH (~/ is the test's HOME, other paths
//                                  are relative to the project directory)
//   <!-- e2e: output -->           what the nearest start or run block before
//                                  it prints: its lines must appear there,
//                                  in order and consecutively
//   <!-- e2e: input ID -->         text the page tells the user to type
//                                  (into the board's forms), which a test
//                                  submits as ID the way the board does
//
// Unmarked blocks are examples and never run. Placeholders are literal
// strings of the page that a test replaces (substitute below); PLACEHOLDERS
// lists them with what replaces them.
import { readFile } from 'node:fs/promises';

/** The placeholders pages may use, and what the tests put in their place. */
export const PLACEHOLDERS = {
  '/absolute/path/to/kandev/apps/backend/bin/kandev': 'the kandev binary under test',
  '/path/to/your/project': 'the test\'s project directory (the agent client\'s working directory)',
  '127.0.0.1:38429': 'the address of the test\'s backend (it listens on a free port, never on 38429)',
  SESSION_ID: 'the session id `kandev session create` printed',
  SESSION_TOKEN: 'the session token `kandev session create` printed',
  OPERATOR_TOKEN: 'the operator token',
};

const MARKER = /^<!--\s*e2e:\s*(start|run|setup|output|input)\b([^>]*?)\s*-->\s*$/;
const NEEDS_ID = new Set(['setup', 'input']);
// A fence may be indented (a block inside a list item): its indent is
// taken off each line of the block.
const FENCE = /^( *)(`{3,}|~{3,})\s*([\w+-]*)/;

/**
 * Returns the marked blocks of a page in order:
 * { kind, id, file, vars: {key: PLACEHOLDER}, lang, code, line }.
 * Throws when a marker is not followed by a fence or is malformed.
 */
export async function readBlocks(path) {
  const lines = (await readFile(path, 'utf8')).split('\n');
  const blocks = [];
  for (let i = 0; i < lines.length; i++) {
    const m = MARKER.exec(lines[i].trim());
    if (!m) {
      if (/^<!--\s*e2e:/.test(lines[i].trim())) throw new Error(`${path}:${i + 1}: malformed e2e marker`);
      continue;
    }
    const open = FENCE.exec(lines[i + 1] ?? '');
    if (!open) throw new Error(`${path}:${i + 1}: an e2e marker must be right before a fenced block`);
    const [, indent, fence, lang] = open;
    // A closing fence: the same indent and character, at least as long, nothing after it.
    const end = lines.findIndex((l, j) => j > i + 1 && l.startsWith(indent) && /^(`{3,}|~{3,})\s*$/.test(l.slice(indent.length)) &&
      l[indent.length] === fence[0] && l.trim().length >= fence.length);
    if (end < 0) throw new Error(`${path}:${i + 2}: unclosed fence`);
    const code = lines.slice(i + 2, end).map((l) => (l.startsWith(indent) ? l.slice(indent.length) : l.trimStart())).join('\n');
    const block = { kind: m[1], id: '', file: '', vars: {}, lang, code, line: i + 2 };
    for (const word of m[2].trim().split(/\s+/).filter(Boolean)) {
      const [k, v] = word.split('=');
      if (NEEDS_ID.has(m[1]) && v === undefined && !block.id) block.id = k;
      else if (m[1] === 'setup' && k === 'file' && v) block.file = v;
      else if (m[1] === 'run' && v) block.vars[k] = v;
      else throw new Error(`${path}:${i + 1}: unexpected "${word}" in an e2e ${m[1]} marker`);
    }
    if (NEEDS_ID.has(m[1]) && !block.id) throw new Error(`${path}:${i + 1}: an e2e ${m[1]} marker needs an id`);
    if (m[1] === 'output' && !blocks.some((b) => b.kind === 'start' || b.kind === 'run')) {
      throw new Error(`${path}:${i + 1}: an e2e output block needs a start or run block before it`);
    }
    blocks.push(block);
    i = end;
  }
  return blocks;
}

/** The setup blocks with id, in page order; throws when there are none. */
export function setupBlocks(blocks, id) {
  const found = blocks.filter((b) => b.kind === 'setup' && b.id === id);
  if (found.length === 0) throw new Error(`the page has no e2e setup block "${id}"`);
  return found;
}

/**
 * Replaces each placeholder of values in text, longest first and only as
 * a whole word (SESSION_TOKEN, not the end of KANDEV_SESSION_TOKEN). Keys
 * must be PLACEHOLDERS.
 */
export function substitute(text, values) {
  const keys = Object.keys(values).sort((a, b) => b.length - a.length);
  for (const k of keys) {
    if (!(k in PLACEHOLDERS)) throw new Error(`unknown placeholder ${k}`);
    const quoted = k.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
    const re = new RegExp(`${/^\w/.test(k) ? '(?<!\\w)' : ''}${quoted}${/\w$/.test(k) ? '(?!\\w)' : ''}`, 'g');
    text = text.replace(re, () => values[k]);
  }
  return text;
}

/** The input block with id; throws when there is none or more than one. */
export function inputBlock(blocks, id) {
  const found = blocks.filter((b) => b.kind === 'input' && b.id === id);
  if (found.length !== 1) throw new Error(`the page has ${found.length} e2e input blocks "${id}", want one`);
  return found[0];
}

/**
 * Whether the lines of want appear in got in order and consecutively
 * (each line exactly, trailing spaces aside).
 */
export function containsLines(got, want) {
  const g = got.split('\n').map((l) => l.trimEnd());
  const w = want.split('\n').map((l) => l.trimEnd());
  return g.some((_, i) => w.every((l, j) => g[i + j] === l));
}

/** Parses the `key=value` lines of a command's output. */
export function outputValues(stdout) {
  const out = {};
  for (const m of stdout.matchAll(/^([a-z_]+)=(\S+)$/gm)) out[m[1]] = m[2];
  return out;
}
