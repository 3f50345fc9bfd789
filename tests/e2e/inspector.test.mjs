// Smoke test with the MCP Inspector CLI (@modelcontextprotocol/inspector
// 2.x, headless --cli mode, run through npx from the lockfile with the
// Node 22 binary it needs): list tools and call one over stdio
// (`kandev mcp`) and over Streamable HTTP (the external /mcp endpoint).
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

import {
  E2E_DIR, KANDEV, node22, createSession, createTask, operatorClient, run, startBackend,
} from './lib/kandev.mjs';

let home;

/**
 * Runs `npx @modelcontextprotocol/inspector --cli ...args` and resolves
 * with { code, out, err }. The inspector keeps state under $HOME, so it
 * gets a temporary one; npx resolves the locally installed package only.
 */
async function inspector(args) {
  const env = {
    HOME: home,
    PATH: `${dirname(node22())}:${process.env.PATH}`,
    npm_config_update_notifier: 'false',
    npm_config_audit: 'false',
    npm_config_fund: 'false',
  };
  try {
    const out = await run('npx', ['--no-install', '@modelcontextprotocol/inspector', '--cli', '--format', 'json', ...args],
      { env, cwd: E2E_DIR, timeoutMs: 60_000 });
    return { code: 0, out, err: '' };
  } catch (e) {
    if (typeof e.code !== 'number') throw e; // spawn failure or timeout
    return { code: e.code, out: e.stdout, err: e.stderr };
  }
}

function names(res) {
  assert.equal(res.code, 0, `inspector failed (${res.code}): ${res.out}\n${res.err}`);
  return JSON.parse(res.out).result.tools.map((t) => t.name).sort();
}

async function catalogNames(mode) {
  return JSON.parse(await run(KANDEV, ['tools', '--mode', mode, '--json'])).map((t) => t.name).sort();
}

describe('MCP Inspector CLI', { timeout: 180_000 }, () => {
  let b;
  let session;
  before(async () => {
    home = await mkdtemp(join(tmpdir(), 'kandev-e2e-inspector-'));
    b = await startBackend();
    const op = await operatorClient(b);
    session = await createSession(b, await createTask(op, 'Inspector task'));
    await op.close();
  });
  after(async () => {
    await b?.stop();
    if (home) await rm(home, { recursive: true, force: true });
  });

  const stdioTarget = () => ['-e', `KANDEV_SESSION_TOKEN=${session.token}`, '--',
    KANDEV, 'mcp', '--backend', b.url, '--session', session.sessionId];
  const httpTarget = () => [`${b.url}/mcp`, '--header', `Authorization: Bearer ${b.token}`];

  it('lists the task-mode tools over stdio', async () => {
    const res = await inspector(['--method', 'tools/list', ...stdioTarget()]);
    assert.deepEqual(names(res), await catalogNames('task'));
  });

  it('lists the external tools over HTTP with the bearer header', async () => {
    const res = await inspector(['--method', 'tools/list', ...httpTarget()]);
    assert.deepEqual(names(res), await catalogNames('external'));
  });

  for (const [transport, target] of [['stdio', stdioTarget], ['HTTP', httpTarget]]) {
    it(`calls list_workspaces_kandev over ${transport}`, async () => {
      const res = await inspector(['--method', 'tools/call', '--tool-name', 'list_workspaces_kandev', ...target()]);
      assert.equal(res.code, 0, `${res.out}\n${res.err}`);
      const { result } = JSON.parse(res.out);
      assert.notEqual(result.isError, true);
      assert.equal(result.structuredContent.items.length, 1);
      assert.equal(result.structuredContent.items[0].name, 'Default');
    });

    it(`reports invalid arguments as a tool error over ${transport} (exit 5)`, async () => {
      const res = await inspector(['--method', 'tools/call', '--tool-name', 'list_tasks_kandev',
        '--tool-args-json', '{"limit":0}', ...target()]);
      assert.equal(res.code, 5, `${res.out}\n${res.err}`);
      const { result } = JSON.parse(res.out);
      assert.equal(result.isError, true);
      assert.equal(result.content[0].text, 'invalid arguments for list_tasks_kandev: /limit: must be >= 1 (minimum)');
    });
  }

  it('finds no error-severity schema portability problem (--strict)', async () => {
    const res = await inspector(['--method', 'tools/list', '--strict', ...httpTarget()]);
    assert.equal(res.code, 0, `--strict reported problems (exit ${res.code}):\n${res.err}`);
  });

  it('cannot connect over HTTP without the bearer token', async () => {
    const res = await inspector(['--method', 'tools/list', '--stored-auth-only', `${b.url}/mcp`]);
    assert.notEqual(res.code, 0);
    assert.match(res.err + res.out, /auth_required/, `backend ${b.url} (exit ${b.child.exitCode}) stderr:\n${b.stderr()}`);
  });
});
