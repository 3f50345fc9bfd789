#!/usr/bin/env node
// Validates the public docs in docs/public (see DESIGN.md §8):
//   - YAML frontmatter with non-empty `title` and `description`
//   - exactly one H1, and it is the first thing after the frontmatter
//   - relative links, images and #fragments resolve (GitHub-style heading slugs)
//   - no site-root links (they break when the docs are served under a prefix)
//   - every *_kandev name in the docs is a real tool, and every tool is documented
//   - mcp-tool-reference.md equals a fresh `kandev tools --markdown`
//   - every Go test, fuzz target or benchmark a page cites (`TestX`, `FuzzX`, `BenchmarkX`) is a
//     function of a _test.go file under <root>/apps, so a promise never names a test that is gone
// Problems are printed as `file:line: message`; the exit status is 1 if there are any.
// No dependencies beyond Node itself.

import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const MODES = ['task', 'task-title-pending', 'config', 'external', 'office'];
export const REFERENCE_PAGE = 'mcp-tool-reference.md';
const TOOL_NAME = /\b[a-z][a-z0-9_]*_kandev\b/g;
const CITED_TEST = /`((?:Test|Fuzz|Benchmark)[A-Z0-9_][A-Za-z0-9_]*)`/g;
const GO_TEST_FUNC = /^func ((?:Test|Fuzz|Benchmark)[A-Z0-9_][A-Za-z0-9_]*)\(/gm;
const BUILD_HINT = 'cannot run kandev tools: build it with `make build`';

const SCRIPT = fileURLToPath(import.meta.url);
const USAGE = `usage: node scripts/validate-public-docs.mjs [--root DIR] [--docs DIR] [--kandev PATH]

Checks the public docs: frontmatter, a single H1, relative links and anchors,
*_kandev tool names against the catalog, and that ${REFERENCE_PAGE} is up to date.

  --root DIR     repository root (default: parent of scripts/)
  --docs DIR     docs directory (default: <root>/docs/public)
  --kandev PATH  kandev binary (default: $KANDEV_BIN or <root>/apps/backend/bin/kandev)
  -h, --help     show this help
`;

// ---------------------------------------------------------------- markdown parsing

/** Parses leading `---` frontmatter. Returns null when the file does not start with one. */
export function parseFrontmatter(text) {
  const lines = text.replace(/^\uFEFF/, '').split('\n').map((l) => l.replace(/\r$/, ''));
  if (lines[0].trimEnd() !== '---') return null;
  const end = lines.findIndex((l, i) => i > 0 && /^(---|\.\.\.)\s*$/.test(l));
  const fields = {}; // key -> { value, line }
  const last = end === -1 ? lines.length : end;
  for (let i = 1; i < last; i++) {
    const m = /^([A-Za-z0-9_-]+):(?:\s+(.*))?$/.exec(lines[i]);
    if (!m) continue;
    let value = (m[2] ?? '').trim();
    if (/^[|>][+-]?$/.test(value)) { // block scalar: the value is the indented lines below
      const block = [];
      while (i + 1 < last && /^\s+\S/.test(lines[i + 1])) block.push(lines[++i].trim());
      fields[m[1]] = { value: block.join(' '), line: i - block.length + 1 };
      continue;
    }
    const quoted = /^(["'])(.*)\1$/.exec(value);
    if (quoted) value = quoted[2].trim();
    fields[m[1]] = { value, line: i + 1 };
  }
  return { fields, closed: end !== -1, bodyStart: end === -1 ? lines.length : end + 1 };
}

/** Marks the lines that belong to fenced code blocks (fence lines included). */
export function codeLines(lines) {
  const inCode = new Array(lines.length).fill(false);
  let fence = null; // { char, len, line }
  lines.forEach((line, i) => {
    if (fence) {
      inCode[i] = true;
      const close = /^\s*(`{3,}|~{3,})\s*$/.exec(line);
      if (close && close[1][0] === fence.char && close[1].length >= fence.len) fence = null;
      return;
    }
    const open = /^\s*(`{3,}|~{3,})(.*)$/.exec(line);
    if (open && !(open[1][0] === '`' && open[2].includes('`'))) {
      fence = { char: open[1][0], len: open[1].length, line: i + 1 };
      inCode[i] = true;
    }
  });
  inCode.unclosedAt = fence ? fence.line : 0;
  return inCode;
}

const ATX = /^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$/;

/** Headings outside code blocks, ATX and setext: [{ level, text, line }] (line is 1-based). */
export function findHeadings(lines, start = 0, inCode = codeLines(lines)) {
  const headings = [];
  const isText = (i) => i >= start && !inCode[i] && lines[i].trim() !== '' &&
    !ATX.test(lines[i]) && !/^ {0,3}(=+|-+)\s*$/.test(lines[i]) &&
    !/^\s*(>|[-*+]\s|\d+[.)]\s)/.test(lines[i]); // not a quote or list item
  for (let i = start; i < lines.length; i++) {
    if (inCode[i]) continue;
    const atx = ATX.exec(lines[i]);
    if (atx) {
      headings.push({ level: atx[1].length, text: (atx[2] ?? '').trim(), line: i + 1 });
      continue;
    }
    const setext = /^ {0,3}(=+|-+)\s*$/.exec(lines[i]);
    if (setext && isText(i - 1)) {
      let first = i - 1;
      while (isText(first - 1)) first--;
      const text = lines.slice(first, i).map((l) => l.trim()).join(' ');
      headings.push({ level: setext[1][0] === '=' ? 1 : 2, text, line: first + 1 });
    }
  }
  return headings.sort((a, b) => a.line - b.line);
}

/** GitHub-style slug of a heading's text (github-slugger semantics, minus rendering details). */
export function slugify(text) {
  const plain = text
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1') // links and images -> their text
    .replace(/<[^>]+>/g, ''); // inline HTML
  return plain.toLowerCase().replace(/[^\p{L}\p{M}\p{N}\p{Pc}\- ]/gu, '').replace(/ /g, '-');
}

/** Slugs for a list of headings, with GitHub's -1, -2 … suffixes for duplicates. */
export function uniqueSlugs(headings) {
  const seen = new Map();
  return headings.map((h) => {
    const base = slugify(h.text);
    let slug = base;
    while (seen.has(slug)) {
      seen.set(base, seen.get(base) + 1);
      slug = `${base}-${seen.get(base)}`;
    }
    seen.set(slug, 0);
    return slug;
  });
}

/** Replaces code blocks and inline code spans with blanks, keeping line numbers and offsets. */
function blankCode(lines, inCode) {
  return lines
    .map((l, i) => (inCode[i] ? '' : l.replace(/(`+)(?!`)(.*?[^`])\1(?!`)/g, (m) => ' '.repeat(m.length))))
    .join('\n');
}

const INLINE_LINK = new RegExp(
  String.raw`(!?)\[((?:[^\[\]\n]|\n(?![ \t]*\n)|\[[^\[\]\n]*\])*)\]` + // [text] (may wrap once per line)
  String.raw`\(\s*(<[^>\n]*>|[^\s()]*(?:\([^\s()]*\)[^\s()]*)*)` + // (target or <target>
  String.raw`(?:\s+(?:"[^"]*"|'[^']*'|\([^)]*\)))?\s*\)`, // optional "title")
  'g');
const REF_DEF = /^ {0,3}\[(?!\^)([^\]\n]+)\]:[ \t]*(<[^>\n]*>|\S+)/gm;

/** Links outside code: inline links, images and reference definitions: [{ target, line, image }]. */
export function extractLinks(lines, inCode = codeLines(lines)) {
  const text = blankCode(lines, inCode);
  const lineAt = (offset) => text.slice(0, offset).split('\n').length;
  const links = [];
  for (const m of text.matchAll(INLINE_LINK)) {
    const at = m.index + m[0].lastIndexOf('](');
    links.push({ target: m[3].replace(/^<|>$/g, ''), line: lineAt(at), image: m[1] === '!' });
  }
  for (const m of text.matchAll(REF_DEF)) {
    links.push({ target: m[2].replace(/^<|>$/g, ''), line: lineAt(m.index), image: false });
  }
  return links.sort((a, b) => a.line - b.line);
}

/** Everything a page offers as a link target: heading slugs and explicit HTML anchors. */
export function pageAnchors(text) {
  const lines = text.split('\n').map((l) => l.replace(/\r$/, ''));
  const fm = parseFrontmatter(text);
  const inCode = codeLines(lines);
  const anchors = new Set(uniqueSlugs(findHeadings(lines, fm ? fm.bodyStart : 0, inCode)));
  for (const m of blankCode(lines, inCode).matchAll(/<a\s[^>]*?\b(?:id|name)\s*=\s*["']([^"']+)["']/gi)) {
    anchors.add(m[1]);
  }
  return anchors;
}

// ---------------------------------------------------------------- per-page checks

/**
 * Checks one page: frontmatter, the single H1, links. `ctx` = { root, anchorsOf(absPath) }.
 * Returns problems [{ file, line, message }] with `file` relative to ctx.root.
 */
export function checkPage(abs, text, ctx) {
  const file = path.relative(ctx.root, abs);
  const problems = [];
  const report = (line, message) => problems.push({ file, line, message });
  const lines = text.replace(/^\uFEFF/, '').split('\n').map((l) => l.replace(/\r$/, ''));
  const inCode = codeLines(lines);
  if (inCode.unclosedAt) report(inCode.unclosedAt, 'code fence is never closed');

  // Frontmatter.
  const fm = parseFrontmatter(text);
  if (!fm) {
    report(1, 'missing YAML frontmatter (the file must start with a `---` line)');
  } else if (!fm.closed) {
    report(1, 'frontmatter is not closed with a `---` line');
  } else {
    for (const key of ['title', 'description']) {
      const field = fm.fields[key];
      if (!field) report(1, `frontmatter is missing \`${key}\``);
      else if (!field.value) report(field.line, `frontmatter \`${key}\` is empty`);
    }
  }

  // Exactly one H1, first after the frontmatter.
  const bodyStart = fm && fm.closed ? fm.bodyStart : 0;
  const headings = findHeadings(lines, bodyStart, inCode);
  const h1s = headings.filter((h) => h.level === 1);
  if (h1s.length === 0) report(bodyStart + 1, 'page has no H1 (`# Title`)');
  for (const extra of h1s.slice(1)) {
    report(extra.line, `more than one H1 (the first is on line ${h1s[0].line}); use \`##\` for sections`);
  }
  const firstLine = lines.findIndex((l, i) => i >= bodyStart && l.trim() !== '') + 1;
  if (h1s.length > 0 && firstLine !== h1s[0].line && !(fm && !fm.closed)) {
    report(firstLine, `the H1 (line ${h1s[0].line}) must be the first line after the frontmatter`);
  }

  // Links.
  for (const link of extractLinks(lines, inCode)) {
    const message = checkLink(abs, link.target, ctx);
    if (message) report(link.line, `${link.image ? 'image' : 'link'} \`${link.target}\`: ${message}`);
  }
  return problems;
}

/** Returns an error message for a broken link target, or null when it resolves (or is external). */
function checkLink(fromAbs, target, ctx) {
  if (target === '') return 'empty link target';
  if (/^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith('//')) return null; // external
  if (target.startsWith('/')) return 'site-root link; use a relative path';
  const hash = target.indexOf('#');
  const rawPath = (hash === -1 ? target : target.slice(0, hash)).replace(/\?.*$/, '');
  const fragment = hash === -1 ? '' : decode(target.slice(hash + 1));
  const abs = rawPath === '' ? fromAbs : path.resolve(path.dirname(fromAbs), decode(rawPath));
  if (!fs.existsSync(abs)) return `${path.relative(ctx.root, abs)} does not exist`;
  if (!fragment || !abs.endsWith('.md') || !fs.statSync(abs).isFile()) return null;
  if (ctx.anchorsOf(abs).has(fragment)) return null;
  return `no heading or anchor \`#${fragment}\` in ${path.relative(ctx.root, abs)}`;
}

function decode(s) {
  try { return decodeURIComponent(s); } catch { return s; }
}

// ---------------------------------------------------------------- catalog

/** Runs `kandev args…`; returns stdout as a Buffer, or throws an Error with a readable reason. */
function runKandev(kandev, args) {
  const res = spawnSync(kandev, args, { maxBuffer: 64 << 20, timeout: 60_000 });
  const cmd = `kandev ${args.join(' ')}`;
  if (res.error) {
    const reason = res.error.code === 'ENOENT' ? `${kandev} not found` : res.error.message;
    throw new Error(`${BUILD_HINT} (${reason})`);
  }
  if (res.status !== 0) {
    const detail = String(res.stderr).trim().split('\n')[0];
    const how = res.signal ? `was killed by ${res.signal}` : `exited with status ${res.status}`;
    throw new Error(`${BUILD_HINT} (\`${cmd}\` ${how}${detail ? `: ${detail}` : ''})`);
  }
  return res.stdout;
}

/**
 * The tool catalog: the union of `kandev tools --mode M --json` over every mode and of the tools
 * the generated reference (`kandev tools --markdown`) has a `### <tool>` section for — it covers
 * every declared tool, also capability-gated ones that no mode serves by default — plus that
 * reference. Throws an Error if kandev cannot be run.
 */
export function loadCatalog(kandev) {
  const names = new Set();
  for (const mode of MODES) {
    const args = ['tools', '--mode', mode, '--json'];
    let tools;
    try {
      tools = JSON.parse(runKandev(kandev, args).toString('utf8'));
    } catch (err) {
      if (!(err instanceof SyntaxError)) throw err;
      throw new Error(`${BUILD_HINT} (\`kandev ${args.join(' ')}\` did not print JSON: ${err.message})`);
    }
    if (!Array.isArray(tools) || tools.some((t) => typeof t?.name !== 'string')) {
      throw new Error(`${BUILD_HINT} (\`kandev ${args.join(' ')}\` did not print an array of tools with names)`);
    }
    for (const t of tools) names.add(t.name);
  }
  const markdown = runKandev(kandev, ['tools', '--markdown']);
  for (const m of markdown.toString('utf8').matchAll(/^### ([a-z][a-z0-9_]*_kandev)[ \t]*$/gm)) names.add(m[1]);
  return { names, markdown };
}

// ---------------------------------------------------------------- whole tree

/** The names of every Test, Fuzz and Benchmark function in the _test.go files under dir. */
export function goTestNames(dir) {
  const names = new Set();
  const walk = (d) => {
    let entries;
    try {
      entries = fs.readdirSync(d, { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries) {
      const abs = path.join(d, e.name);
      if (e.isDirectory() && e.name !== 'node_modules' && e.name !== 'testdata' && !e.name.startsWith('.')) walk(abs);
      else if (e.isFile() && e.name.endsWith('_test.go')) {
        for (const m of fs.readFileSync(abs, 'utf8').matchAll(GO_TEST_FUNC)) names.add(m[1]);
      }
    }
  };
  walk(dir);
  return names;
}

function listPages(dir) {
  const pages = [];
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const abs = path.join(dir, entry.name);
    if (entry.isDirectory()) pages.push(...listPages(abs));
    else if (entry.name.endsWith('.md')) pages.push(abs);
  }
  return pages.sort();
}

/** 1-based number of the first line where two texts differ. */
function firstDifference(a, b) {
  const x = a.split('\n');
  const y = b.split('\n');
  let i = 0;
  while (i < x.length && i < y.length && x[i] === y[i]) i++;
  return i + 1;
}

/**
 * Validates a docs tree. Returns an array of problems [{ file, line, message }] (file relative to
 * root, line 0 when the problem is not tied to a line); the array also carries `pages` and
 * `tools` counts for the summary line.
 */
export function validate({ root, docs, kandev }) {
  const problems = [];
  const rel = (p) => path.relative(root, p) || '.';
  const done = (pages, tools) => Object.assign(problems, { pages, tools });
  if (!fs.existsSync(docs) || !fs.statSync(docs).isDirectory()) {
    problems.push({ file: rel(docs), line: 0, message: 'docs directory does not exist' });
    return done(0, 0);
  }
  const pages = listPages(docs).map((abs) => ({ abs, text: fs.readFileSync(abs, 'utf8') }));
  if (pages.length === 0) problems.push({ file: rel(docs), line: 0, message: 'no *.md pages found' });

  const anchorCache = new Map();
  const anchorsOf = (abs) => {
    if (!anchorCache.has(abs)) anchorCache.set(abs, pageAnchors(fs.readFileSync(abs, 'utf8')));
    return anchorCache.get(abs);
  };
  for (const page of pages) problems.push(...checkPage(page.abs, page.text, { root, anchorsOf }));

  // Cited tests: a page that says a promise is proved by a test names one that exists.
  const tests = goTestNames(path.join(root, 'apps'));
  for (const page of pages) {
    page.text.split('\n').forEach((line, i) => {
      for (const m of line.matchAll(CITED_TEST)) {
        if (!tests.has(m[1])) {
          problems.push({ file: rel(page.abs), line: i + 1, message: `cites \`${m[1]}\`, which is no test, fuzz target or benchmark under apps/` });
        }
      }
    });
  }

  let catalog;
  try {
    catalog = loadCatalog(kandev);
  } catch (err) {
    problems.push({ file: '', line: 0, message: err.message });
    return done(pages.length, 0);
  }

  // Tool names: every mention is a real tool; every tool is mentioned somewhere.
  const mentioned = new Set();
  for (const page of pages) {
    page.text.split('\n').forEach((line, i) => {
      for (const name of new Set(line.match(TOOL_NAME) ?? [])) {
        mentioned.add(name);
        if (!catalog.names.has(name)) {
          problems.push({ file: rel(page.abs), line: i + 1, message: `unknown tool \`${name}\` (not in \`kandev tools\` for any mode)` });
        }
      }
    });
  }
  for (const name of [...catalog.names].sort()) {
    if (!mentioned.has(name)) {
      problems.push({ file: rel(docs), line: 0, message: `tool \`${name}\` is not mentioned in any page` });
    }
  }

  // The generated reference is byte-for-byte what kandev generates now.
  const refAbs = path.join(docs, REFERENCE_PAGE);
  if (!fs.existsSync(refAbs)) {
    problems.push({ file: rel(refAbs), line: 0, message: 'generated reference is missing; run `make docs` to generate it' });
  } else {
    const current = fs.readFileSync(refAbs);
    if (!current.equals(catalog.markdown)) {
      const line = firstDifference(current.toString('utf8'), catalog.markdown.toString('utf8'));
      problems.push({ file: rel(refAbs), line, message: `generated reference is stale (first difference at line ${line}); run \`make docs\` to regenerate it` });
    }
  }
  return done(pages.length, catalog.names.size);
}

export function formatProblem({ file, line, message }) {
  if (!file) return message;
  return line ? `${file}:${line}: ${message}` : `${file}: ${message}`;
}

// ---------------------------------------------------------------- command line

export function parseArgs(argv, env = process.env) {
  const opts = {};
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '-h' || arg === '--help') return { help: true };
    const m = /^--(root|docs|kandev)(?:=(.*))?$/.exec(arg);
    if (!m) throw new Error(`unknown argument: ${arg}`);
    const value = m[2] ?? argv[++i];
    if (value === undefined || value === '') throw new Error(`${arg} needs a value`);
    opts[m[1]] = value;
  }
  const root = path.resolve(opts.root ?? path.join(path.dirname(SCRIPT), '..'));
  const docs = opts.docs ? path.resolve(opts.docs) : path.join(root, 'docs', 'public');
  let kandev = opts.kandev || env.KANDEV_BIN || path.join(root, 'apps', 'backend', 'bin', 'kandev');
  if (kandev.includes('/')) kandev = path.resolve(kandev); // bare names are looked up on PATH
  return { root, docs, kandev };
}

function main() {
  let opts;
  try {
    opts = parseArgs(process.argv.slice(2));
  } catch (err) {
    process.stderr.write(`${err.message}\n${USAGE}`);
    return 2;
  }
  if (opts.help) {
    process.stdout.write(USAGE);
    return 0;
  }
  const problems = validate(opts);
  if (problems.length > 0) {
    for (const p of problems) process.stderr.write(`${formatProblem(p)}\n`);
    process.stderr.write(`docs check failed: ${problems.length} problem${problems.length === 1 ? '' : 's'}\n`);
    return 1;
  }
  process.stdout.write(`docs ok: ${problems.pages} pages, ${problems.tools} tools\n`);
  return 0;
}

const isMain = process.argv[1] && fs.realpathSync(path.resolve(process.argv[1])) === fs.realpathSync(SCRIPT);
if (isMain) process.exitCode = main();
