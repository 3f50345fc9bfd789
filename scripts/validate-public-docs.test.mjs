// Tests for validate-public-docs.mjs. Run with `node --test scripts/`.
// Every test builds its own docs tree in a temp dir, with a fake `kandev` (a small Node script).

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';

import {
  checkPage, extractLinks, findHeadings, loadCatalog, parseArgs, parseFrontmatter, slugify,
  uniqueSlugs, validate,
} from './validate-public-docs.mjs';

const SCRIPT = path.join(path.dirname(fileURLToPath(import.meta.url)), 'validate-public-docs.mjs');

const CATALOG = {
  task: [{ name: 'list_tasks_kandev' }, { name: 'create_task_kandev' }],
  'task-title-pending': [{ name: 'list_tasks_kandev' }, { name: 'set_task_title_kandev' }],
  config: [{ name: 'get_config_kandev' }],
  external: [{ name: 'list_tasks_kandev' }],
  office: [],
};

const REFERENCE = `---
title: MCP tool reference
description: Every tool, per mode.
---

# MCP tool reference

## list_tasks_kandev
## create_task_kandev
## set_task_title_kandev
## get_config_kandev
`;

const INDEX = `---
title: Kandev
description: "An MCP server for tasks."
---
# Kandev

Start with [getting started](getting-started.md) or the [reference](mcp-tool-reference.md#list_tasks_kandev).
`;

const GETTING_STARTED = `---
title: 'Getting started'
description: Install and connect.
---

# Getting started

## Install

Call \`list_tasks_kandev\` first. Back to the [index](index.md#kandev) or [install](#install).
`;

const dirs = [];
after(() => {
  for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
});

/**
 * Builds a fixture repo: docs/public/<pages>, and a fake kandev at bin/kandev.
 * `kandev`: 'ok' (default), 'fail' (exit 3), 'missing' (no binary), or 'garbage' (not JSON).
 * `reference`: the text `kandev tools --markdown` prints; the page on disk defaults to the same.
 */
function fixture({ pages = {}, catalog = CATALOG, reference = REFERENCE, kandev = 'ok', writeReference = true, goFiles = {} } = {}) {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'kandev-docs-'));
  dirs.push(root);
  for (const [name, text] of Object.entries(goFiles)) {
    fs.mkdirSync(path.dirname(path.join(root, 'apps', name)), { recursive: true });
    fs.writeFileSync(path.join(root, 'apps', name), text);
  }
  const docs = path.join(root, 'docs', 'public');
  const all = { 'index.md': INDEX, 'getting-started.md': GETTING_STARTED, ...pages };
  if (writeReference && !('mcp-tool-reference.md' in pages)) all['mcp-tool-reference.md'] = reference;
  for (const [name, text] of Object.entries(all)) {
    if (text === null) continue; // lets a test drop a default page
    fs.mkdirSync(path.dirname(path.join(docs, name)), { recursive: true });
    fs.writeFileSync(path.join(docs, name), text);
  }
  fs.mkdirSync(docs, { recursive: true });
  const bin = path.join(root, 'bin', 'kandev');
  if (kandev !== 'missing') {
    fs.mkdirSync(path.dirname(bin));
    const body = {
      ok: `
const args = process.argv.slice(2);
const catalog = ${JSON.stringify(catalog)};
const reference = ${JSON.stringify(reference)};
if (args[0] === 'tools' && args[1] === '--markdown') process.stdout.write(reference);
else if (args[0] === 'tools' && args[1] === '--mode' && args[3] === '--json' && args[2] in catalog)
  process.stdout.write(JSON.stringify(catalog[args[2]]));
else { process.stderr.write('fake kandev: bad args ' + args.join(' ') + '\\n'); process.exit(2); }
`,
      fail: `process.stderr.write('database is locked\\n'); process.exit(3);`,
      garbage: `process.stdout.write('not json');`,
    }[kandev];
    fs.writeFileSync(bin, `#!/usr/bin/env node\n${body}`);
    fs.chmodSync(bin, 0o755);
  }
  return { root, docs, kandev: bin };
}

/** Runs validate() on a fixture and returns the problems as `file:line: message` strings. */
function problemsOf(options) {
  return [...validate(fixture(options))].map((p) => `${p.file}:${p.line}: ${p.message}`);
}

function assertOk(options) {
  assert.deepEqual(problemsOf(options), []);
}

/** Asserts exactly one problem, matching `pattern` (a RegExp against `file:line: message`). */
function assertOne(options, pattern) {
  const problems = problemsOf(options);
  assert.equal(problems.length, 1, `expected one problem, got:\n${problems.join('\n')}`);
  assert.match(problems[0], pattern);
}

const page = (body, front = 'title: T\ndescription: D') => `---\n${front}\n---\n${body}`;
// A page that links nowhere and mentions no tools, for tests of a single rule.
const extra = (body, front) => ({ 'extra.md': page(body, front) });

describe('good tree', () => {
  test('passes and counts pages and tools', () => {
    const problems = validate(fixture());
    assert.deepEqual([...problems], []);
    assert.equal(problems.pages, 3);
    assert.equal(problems.tools, 4);
  });
});

describe('frontmatter', () => {
  test('parses key: value lines, quotes and block scalars', () => {
    const fm = parseFrontmatter('---\ntitle: "A: b"\ndescription: >\n  two\n  lines\n---\n# A\n');
    assert.equal(fm.fields.title.value, 'A: b');
    assert.equal(fm.fields.description.value, 'two lines');
    assert.equal(fm.bodyStart, 6);
    assert.equal(parseFrontmatter('# No frontmatter\n'), null);
  });
  test('missing frontmatter fails', () => {
    assertOne({ pages: { 'extra.md': '# Extra\n' } }, /^docs\/public\/extra\.md:1: missing YAML frontmatter/);
  });
  test('unclosed frontmatter fails', () => {
    assertOne({ pages: { 'extra.md': '---\ntitle: T\ndescription: D\n# Extra\n' } }, /extra\.md:1: frontmatter is not closed/);
  });
  test('empty title fails and names the key and its line', () => {
    assertOne({ pages: extra('# Extra\n', 'description: D\ntitle: ""') }, /extra\.md:3: frontmatter `title` is empty/);
  });
  test('missing description fails', () => {
    assertOne({ pages: extra('# Extra\n', 'title: T') }, /extra\.md:1: frontmatter is missing `description`/);
  });
  test('quoted non-empty values pass', () => {
    assertOk({ pages: extra('# Extra\n', "title: 'T'\ndescription: \"D\"") });
  });
});

describe('H1', () => {
  test('two H1s fail on the second', () => {
    assertOne({ pages: extra('# One\n\ntext\n\n# Two\n') }, /extra\.md:9: more than one H1 \(the first is on line 5\)/);
  });
  test('no H1 fails', () => {
    assertOne({ pages: extra('\n## Only a section\n') }, /extra\.md:5: page has no H1/);
  });
  test('H1 not first after the frontmatter fails', () => {
    assertOne({ pages: extra('\nSome intro.\n\n# Extra\n') }, /extra\.md:6: the H1 \(line 8\) must be the first line/);
  });
  test('blank lines before the H1 are fine', () => {
    assertOk({ pages: extra('\n\n# Extra\n') });
  });
  test('H1 inside code blocks is ignored, including a # comment in a bash fence', () => {
    const body = '# Extra\n\n```bash\n# install it\nmake build\n```\n\n~~~~\n# not a heading\n~~~~\n';
    assertOk({ pages: extra(body) });
    const lines = body.split('\n');
    assert.deepEqual(findHeadings(lines).map((h) => h.text), ['Extra']);
  });
  test('a shorter fence does not close a longer one', () => {
    assertOk({ pages: extra('# Extra\n\n````md\n```\n# still code\n```\n````\n') });
  });
  test('setext H1 counts as the H1', () => {
    assertOk({ pages: extra('Extra\n=====\n\ntext\n') });
  });
  test('setext H1 after an ATX H1 is a second H1', () => {
    assertOne({ pages: extra('# Extra\n\nAgain\n===\n') }, /extra\.md:7: more than one H1/);
  });
  test('unclosed code fence fails', () => {
    assertOne({ pages: extra('# Extra\n\n```\ncode\n') }, /extra\.md:7: code fence is never closed/);
  });
});

describe('slugs', () => {
  test('GitHub-style slugs', () => {
    assert.equal(slugify('Getting Started!'), 'getting-started');
    assert.equal(slugify('`create_task_kandev` (legacy)'), 'create_task_kandev-legacy');
    assert.equal(slugify('Fail-closed: rules & errors'), 'fail-closed-rules--errors');
    assert.equal(slugify('[Link](x.md) text'), 'link-text');
    assert.deepEqual(uniqueSlugs([{ text: 'A' }, { text: 'A' }, { text: 'A' }]), ['a', 'a-1', 'a-2']);
  });
});

describe('links', () => {
  test('extracts inline, image and reference links outside code', () => {
    const lines = [
      'See [a](a.md) and ![img](img.png "title").',
      '`[not](code.md)` and [wrapped',
      'text](b.md#x)',
      '```',
      '[not](fenced.md)',
      '```',
      '[ref]: c.md#y',
    ];
    assert.deepEqual(extractLinks(lines).map((l) => [l.target, l.line, l.image]), [
      ['a.md', 1, false], ['img.png', 1, true], ['b.md#x', 3, false], ['c.md#y', 7, false],
    ]);
  });
  test('broken relative link fails', () => {
    assertOne({ pages: extra('# Extra\n\nSee [nowhere](missing.md).\n') }, /extra\.md:7: link `missing\.md`: docs\/public\/missing\.md does not exist/);
  });
  test('links into subdirectories and back resolve', () => {
    assertOk({ pages: { 'guides/deep.md': page('# Deep\n\n[up](../extra.md#extra) [img](../img/x.png)\n'), ...extra('# Extra\n\n[down](guides/deep.md#deep)\n'), 'img/x.png': 'png' } });
  });
  test('missing image fails', () => {
    assertOne({ pages: extra('# Extra\n\n![diagram](img/missing.png)\n') }, /extra\.md:7: image `img\/missing\.png`: .* does not exist/);
  });
  test('broken anchor fails', () => {
    assertOne({ pages: extra('# Extra\n\n[x](index.md#nope)\n') }, /extra\.md:7: link `index\.md#nope`: no heading or anchor `#nope` in docs\/public\/index\.md/);
  });
  test('broken same-page anchor fails', () => {
    assertOne({ pages: extra('# Extra\n\n[x](#nope)\n') }, /extra\.md:7: link `#nope`: no heading or anchor/);
  });
  test('duplicate headings get -1 suffixes', () => {
    const body = '# Extra\n\n## Example\n\n## Example\n\n[first](#example) [second](#example-1)\n';
    assertOk({ pages: extra(body) });
    assertOne({ pages: extra(body.replace('#example-1', '#example-2')) }, /extra\.md:11: link `#example-2`: no heading/);
  });
  test('explicit <a id> and <a name> anchors resolve', () => {
    assertOk({ pages: extra('# Extra\n\n<a id="custom"></a>\n<a name="legacy"></a>\n\n[a](#custom) [b](#legacy)\n') });
  });
  test('reference-style definitions are checked', () => {
    assertOne({ pages: extra('# Extra\n\nSee [it][ref].\n\n[ref]: gone.md\n') }, /extra\.md:9: link `gone\.md`: .* does not exist/);
  });
  test('site-root links fail', () => {
    assertOne({ pages: extra('# Extra\n\n[x](/docs/public/index.md)\n') }, /extra\.md:7: link `\/docs\/public\/index\.md`: site-root link; use a relative path/);
  });
  test('external links are not checked', () => {
    assertOk({ pages: extra('# Extra\n\n[a](https://example.com/x.md) [b](http://x) [c](mailto:a@b.c)\n') });
  });
  test('links in code blocks and inline code are ignored', () => {
    assertOk({ pages: extra('# Extra\n\n```md\n[x](missing.md) [y](/root.md)\n```\n\nUse `[x](missing.md#nope)` syntax.\n') });
  });
});

describe('tool names', () => {
  test('unknown tool name fails, even in a code block', () => {
    assertOne({ pages: extra('# Extra\n\n```json\n{"tool": "delete_everything_kandev"}\n```\n') },
      /extra\.md:8: unknown tool `delete_everything_kandev`/);
  });
  test('undocumented catalog tool fails', () => {
    const catalog = { ...CATALOG, office: [{ name: 'hire_agent_kandev' }] };
    assertOne({ catalog }, /^docs\/public:0: tool `hire_agent_kandev` is not mentioned in any page/);
  });
  test('a tool mentioned only in a code block counts as documented', () => {
    const catalog = { ...CATALOG, office: [{ name: 'hire_agent_kandev' }] };
    assertOk({ catalog, pages: extra('# Extra\n\n```\nhire_agent_kandev\n```\n') });
  });
  test('words merely ending in kandev are not tool names', () => {
    assertOk({ pages: extra('# Extra\n\nRun kandev, see my-kandev and KANDEV_BIN.\n') });
  });
});

describe('generated reference', () => {
  test('stale reference fails at the first differing line', () => {
    const stale = REFERENCE.replace('## create_task_kandev\n', '## create_task_kandev\nold text\n');
    assertOne({ pages: { 'mcp-tool-reference.md': stale } },
      /^docs\/public\/mcp-tool-reference\.md:10: generated reference is stale \(first difference at line 10\); run `make docs`/);
  });
  test('a missing trailing newline is a difference', () => {
    assertOne({ pages: { 'mcp-tool-reference.md': REFERENCE.trimEnd() } }, /mcp-tool-reference\.md:12: generated reference is stale/);
  });
  test('missing reference fails', () => {
    const problems = problemsOf({ writeReference: false, pages: extra('# Extra\n\nlist_tasks_kandev create_task_kandev set_task_title_kandev get_config_kandev\n') });
    assert.equal(problems.length, 2, problems.join('\n')); // the index links to it, too
    assert.match(problems[0], /index\.md:7: link `mcp-tool-reference\.md#list_tasks_kandev`: .* does not exist/);
    assert.match(problems[1], /mcp-tool-reference\.md:0: generated reference is missing; run `make docs`/);
  });
});

describe('kandev binary', () => {
  test('loadCatalog unions the modes', () => {
    const { kandev } = fixture();
    const { names, markdown } = loadCatalog(kandev);
    assert.deepEqual([...names].sort(), ['create_task_kandev', 'get_config_kandev', 'list_tasks_kandev', 'set_task_title_kandev']);
    assert.equal(markdown.toString(), REFERENCE);
  });
  for (const kind of ['missing', 'fail', 'garbage']) {
    test(`${kind} kandev gives one clear error; page checks still run`, () => {
      const problems = problemsOf({ kandev: kind, pages: extra('Intro.\n\n# Extra\n') });
      assert.equal(problems.length, 2, problems.join('\n'));
      assert.match(problems[0], /extra\.md:5: the H1/);
      assert.match(problems[1], /^:0: cannot run kandev tools: build it with `make build`/);
    });
  }
  test('loadCatalog adds the tools the reference has a section for (capability-gated, in no mode by default)', () => {
    const reference = `${REFERENCE}\n### ask_parent_question_kandev\n\n- Modes: none by default (capability-gated)\n`;
    const { names } = loadCatalog(fixture({ reference }).kandev);
    assert.deepEqual([...names].sort(), ['ask_parent_question_kandev', 'create_task_kandev', 'get_config_kandev', 'list_tasks_kandev', 'set_task_title_kandev']);
    assertOk({ reference, pages: extra('# Extra\n\nAutopilot subtasks call ask_parent_question_kandev.\n') });
  });
  test('failing kandev reports its exit status and stderr', () => {
    assert.throws(() => loadCatalog(fixture({ kandev: 'fail' }).kandev), /exited with status 3: database is locked/);
  });
});

describe('checkPage', () => {
  test('reports paths relative to the root', () => {
    const root = '/repo';
    const problems = checkPage('/repo/docs/public/x.md', '# X\n', { root, anchorsOf: () => new Set() });
    assert.deepEqual(problems.map((p) => [p.file, p.line]), [['docs/public/x.md', 1]]);
  });
});

describe('command line', () => {
  const run = (args, env = {}) => spawnSync(process.execPath, [SCRIPT, ...args], {
    encoding: 'utf8', env: { ...process.env, ...env },
  });

  test('--help prints usage', () => {
    const res = run(['--help']);
    assert.equal(res.status, 0);
    assert.match(res.stdout, /^usage: node scripts\/validate-public-docs\.mjs/);
  });
  test('unknown argument exits 2', () => {
    assert.equal(run(['--bogus']).status, 2);
  });
  test('exit 0 and a summary on a good tree', () => {
    const { root, kandev } = fixture();
    const res = run(['--root', root, '--kandev', kandev]);
    assert.equal(res.stderr, '');
    assert.equal(res.status, 0);
    assert.equal(res.stdout, 'docs ok: 3 pages, 4 tools\n');
  });
  test('exit 1 with file:line messages on a bad tree; KANDEV_BIN is honoured', () => {
    const { root, docs, kandev } = fixture({ pages: extra('# Extra\n\n# Again\n\n[x](nope.md)\n') });
    const res = run(['--root', root, '--docs', docs], { KANDEV_BIN: kandev });
    assert.equal(res.status, 1);
    assert.equal(res.stdout, '');
    const lines = res.stderr.trim().split('\n');
    assert.deepEqual(lines.slice(0, 2), [
      'docs/public/extra.md:7: more than one H1 (the first is on line 5); use `##` for sections',
      'docs/public/extra.md:9: link `nope.md`: docs/public/nope.md does not exist',
    ]);
    assert.equal(lines[2], 'docs check failed: 2 problems');
  });
  test('a missing binary exits 1 with the build hint', () => {
    const { root } = fixture({ kandev: 'missing' });
    const res = run(['--root', root], { KANDEV_BIN: '' });
    assert.equal(res.status, 1);
    assert.match(res.stderr, /^cannot run kandev tools: build it with `make build` \(.*apps\/backend\/bin\/kandev not found\)$/m);
  });
});

describe('parseArgs', () => {
  test('defaults follow --root; KANDEV_BIN overrides the binary', () => {
    assert.deepEqual(parseArgs(['--root', '/r'], {}), { root: '/r', docs: '/r/docs/public', kandev: '/r/apps/backend/bin/kandev' });
    assert.equal(parseArgs(['--root=/r'], { KANDEV_BIN: '/x/kandev' }).kandev, '/x/kandev');
    assert.equal(parseArgs(['--root', '/r', '--kandev', 'kandev'], {}).kandev, 'kandev');
    assert.throws(() => parseArgs(['--docs']), /needs a value/);
  });
});

describe('cited tests', () => {
  const goFiles = {
    'backend/internal/app/attack_test.go': 'package app\n\nfunc TestAttackThing(t *testing.T) {}\nfunc FuzzPaths(f *testing.F) {}\n',
    'backend/internal/app/helper.go': 'package app\n\nfunc TestNotATest(t *testing.T) {}\n',
  };
  test('a cited test, fuzz target or benchmark that exists passes', () => {
    assertOk({ goFiles, pages: extra('# X\n\nProved by `TestAttackThing` and `FuzzPaths`.\n') });
  });
  test('a cited test that does not exist fails on its line', () => {
    assertOne({ goFiles, pages: extra('# X\n\nline\nProved by `TestAttackGone`.\n') }, /extra\.md:8: cites `TestAttackGone`, which is no test/);
  });
  test('a function outside a _test.go file is not a test', () => {
    assertOne({ goFiles, pages: extra('# X\n\nProved by `TestNotATest`.\n') }, /cites `TestNotATest`/);
  });
  test('words that merely start with Test are not citations', () => {
    assertOk({ goFiles, pages: extra('# X\n\nTesting and `Testify` and Test plans.\n') });
  });
});
