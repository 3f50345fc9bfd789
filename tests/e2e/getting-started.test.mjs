// docs/public/getting-started.md, executed: its `start` and `run` blocks
// (lib/docblocks.mjs) run in page order from the checkout's root as a
// fresh user (empty HOME), `make run` on a fresh data dir and a free port.
// Exports of one block carry over to the next, as in one terminal; the
// page's `127.0.0.1:38429` is the test backend's address, which CLI
// commands reach through KANDEV_BACKEND (the test never binds 38429). A
// second start block restarts the backend on the same data dir; `output`
// blocks are compared with what the block before them printed (the
// banner); `serve-…` setup blocks are written before the start after them.
// Afterwards the board shows what the page did, and the tasks of "Launch
// an agent from the board" are created as the board's + New task does
// (task.create over /ws): with the mock agent, Claude Code and Gemini CLI,
// the real agents launched by that kandev serve with their model API
// replaced by the scripted fake model (lib/fakemodel.mjs).
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { homedir, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';

import { E2E_DIR, callTool, operatorClient, operatorWS, stopProcess, waitFor, withTimeout } from './lib/kandev.mjs';
import { containsLines, inputBlock, outputValues, readBlocks, substitute } from './lib/docblocks.mjs';
import { CLIENTS, runGroup } from './lib/agents.mjs';
import { startFakeModel } from './lib/fakemodel.mjs';

const ROOT = resolve(E2E_DIR, '../..');
const PAGE = join(ROOT, 'docs/public/getting-started.md');
const BIN = join(ROOT, 'apps/backend/bin/kandev');
const NM = join(E2E_DIR, 'node_modules');

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

/**
 * A bin directory standing for `npm install -g @agentclientprotocol/claude-agent-acp
 * @google/gemini-cli`: the lockfile's claude-agent-acp and gemini.
 */
async function installedAgents(root) {
  const bin = join(root, 'bin');
  await mkdir(bin);
  await symlink(join(NM, '@agentclientprotocol/claude-agent-acp/dist/index.js'), join(bin, 'claude-agent-acp'));
  await writeFile(join(bin, 'gemini'), `#!/bin/sh\nexec "${process.execPath}" "${CLIENTS.gemini.bin}" "$@"\n`, { mode: 0o755 });
  return bin;
}

describe('getting started, executed', { timeout: 900_000 }, () => {
  let home;
  let dataDir;
  let server;
  let serverOut = '';
  let url;
  let env;
  let serveEnv;
  let fake;
  let agentsBin;
  let blocks;
  const values = {};
  const ran = [];

  before(async () => {
    home = await mkdtemp(join(tmpdir(), 'kandev-gs-home-'));
    dataDir = await mkdtemp(join(tmpdir(), 'kandev-gs-data-'));
    env = userEnv(home);
    serveEnv = { ...env };
    agentsBin = await installedAgents(home);
    // Both agents call one Kandev tool, then end their turn.
    fake = await startFakeModel({ tool: 'list_tasks_kandev', args: { limit: 5 }, reply: 'Listed the tasks.' });
    blocks = await readBlocks(PAGE);
  });
  after(async () => {
    if (server) await stopGroup(server);
    await fake?.close();
    await rm(home, { recursive: true, force: true });
    await rm(dataDir, { recursive: true, force: true });
  });

  it('runs every marked block of the page in order', async (t) => {
    assert.ok(blocks.some((b) => b.kind === 'start'), 'the page starts the backend');
    let last;
    for (const block of blocks) {
      const code = substitute(block.code, url ? { ...values, '127.0.0.1:38429': new URL(url).host } : values);
      if (block.kind === 'input' || (block.kind === 'setup' && !block.id.startsWith('serve-'))) continue;
      if (block.kind === 'setup') {
        await writeServeFile(block.file, code);
        continue;
      }
      if (block.kind === 'output') {
        await assertPrinted(block, last);
        t.diagnostic(`line ${block.line}: output as the page shows`);
        continue;
      }
      if (block.kind === 'start') {
        if (server) await stopGroup(server);
        url = await start(code);
        env.KANDEV_BACKEND = url;
        last = { kind: 'start', out: () => serverOut };
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
      last = { kind: 'run', out: () => r.stdout };
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

  it('the sign-in page\'s command for a wrong token prints the token from the checkout', async () => {
    const res = await fetch(`${url}/auth/sign-in`, {
      method: 'POST', redirect: 'manual',
      headers: { Origin: url, 'Content-Type': 'application/x-www-form-urlencoded' }, body: 'token=not-the-token',
    });
    assert.equal(res.status, 401);
    const page = await res.text();
    const cmd = /run (\S+ token) in your Kandev checkout/.exec(page)?.[1];
    assert.ok(cmd, `the refusal names a command: ${page.slice(0, 2000)}`);
    const fresh = { ...env };
    delete fresh.KANDEV_TOKEN; // a second terminal, as the page's step 1
    const r = await runGroup('bash', ['-euo', 'pipefail', '-c', cmd], { cwd: ROOT, env: fresh, timeoutMs: 30_000 });
    assert.equal(r.code, 0, `${cmd}: ${r.stderr}`);
    assert.equal(r.stdout.trim(), env.KANDEV_TOKEN, `${cmd} prints the operator token`);
  });

  describe('Launch an agent from the board, as + New task does', () => {
    let ws;
    let board;
    before(async () => {
      ws = await operatorWS({ url, token: env.KANDEV_TOKEN });
      board = await boardOf(ws);
    });
    after(() => ws?.close());

    it('the mock agent: the task moves Backlog → In Progress → Review by itself', async () => {
      const prompt = inputBlock(blocks, 'mock-prompt').code;
      const { task, session } = await createFromBoard(ws, board, 'Hello from the mock agent', prompt, board.profile('mock-agent'));
      const msgs = await reachesReview(ws, board, task.id);
      assert.equal(session.agent_profile_id, board.profile('mock-agent'), 'the session runs the chosen profile');
      const text = msgs.map((m) => `${m.type}: ${m.content}`).join('\n');
      for (const want of ['moved to In Progress', 'moved to Review', 'Hello! I am the mock agent.', 'Done.']) {
        assert.ok(text.includes(want), `the conversation has "${want}":\n${text}`);
      }
      assert.ok(msgs.some((m) => m.type === 'plan'), 'the plan is recorded');
      assert.ok(msgs.some((m) => m.type === 'tool_call' && m.content.includes('list_tasks_kandev') && m.content.includes('"completed"')),
        `the tool call completed:\n${text}`);
    });

    for (const [agent, api] of [['claude-code', 'anthropic'], ['gemini', 'gemini']]) {
      it(`${agent}, launched by kandev serve as the page sets it up: asks, calls a Kandev tool, reaches Review`, async (t) => {
        const before = fake.results.length;
        const { task, session } = await createFromBoard(ws, board, `Listed by ${agent}`, 'List the tasks on my Kandev board.', board.profile(agent));
        assert.equal(session.agent_profile_id, board.profile(agent));
        // The agent asks before its Kandev tool call; the operator allows it, as the task page does.
        const p = await explained(ws, task.id, waitFor(async () => (await ws.request('permission.list', { task_id: task.id })).items?.[0], 180_000,
          `${agent}'s permission request`));
        const allow = p.options.find((o) => o.kind === 'allow_once') ?? p.options.find((o) => o.kind?.startsWith('allow'));
        const answered = await ws.request('permission.resolve', { task_id: p.task_id, session_id: p.session_id, request_id: p.request_id,
          pending_id: p.pending_id, option_id: allow.option_id });
        assert.equal(answered.claimed, true);
        const msgs = await reachesReview(ws, board, task.id);
        assert.ok(msgs.some((m) => m.type === 'tool_call' && m.content.includes('list_tasks_kandev') && m.content.includes('"completed"')),
          `the Kandev tool call completed: ${JSON.stringify(msgs.map((m) => m.type))}`);
        const results = fake.results.slice(before).filter((r) => r.name.endsWith('list_tasks_kandev'));
        assert.ok(results.length >= 1 && !results[0].isError, `the tool's result reached the model: ${JSON.stringify(results).slice(0, 500)}`);
        // The agent that answered is the installed copy agents.json names, not an npx download.
        const installed = agent === 'gemini' ? CLIENTS.gemini.bin : join(agentsBin, 'claude-agent-acp');
        const procs = await commandLines();
        assert.ok(procs.some((c) => c.includes(installed)),
          `a running agent process runs ${installed}; the agent processes:\n${procs.filter((c) => /claude|gemini|npx|npm exec/.test(c)).map((c) => c.slice(0, 200)).join('\n')}`);
        t.diagnostic(`${agent} declared ${fake.toolsDeclared(api).filter((n) => n.includes('_kandev')).length} Kandev tools to its model`);
      });
    }
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

  /** Writes a serve- setup block's file: .kandev/ is the data dir, ~/ the HOME. */
  async function writeServeFile(file, code) {
    let path;
    if (file.startsWith('~/')) path = join(home, file.slice(2));
    else if (file.startsWith('.kandev/')) path = join(dataDir, file.slice('.kandev/'.length));
    else throw new Error(`a serve- setup block writes under ~/ or .kandev/, not ${file}`);
    await mkdir(dirname(path), { recursive: true });
    await writeFile(path, `${code}\n`);
  }

  /**
   * Asserts that block's lines are printed by the block before it, the
   * real data dir read as ./.kandev and the version checked to be the
   * checkout's (what make build stamps).
   */
  async function assertPrinted(block, last) {
    assert.ok(last, `the output block at line ${block.line} follows a block that ran`);
    const version = execFileSync('git', ['describe', '--tags', '--always', '--dirty'], { cwd: ROOT, encoding: 'utf8' }).trim();
    const want = substitute(block.code, { '127.0.0.1:38429': new URL(url).host, '/absolute/path/to/kandev/apps/backend/bin/kandev': BIN })
      .replace(/^kandev \S+ serving on/m, `kandev ${version} serving on`);
    const got = () => last.out().split(dataDir).join('./.kandev');
    await waitFor(() => containsLines(got(), want), 15_000, `the lines of the output block at line ${block.line}:\n${want}\n--- printed:\n${got()}`)
      .catch((err) => { assert.fail(err.message); });
  }

  /** Starts a start block in its own process group; resolves with the banner's URL. */
  function start(code) {
    serverOut = '';
    server = spawn('bash', ['-euo', 'pipefail', '-c', code], {
      cwd: ROOT, detached: true, stdio: ['ignore', 'pipe', 'pipe'],
      // The terminal of make run, not the second one the run blocks
      // export KANDEV_TOKEN in (a backend started with it would keep it).
      env: {
        ...serveEnv, KANDEV_ADDR: '127.0.0.1:0', KANDEV_DATA_DIR: dataDir,
        // What stands for the model providers and npm install -g (see the page's last section).
        ANTHROPIC_BASE_URL: fake.url, GOOGLE_GEMINI_BASE_URL: fake.url, CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
        PATH: `${agentsBin}:${serveEnv.PATH}`,
      },
    });
    const child = server;
    child.stderr.on('data', (b) => { serverOut += b; });
    return withTimeout(new Promise((resolveUrl, reject) => {
      child.stdout.on('data', (b) => {
        serverOut += b;
        const m = /serving on (http:\/\/127\.0\.0\.1:\d+)/.exec(serverOut);
        if (m) resolveUrl(m[1]);
      });
      child.once('exit', (c) => reject(new Error(`the start block exited (${c}) before serving:\n${serverOut}`)));
    }), 300_000, `the start block (make run):\n${serverOut}`);
  }
});

/** What the board loads first: the workspace, its workflow and steps, the agents' profiles. */
async function boardOf(ws) {
  const workspace = (await ws.request('workspace.list', { limit: 100 })).items[0];
  const workflow = (await ws.request('workflow.list', { workspace_id: workspace.id, limit: 100 })).items[0];
  const steps = (await ws.request('workflow.step.list', { workflow_id: workflow.id, limit: 100 })).items;
  const agents = (await ws.request('agent.list', { limit: 100 })).items;
  const profiles = (await ws.request('agent.profile.list', { workspace_id: workspace.id, limit: 100 })).items;
  return {
    workspace, workflow, steps,
    step: (name) => steps.find((s) => s.name === name)?.id,
    profile(agentName) {
      const a = agents.find((x) => x.name === agentName);
      const p = profiles.find((x) => x.agent_id === a?.id && x.name === 'default');
      if (!p) throw new Error(`no default profile of ${agentName}`);
      return p.id;
    },
  };
}

/** Submits the + New task form's payload: start step, the chosen profile, Start an agent on it now. */
async function createFromBoard(ws, board, title, prompt, profileId) {
  const start = board.steps.find((s) => s.is_start_step) ?? board.steps[0];
  const res = await ws.request('task.create', {
    title, prompt, workflow_step_id: start.id, agent_profile_id: profileId, start_agent: true,
    workspace_id: board.workspace.id, workflow_id: board.workflow.id,
  });
  const sessions = (await ws.request('session.list', { task_id: res.task.id, limit: 10 })).items;
  assert.equal(sessions.length, 1, 'one agent session started');
  return { task: res.task, session: sessions[0] };
}

/** Waits until the task is in the Review column with the state REVIEW; returns its conversation. */
async function reachesReview(ws, board, taskId) {
  const review = board.step('Review');
  await explained(ws, taskId, waitFor(async () => {
    const t = await ws.request('task.get', { id: taskId });
    return t.state === 'REVIEW' && t.workflow_step_id === review;
  }, 240_000, 'the task in Review'));
  return (await ws.request('message.list', { task_id: taskId, limit: 200 })).items;
}

/** The command lines of this machine's processes (Linux /proc). */
async function commandLines() {
  const out = [];
  for (const pid of (await readdir('/proc')).filter((d) => /^\d+$/.test(d))) {
    try { out.push((await readFile(`/proc/${pid}/cmdline`, 'utf8')).split('\0').join(' ')); } catch { /* gone */ }
  }
  return out;
}

/** p, or its failure with the task's session state and error added. */
async function explained(ws, taskId, p) {
  try {
    return await p;
  } catch (err) {
    const s = (await ws.request('session.list', { task_id: taskId, limit: 10 })).items[0];
    err.message += ` (session ${s?.state}${s?.error ? `: ${s.error}` : ''})`;
    throw err;
  }
}

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
