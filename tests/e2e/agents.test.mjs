// The agents people use, against a real backend: Claude Code, Gemini CLI
// and Codex (from the lockfile), each configured with the setup blocks of
// docs/public/getting-started.md, run headless as a throwaway user with
// their model API replaced by the scripted fake model (lib/fakemodel.mjs).
// Each test checks Kandev's side (the call had its effect) and the fake's
// side (which Kandev tools the client declared to its model, as it names
// them); the refusal tests check that a refused token gets the server
// reported failed, with kandev mcp's reason in the client's own log.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';

import { KANDEV, createSession, createTask, kandevCLI, operatorClient, operatorWS, run, startBackend, callTool, text } from './lib/kandev.mjs';
import { startFakeModel } from './lib/fakemodel.mjs';
import { readBlocks, setupBlocks } from './lib/docblocks.mjs';
import { CLIENTS, agentUser, applySetup, claudeServers, clientVersion, mcpList, runClient } from './lib/agents.mjs';

const PAGE = new URL('../../docs/public/getting-started.md', import.meta.url).pathname;
const REVOKED = 'the backend refused the session token';

let b;
let blocks;
const catalog = {};

before(async () => {
  blocks = await readBlocks(PAGE);
  b = await startBackend();
  for (const mode of ['task', 'external']) {
    catalog[mode] = JSON.parse(await run(KANDEV, ['tools', '--mode', mode, '--json'])).map((t) => t.name).sort();
  }
});
after(() => b?.stop());

/** The placeholder values for backend b and user u. */
function values(u, session = {}) {
  return {
    '/absolute/path/to/kandev/apps/backend/bin/kandev': KANDEV,
    '/path/to/your/project': u.project,
    '127.0.0.1:38429': new URL(b.url).host,
    SESSION_ID: session.sessionId ?? 'no-session',
    SESSION_TOKEN: session.token ?? 'no-session',
    OPERATOR_TOKEN: b.token,
  };
}

/** A fresh user with the setup blocks ids applied (KANDEV_TOKEN exported, as step 1 of the page does). */
async function configured(ids, session, { operatorToken = b.token } = {}) {
  const u = await agentUser();
  const env = u.env({ KANDEV_TOKEN: operatorToken });
  for (const id of ids) await applySetup(u, setupBlocks(blocks, id), values(u, session), env);
  return u;
}

/** Asserts the client declared exactly the mode's tools (as it names them) and called tool once, successfully. */
function assertFakeSide(name, fake, api, mode, tool) {
  const mangle = CLIENTS[name].toolName;
  const kandev = fake.toolsDeclared(api).filter((n) => n.startsWith(mangle('')));
  assert.deepEqual(kandev.sort(), catalog[mode].map(mangle).sort(), `${name} declared Kandev's ${mode} tools`);
  const calls = fake.calls.filter((c) => c.name === mangle(tool));
  assert.equal(calls.length, 1, `one ${tool} call, got ${JSON.stringify(fake.calls)}`);
  const results = fake.results.filter((r) => r.name === mangle(tool));
  assert.equal(results.length, 1, `one ${tool} result, got ${JSON.stringify(fake.results).slice(0, 500)}`);
  assert.equal(results[0].isError, false, `the tool result is no error: ${results[0].text.slice(0, 500)}`);
  return kandev.length;
}

function assertExited(r, what) {
  assert.equal(r.timedOut, false, `${what} timed out:\n${r.stdout.slice(-2000)}\n${r.stderr.slice(-2000)}`);
}

const API = { claude: 'anthropic', gemini: 'gemini', codex: 'openai' };
const STDIO_SETUP = { claude: ['claude-stdio'], gemini: ['gemini-trust', 'gemini-stdio'], codex: ['codex-stdio'] };
const HTTP_SETUP = { claude: ['claude-http'], gemini: ['gemini-trust', 'gemini-http'], codex: ['codex-http'] };

for (const name of Object.keys(CLIENTS)) {
  describe(`${name} (real CLI, fake model)`, { timeout: 300_000 }, () => {
    it('stdio: the session\'s kandev mcp serves every task tool; a plan is written', async (t) => {
      t.diagnostic(`${CLIENTS[name].pkg} ${await clientVersion(name)}`);
      const op = await operatorClient(b);
      const taskId = await createTask(op, `${name} over stdio`);
      await op.close();
      const session = await createSession(b, taskId);
      const u = await configured(STDIO_SETUP[name], session);
      const content = `Plan written by ${name} over stdio`;
      const fake = await startFakeModel({ tool: 'create_task_plan_kandev', args: { title: 'Agent plan', content } });
      try {
        const r = await runClient(name, u, fake, 'Write the plan for my Kandev task');
        assertExited(r, name);
        assert.equal(r.code, 0, `${name} failed:\n${r.stdout.slice(-3000)}\n${r.stderr.slice(-3000)}`);
        const n = assertFakeSide(name, fake, API[name], 'task', 'create_task_plan_kandev');
        t.diagnostic(`${name} declared ${n} task-mode tools, e.g. ${CLIENTS[name].toolName('list_tasks_kandev')}`);
        const ws = await operatorWS(b);
        try {
          const plan = await ws.request('plan.get', { task_id: taskId });
          assert.equal(plan.content, content);
        } finally { ws.close(); }
      } finally {
        await fake.close();
        await u.cleanup();
      }
    });

    it('HTTP: /mcp with the operator token serves every external tool; a task is created', async (t) => {
      const u = await configured(HTTP_SETUP[name]);
      const title = `Task from ${name} over HTTP`;
      const fake = await startFakeModel({ tool: 'create_task_kandev', args: { title, start_agent: false } });
      try {
        // Codex reads the token from its own environment (bearer_token_env_var).
        const r = await runClient(name, u, fake, 'Create a Kandev task', { extraEnv: { KANDEV_TOKEN: b.token } });
        assertExited(r, name);
        assert.equal(r.code, 0, `${name} failed:\n${r.stdout.slice(-3000)}\n${r.stderr.slice(-3000)}`);
        const n = assertFakeSide(name, fake, API[name], 'external', 'create_task_kandev');
        t.diagnostic(`${name} declared ${n} external tools`);
        const op = await operatorClient(b);
        try {
          const list = await callTool(op, 'list_tasks_kandev', { limit: 200 });
          assert.equal(list.isError, undefined, text(list));
          assert.equal(list.structuredContent.items.filter((x) => x.title === title).length, 1);
        } finally { await op.close(); }
      } finally {
        await fake.close();
        await u.cleanup();
      }
    });

    it('a revoked session token: the server is reported failed, with kandev mcp\'s reason', async () => {
      const op = await operatorClient(b);
      const taskId = await createTask(op, `${name} revoked`);
      await op.close();
      const session = await createSession(b, taskId);
      const u = await configured(STDIO_SETUP[name], session);
      await kandevCLI(b, ['session', 'token', '--session', session.sessionId]); // replaces the token
      const fake = await startFakeModel({ tool: 'list_tasks_kandev' });
      try {
        await assertRefused(name, u, fake, { stdio: true });
      } finally {
        await fake.close();
        await u.cleanup();
      }
    });

    it('a wrong operator token: the server is reported failed', async () => {
      const u = await configured(HTTP_SETUP[name], {}, { operatorToken: 'not-the-operator-token' });
      const fake = await startFakeModel({ tool: 'list_tasks_kandev' });
      try {
        await assertRefused(name, u, fake, { extraEnv: { KANDEV_TOKEN: 'not-the-operator-token' } });
      } finally {
        await fake.close();
        await u.cleanup();
      }
    });
  });
}

/**
 * Runs the client against a server that refuses it and asserts what the
 * docs say each client shows: a failed server within the run's bound,
 * no Kandev tool offered to the model, and (stdio) kandev mcp's stderr
 * line in the client's log.
 */
async function assertRefused(name, u, fake, { stdio = false, extraEnv = {} } = {}) {
  const r = await runClient(name, u, fake, 'List my Kandev tasks', { extraEnv, args: name === 'gemini' ? ['--debug'] : [] });
  assertExited(r, name);
  assert.equal(fake.calls.filter((c) => c.name.includes('kandev')).length, 0, 'no Kandev tool was called');
  const out = `${r.stdout}\n${r.stderr}`;
  if (name === 'claude') {
    assert.equal(claudeServers(r.stdout).kandev, 'failed', r.stdout.slice(0, 2000));
    const list = await mcpList(name, u, extraEnv);
    assert.match(list.stdout + list.stderr, /kandev: .* - ✘ Failed to connect/);
    if (stdio) assert.ok((await claudeMcpLogs(u)).includes(REVOKED), 'the MCP log holds kandev mcp\'s reason');
  } else if (name === 'gemini') {
    const list = await mcpList(name, u, extraEnv);
    assert.match(list.stdout + list.stderr, /✗ kandev: .* - Disconnected/);
    if (stdio) assert.match(out, new RegExp(`\\[MCP STDERR \\(kandev\\)\\]:\\s+kandev: ${REVOKED}`));
  } else {
    assert.notEqual(r.code, 0, 'codex exec fails when a required server cannot start');
    const list = await mcpList(name, u, extraEnv); // reads the configuration only
    assert.match(list.stdout + list.stderr, /^kandev\s.*\senabled\s/m);
    assert.match(out, /required MCP servers failed to initialize: kandev/);
    if (stdio) assert.match(out, new RegExp(`MCP server stderr .*kandev: ${REVOKED}`));
  }
}

/** Everything Claude Code logged about the kandev server (~/.cache/claude-cli-nodejs/<project>/mcp-logs-kandev/). */
async function claudeMcpLogs(u) {
  const base = join(u.home, '.cache', 'claude-cli-nodejs');
  let all = '';
  for (const project of await readdir(base)) {
    const dir = join(base, project, 'mcp-logs-kandev');
    for (const f of await readdir(dir).catch(() => [])) all += await readFile(join(dir, f), 'utf8');
  }
  return all;
}

describe('the approval steps the page documents', { timeout: 120_000 }, () => {
  it('Claude Code: a project .mcp.json server waits for approval; headless runs use it', async () => {
    const op = await operatorClient(b);
    const session = await createSession(b, await createTask(op, 'claude project server'));
    await op.close();
    const u = await configured(['claude-project'], session);
    const fake = await startFakeModel({ tool: 'list_tasks_kandev', args: { limit: 5 } });
    try {
      const list = await mcpList('claude', u);
      assert.match(list.stdout + list.stderr, /kandev: .* - ⏸ Pending approval/);
      const r = await runClient('claude', u, fake, 'List my Kandev tasks');
      assertExited(r, 'claude');
      assert.equal(r.code, 0, r.stderr);
      assert.equal(claudeServers(r.stdout).kandev, 'connected');
      assertFakeSide('claude', fake, 'anthropic', 'task', 'list_tasks_kandev');
    } finally {
      await fake.close();
      await u.cleanup();
    }
  });

  it('Claude Code: a headless run without --allowedTools is denied the call', async () => {
    const op = await operatorClient(b);
    const session = await createSession(b, await createTask(op, 'claude not allowed'));
    await op.close();
    const u = await configured(['claude-stdio'], session);
    const fake = await startFakeModel({ tool: 'list_tasks_kandev' });
    try {
      const r = await runClient('claude', u, fake, 'List my Kandev tasks', { allow: false });
      assertExited(r, 'claude');
      const result = fake.results.find((x) => x.name === 'mcp__kandev__list_tasks_kandev');
      assert.equal(result?.isError, true, `the call is refused: ${JSON.stringify(fake.results)}`);
    } finally {
      await fake.close();
      await u.cleanup();
    }
  });

  it('Gemini CLI: servers stay disabled until the folder is trusted', async () => {
    const op = await operatorClient(b);
    const session = await createSession(b, await createTask(op, 'gemini trust'));
    await op.close();
    const u = await configured(['gemini-stdio'], session);
    try {
      const untrusted = await mcpList('gemini', u);
      assert.match(untrusted.stdout + untrusted.stderr, /disabled because this folder is untrusted/);
      await applySetup(u, setupBlocks(blocks, 'gemini-trust'), values(u, session), u.env());
      const trusted = await mcpList('gemini', u);
      assert.match(trusted.stdout + trusted.stderr, /✓ kandev: .* - Connected/);
    } finally {
      await u.cleanup();
    }
  });
});

describe('Claude Code: the two `claude mcp add` forms share a name', { timeout: 120_000 }, () => {
  it('the second fails with "already exists"; the page\'s remove step makes room for it', async () => {
    const op = await operatorClient(b);
    const session = await createSession(b, await createTask(op, 'claude switch forms'));
    await op.close();
    const u = await configured(['claude-stdio'], session);
    try {
      await assert.rejects(configuredAgain(u, 'claude-http', session), /MCP server kandev already exists in local config/);
      await configuredAgain(u, 'claude-remove', session);
      await configuredAgain(u, 'claude-http', session);
      const list = await mcpList('claude', u);
      assert.match(list.stdout, /^kandev: http:\/\/127\.0\.0\.1:\d+\/mcp \(HTTP\) - ✔ Connected$/m, list.stdout);
      assert.equal((list.stdout.match(/^kandev/gm) ?? []).length, 1, `one kandev server: ${list.stdout}`);
    } finally {
      await u.cleanup();
    }
  });

  it('renamed, the second one is added beside the first and both connect', async () => {
    const op = await operatorClient(b);
    const session = await createSession(b, await createTask(op, 'claude both forms'));
    await op.close();
    const u = await configured(['claude-stdio', 'claude-http-renamed'], session);
    try {
      const list = await mcpList('claude', u);
      assert.match(list.stdout, /^kandev: .* - ✔ Connected$/m, list.stdout);
      assert.match(list.stdout, /^kandev-operator: http:\/\/127\.0\.0\.1:\d+\/mcp \(HTTP\) - ✔ Connected$/m, list.stdout);
    } finally {
      await u.cleanup();
    }
  });
});

/** Applies one more setup block for user u, as the page's reader would type it next. */
function configuredAgain(u, id, session) {
  return applySetup(u, setupBlocks(blocks, id), values(u, session), u.env({ KANDEV_TOKEN: b.token }));
}
