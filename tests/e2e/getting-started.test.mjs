// docs/public/getting-started.md, executed: its `start` and `run` blocks
// (lib/docblocks.mjs) run in page order from the checkout's root as a
// fresh user (empty HOME), `make run` on a fresh data dir and a free port.
// Exports of one block carry over to the next, as in one terminal; the
// page's `127.0.0.1:38429` is the test backend's address, which CLI
// commands reach through KANDEV_BACKEND (the test never binds 38429).
// Afterwards the board shows what the page did.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { homedir, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

import { E2E_DIR, callTool, operatorClient, stopProcess, waitFor, withTimeout } from './lib/kandev.mjs';
import { outputValues, readBlocks, substitute } from './lib/docblocks.mjs';
import { runGroup } from './lib/agents.mjs';

const ROOT = resolve(E2E_DIR, '../..');
const PAGE = join(ROOT, 'docs/public/getting-started.md');

/** The user's environment without Kandev's variables, with a fresh HOME (Go and npm keep their caches). */
function userEnv(home) {
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('KANDEV_')));
  const goEnv = JSON.parse(execFileSync('go', ['env', '-json', 'GOCACHE', 'GOMODCACHE', 'GOPATH'], { encoding: 'utf8' }));
  return {
    ...env, ...goEnv, HOME: home,
    npm_config_cache: process.env.npm_config_cache ?? join(homedir(), '.npm'),
    npm_config_update_notifier: 'false', npm_config_fund: 'false', npm_config_audit: 'false',
  };
}

/** Parses `env -0` output. */
function parseEnv(raw) {
  return Object.fromEntries(raw.split('\0').filter(Boolean).map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]));
}

describe('getting started, executed', { timeout: 600_000 }, () => {
  let home;
  let dataDir;
  let server;
  let serverOut = '';
  let url;
  let env;
  const values = {};
  const ran = [];

  before(async () => {
    home = await mkdtemp(join(tmpdir(), 'kandev-gs-home-'));
    dataDir = await mkdtemp(join(tmpdir(), 'kandev-gs-data-'));
    env = userEnv(home);
  });
  after(async () => {
    if (server) await stopGroup(server);
    await rm(home, { recursive: true, force: true });
    await rm(dataDir, { recursive: true, force: true });
  });

  it('runs every marked block of the page in order', async (t) => {
    const blocks = (await readBlocks(PAGE)).filter((b) => b.kind !== 'setup');
    assert.ok(blocks.some((b) => b.kind === 'start'), 'the page starts the backend');
    for (const block of blocks) {
      const code = substitute(block.code, url ? { ...values, '127.0.0.1:38429': new URL(url).host } : values);
      if (block.kind === 'start') {
        url = await start(code);
        env.KANDEV_BACKEND = url;
        t.diagnostic(`line ${block.line}: backend on ${url}`);
        continue;
      }
      const state = join(home, '.e2e-env');
      const r = await runGroup('bash', ['-euo', 'pipefail', '-c', `${code}\nenv -0 > '${state}'`], { cwd: ROOT, env, timeoutMs: 180_000 });
      assert.equal(r.code, 0, `block at line ${block.line} failed (${r.code}${r.timedOut ? ', timed out' : ''}):\n${code}\n--- stdout\n${r.stdout}\n--- stderr\n${r.stderr}`);
      env = parseEnv(await readFile(state, 'utf8'));
      const out = outputValues(r.stdout);
      for (const [key, placeholder] of Object.entries(block.vars)) {
        assert.ok(out[key], `block at line ${block.line} printed no ${key}=`);
        values[placeholder] = out[key];
      }
      ran.push({ line: block.line, stdout: r.stdout });
      t.diagnostic(`line ${block.line}: ok`);
    }
  });

  it('left the board as the page says', async () => {
    assert.ok(url && env.KANDEV_TOKEN, 'the page ran to the end');
    const op = await operatorClient({ url, token: env.KANDEV_TOKEN });
    try {
      const tasks = await callTool(op, 'list_tasks_kandev', { limit: 200 });
      assert.ok(tasks.structuredContent.items.some((x) => x.title === 'Try Kandev'), 'the task "Try Kandev" exists');
      const sessions = await callTool(op, 'list_task_sessions_kandev', { task_id: tasks.structuredContent.items.find((x) => x.title === 'Try Kandev').id });
      const s = sessions.structuredContent.items.find((x) => x.id === values.SESSION_ID);
      assert.equal(s?.mcp_mode, 'config', `the session was switched to config: ${JSON.stringify(sessions.structuredContent)}`);
    } finally { await op.close(); }
    // Both Inspector calls listed the task.
    assert.equal(ran.filter((r) => r.stdout.includes('Try Kandev')).length >= 2, true, 'the Inspector calls returned the task');
  });

  it('stopping the backend removes its registry record', async () => {
    assert.ok(server, 'the backend was started');
    const dir = join(home, '.cache', 'kandev', 'backends');
    assert.equal((await readdir(dir)).length, 1, 'one record while it runs');
    await stopGroup(server);
    server = undefined;
    // make and bash may end before kandev has finished shutting down.
    await waitFor(async () => (await readdir(dir)).length === 0, 15_000, 'the record to go');
  });

  /** Starts a start block in its own process group; resolves with the banner's URL. */
  function start(code) {
    server = spawn('bash', ['-euo', 'pipefail', '-c', code], {
      cwd: ROOT, detached: true, stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...env, KANDEV_ADDR: '127.0.0.1:0', KANDEV_DATA_DIR: dataDir },
    });
    server.stderr.on('data', (b) => { serverOut += b; });
    return withTimeout(new Promise((resolveUrl, reject) => {
      server.stdout.on('data', (b) => {
        serverOut += b;
        const m = /serving on (http:\/\/127\.0\.0\.1:\d+)/.exec(serverOut);
        if (m) resolveUrl(m[1]);
      });
      server.once('exit', (c) => reject(new Error(`the start block exited (${c}) before serving:\n${serverOut}`)));
    }), 300_000, `the start block (make run):\n${serverOut}`);
  }
});

/** SIGTERM to a detached child's process group, SIGKILL after 10 s. */
async function stopGroup(child) {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  try { process.kill(-child.pid, 'SIGTERM'); } catch { /* gone */ }
  const timer = setTimeout(() => { try { process.kill(-child.pid, 'SIGKILL'); } catch { /* gone */ } }, 10_000);
  await exited;
  clearTimeout(timer);
  await stopProcess(child);
}
