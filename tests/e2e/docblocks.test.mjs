// The executable-docs convention (lib/docblocks.mjs) on small pages of its own.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { containsLines, inputBlock, outputValues, readBlocks, setupBlocks, substitute } from './lib/docblocks.mjs';

let dir;
before(async () => { dir = await mkdtemp(join(tmpdir(), 'kandev-docblocks-')); });
after(() => rm(dir, { recursive: true, force: true }));

async function page(text) {
  const p = join(dir, `p${Math.random().toString(36).slice(2)}.md`);
  await writeFile(p, text);
  return p;
}

describe('docblocks', () => {
  it('reads marked blocks in order and skips unmarked ones', async () => {
    const p = await page([
      '# T', '', '```bash', 'echo example', '```', '',
      '<!-- e2e: start -->', '```bash', 'make run', '```',
      'Text mentioning `<!-- e2e: run -->` inline is prose.',
      '<!-- e2e: run session_id=SESSION_ID token=SESSION_TOKEN -->', '```bash', 'kandev session create', '# session_id=…', '```',
      '<!-- e2e: setup claude-stdio -->', '```bash', 'claude mcp add x', '```nested', '```',
      '<!-- e2e: setup codex file=~/.codex/config.toml -->', '```toml', '[a]', 'b = 1', '```', '',
      '<!-- e2e: output -->', '```text', 'serving on x', '```',
      '1. A list item:', '', '   <!-- e2e: input mock-prompt -->', '   ```text', '   hello', '   @say hi', '   ```',
    ].join('\n'));
    const blocks = await readBlocks(p);
    assert.deepEqual(blocks.map((b) => [b.kind, b.id, b.file, b.lang, b.code]), [
      ['start', '', '', 'bash', 'make run'],
      ['run', '', '', 'bash', 'kandev session create\n# session_id=…'],
      ['setup', 'claude-stdio', '', 'bash', 'claude mcp add x\n```nested'],
      ['setup', 'codex', '~/.codex/config.toml', 'toml', '[a]\nb = 1'],
      ['output', '', '', 'text', 'serving on x'],
      ['input', 'mock-prompt', '', 'text', 'hello\n@say hi'],
    ]);
    assert.equal(inputBlock(blocks, 'mock-prompt').code, 'hello\n@say hi');
    assert.throws(() => inputBlock(blocks, 'other'), /0 e2e input blocks "other"/);
    assert.deepEqual(blocks[1].vars, { session_id: 'SESSION_ID', token: 'SESSION_TOKEN' });
    assert.equal(blocks[0].line, 8);
    assert.equal(setupBlocks(blocks, 'codex').length, 1);
    assert.throws(() => setupBlocks(blocks, 'gemini'), /no e2e setup block "gemini"/);
  });

  it('refuses markers it cannot follow', async () => {
    for (const [text, want] of [
      ['<!-- e2e: run -->\nnot a fence', /right before a fenced block/],
      ['<!-- e2e: runs -->\n```bash\nx\n```', /malformed e2e marker/],
      ['<!-- e2e: setup -->\n```bash\nx\n```', /needs an id/],
      ['<!-- e2e: run x -->\n```bash\nx\n```', /unexpected "x"/],
      ['<!-- e2e: run -->\n```bash\nx', /unclosed fence/],
      ['<!-- e2e: input -->\n```text\nx\n```', /input marker needs an id/],
      ['<!-- e2e: output x -->\n```text\nx\n```', /unexpected "x"/],
      ['<!-- e2e: output -->\n```text\nx\n```', /needs a start or run block before it/],
    ]) {
      await assert.rejects(readBlocks(await page(text)), want);
    }
  });

  it('substitutes whole placeholders only, longest first', () => {
    const got = substitute('KANDEV_SESSION_TOKEN=SESSION_TOKEN /absolute/path/to/kandev/apps/backend/bin/kandev http://127.0.0.1:38429/mcp SESSION_IDS',
      { SESSION_TOKEN: 't$&', SESSION_ID: 's', '/absolute/path/to/kandev/apps/backend/bin/kandev': '/bin/k', '127.0.0.1:38429': '127.0.0.1:9' });
    assert.equal(got, 'KANDEV_SESSION_TOKEN=t$& /bin/k http://127.0.0.1:9/mcp SESSION_IDS');
    assert.throws(() => substitute('x', { NOT_A_PLACEHOLDER: 'y' }), /unknown placeholder/);
  });

  it('finds output lines in order and consecutively', () => {
    const got = 'make[1]: building\nline one\nline two  \nafter\n';
    assert.equal(containsLines(got, 'line one\nline two'), true);
    assert.equal(containsLines(got, 'line two\nline one'), false);
    assert.equal(containsLines(got, 'line one\nafter'), false);
    assert.equal(containsLines(got, 'line on'), false);
  });

  it('parses key=value output lines', () => {
    assert.deepEqual(outputValues('task_id=a\nsession_id=b-1\nnoise line\ntoken=c\n'), { task_id: 'a', session_id: 'b-1', token: 'c' });
  });
});
