// make test-agents: the npm agents of the reference's agent types that
// make test does not install (Codex's ACP adapter, OpenCode, Auggie, Qwen
// Code, Factory Droid, Pi with the pi CLI it runs), pinned in this directory's lockfile. Kandev's
// agent.detect must find each installed with the version its ACP
// initialize answers (the agents file points each type at its binary
// here), and each must answer a real ACP initialize + session/new
// handshake: a session, or a refusal that it needs its vendor's login
// (no model account is available here). Model APIs point at a dead
// loopback port, so nothing reaches a vendor.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtemp, writeFile, rm, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startBackend, operatorWS, withTimeout, node22 } from '../e2e/lib/kandev.mjs';

const HERE = dirname(fileURLToPath(import.meta.url));
const bin = (name) => join(HERE, 'node_modules', '.bin', name);

// Agent type → its package, and its ACP launch from this directory.
const AGENTS = {
  codex: { pkg: '@agentclientprotocol/codex-acp', command: bin('codex-acp'), args: [] },
  // opencode-ai's wrapper needs its postinstall (npm ci --ignore-scripts
  // skips it); its platform package holds the binary it would link.
  opencode: { pkg: 'opencode-ai', command: join(HERE, 'node_modules', 'opencode-linux-x64', 'bin', 'opencode'), args: ['acp'] },
  auggie: { pkg: '@augmentcode/auggie', command: bin('auggie'), args: ['--acp'] },
  qwen: { pkg: '@qwen-code/qwen-code', command: bin('qwen'), args: ['--acp'] },
  droid: { pkg: 'droid', command: bin('droid'), args: ['exec', '--output-format', 'acp'] },
  // pi-acp runs the pi CLI (@earendil-works/pi-coding-agent) from PATH,
  // which needs Node >= 22.19 (tests/e2e's pinned Node 22 goes first).
  pi: { pkg: 'pi-acp', command: bin('pi-acp'), args: [], path: true },
};

const DEAD = 'http://127.0.0.1:9';
const ENV = { OPENAI_BASE_URL: `${DEAD}/v1`, OPENAI_API_KEY: 'test-key-not-a-secret', ANTHROPIC_BASE_URL: DEAD, GOOGLE_GEMINI_BASE_URL: DEAD };

async function version(pkg) {
  return JSON.parse(await readFile(join(HERE, 'node_modules', pkg, 'package.json'), 'utf8')).version;
}

// handshake drives initialize then session/new over the agent's stdio and
// returns what session/new answered; the process group is killed after.
async function handshake(command, args, env, cwd) {
  const p = spawn(command, args, { cwd, env, stdio: ['pipe', 'pipe', 'ignore'], detached: true });
  const answers = new Map();
  let buf = '';
  p.stdout.on('data', (d) => {
    buf += d;
    for (let i = buf.indexOf('\n'); i >= 0; i = buf.indexOf('\n')) {
      const line = buf.slice(0, i);
      buf = buf.slice(i + 1);
      try { const m = JSON.parse(line); if (m.id && answers.has(m.id)) answers.get(m.id)(m); } catch { /* not JSON-RPC */ }
    }
  });
  const call = (id, method, params) => withTimeout(new Promise((res) => {
    answers.set(id, res);
    p.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id, method, params })}\n`);
  }), 60_000, method);
  try {
    const init = await call(1, 'initialize', { protocolVersion: 1, clientCapabilities: {}, clientInfo: { name: 'kandev-test-agents', version: '1' } });
    assert.ok(init.result, `initialize: ${JSON.stringify(init.error)}`);
    return await call(2, 'session/new', { cwd, mcpServers: [] });
  } finally {
    try { process.kill(-p.pid, 'SIGKILL'); } catch { /* already gone */ }
  }
}

test('agent.detect finds every npm agent of this lockfile with its version', { timeout: 300_000 }, async (t) => {
  const dataDir = await mkdtemp(join(tmpdir(), 'kandev-agents-'));
  const home = await mkdtemp(join(tmpdir(), 'kandev-agents-home-'));
  t.after(() => rm(home, { recursive: true, force: true }));
  await writeFile(join(dataDir, 'agents.json'), JSON.stringify(Object.fromEntries(
    Object.entries(AGENTS).map(([name, a]) => [name, { command: a.command, args: a.args }]))));
  const b = await startBackend({ agents: true, dataDir, env: { HOME: home, ...ENV } });
  t.after(() => b.stop());
  const ws = await operatorWS(b);
  t.after(() => ws.close());
  const got = {};
  let cursor;
  do {
    const page = await ws.request('agent.detect', { refresh: !cursor, limit: 50, ...(cursor ? { cursor } : {}) }, 240_000);
    for (const d of page.items) got[d.name] = d;
    cursor = page.next_cursor;
  } while (cursor);
  for (const [name, a] of Object.entries(AGENTS)) {
    t.diagnostic(`${name}: ${got[name].status} ${got[name].version ?? ''} ${got[name].detail ?? ''}`);
    assert.equal(got[name].status, 'installed', `${name}: ${JSON.stringify(got[name])}`);
    assert.match(got[name].version, new RegExp(`^${(await version(a.pkg)).replaceAll('.', '\\.')}`), `${name}'s initialize answered its package's version`);
  }
});

for (const [name, a] of Object.entries(AGENTS)) {
  test(`${name}: a real ACP initialize + session/new handshake`, { timeout: 120_000 }, async (t) => {
    const home = await mkdtemp(join(tmpdir(), `kandev-agents-${name}-`));
    t.after(() => rm(home, { recursive: true, force: true }));
    const path = a.path ? `${dirname(node22())}:${join(HERE, 'node_modules', '.bin')}:${process.env.PATH}` : process.env.PATH;
    const ans = await handshake(a.command, a.args, { PATH: path, HOME: home, ...ENV }, home);
    if (ans.result) {
      assert.ok(ans.result.sessionId, JSON.stringify(ans.result).slice(0, 500));
      const models = ans.result.models?.availableModels?.map((m) => m.modelId)
        ?? ans.result.configOptions?.find((o) => o.category === 'model')?.options?.map((o) => o.value) ?? [];
      t.diagnostic(`${name}: session ${ans.result.sessionId}; ${models.length} models offered`);
    } else {
      // The session/new of an agent that needs its vendor's login.
      assert.match(ans.error.message, /auth|login|api key|credential/i, JSON.stringify(ans.error).slice(0, 500));
      t.diagnostic(`${name}: session/new refused: ${ans.error.message.slice(0, 200)}`);
    }
  });
}
