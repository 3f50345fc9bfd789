// The real agent CLIs from the lockfile (Claude Code, Gemini CLI, Codex),
// run non-interactively as a throwaway user against a fake model server
// (fakemodel.mjs). Claude Code and Codex are native binaries in their
// platform packages (npm ci --ignore-scripts skips the wrappers'
// postinstall, which only copies them), so they need no particular Node;
// Gemini CLI's bundle runs on the Node running the tests (>= 20).
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';

import { E2E_DIR } from './kandev.mjs';
import { substitute } from './docblocks.mjs';

const NM = join(E2E_DIR, 'node_modules');

/** Each client: its npm package, its executable and how it names Kandev's tools to its model. */
export const CLIENTS = {
  claude: { pkg: '@anthropic-ai/claude-code', bin: join(NM, '@anthropic-ai/claude-code-linux-x64/claude'), toolName: (t) => `mcp__kandev__${t}` },
  gemini: { pkg: '@google/gemini-cli', bin: join(NM, '@google/gemini-cli/bundle/gemini.js'), toolName: (t) => `mcp_kandev_${t}` },
  // Codex declares each MCP server's tools in a namespace tool; the fake
  // spells a namespaced function NAMESPACE.FUNCTION.
  codex: { pkg: '@openai/codex', bin: join(NM, '@openai/codex-linux-x64/vendor/x86_64-unknown-linux-musl/bin/codex'), toolName: (t) => `mcp__kandev.${t}` },
};

/** The installed version of a client's package. */
export async function clientVersion(name) {
  return JSON.parse(await readFile(join(NM, CLIENTS[name].pkg, 'package.json'), 'utf8')).version;
}

/**
 * A throwaway user: an empty HOME, a project directory (the clients'
 * working directory) and a bin directory that puts `claude`, `gemini` and
 * `codex` on PATH. env(extra) is the whole environment of its commands:
 * nothing else of the test process leaks in (no model keys, no KANDEV_*).
 */
export async function agentUser() {
  for (const [name, c] of Object.entries(CLIENTS)) {
    if (!existsSync(c.bin)) throw new Error(`${name}: ${c.bin} is missing: run \`npm ci\` in tests/e2e (the agent CLIs' binaries are installed for linux-x64)`);
  }
  const root = await mkdtemp(join(tmpdir(), 'kandev-agents-'));
  const home = join(root, 'home');
  const project = join(root, 'project');
  const bin = join(root, 'bin');
  await Promise.all([mkdir(join(home, '.gemini'), { recursive: true }), mkdir(project), mkdir(bin)]);
  await symlink(CLIENTS.claude.bin, join(bin, 'claude'));
  await symlink(CLIENTS.codex.bin, join(bin, 'codex'));
  await writeFile(join(bin, 'gemini'), `#!/bin/sh\nexec "${process.execPath}" "${CLIENTS.gemini.bin}" "$@"\n`, { mode: 0o755 });
  // The model side, not Kandev's: Gemini CLI authenticates headless runs
  // with an API key only when told to; no usage statistics leave the box.
  await writeFile(join(home, '.gemini', 'settings.json'),
    JSON.stringify({ security: { auth: { selectedType: 'gemini-api-key' } }, privacy: { usageStatisticsEnabled: false } }));
  return {
    home, project, bin,
    env(extra = {}) {
      return { PATH: `${bin}:${dirname(process.execPath)}:/usr/local/bin:/usr/bin:/bin`, HOME: home, LANG: 'C.UTF-8', TERM: 'dumb', ...extra };
    },
    cleanup: () => rm(root, { recursive: true, force: true }),
  };
}

/**
 * Runs a command in its own process group (bounded; the group is killed
 * afterwards so no MCP server outlives its client) and resolves with
 * { code, stdout, stderr, timedOut }; never rejects on a failed exit.
 */
export function runGroup(cmd, args, { cwd, env, timeoutMs = 90_000 }) {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(cmd, args, { cwd, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    let timedOut = false;
    child.stdout.on('data', (b) => { stdout += b; });
    child.stderr.on('data', (b) => { stderr += b; });
    const killGroup = () => { try { process.kill(-child.pid, 'SIGKILL'); } catch { /* already gone */ } };
    const timer = setTimeout(() => { timedOut = true; killGroup(); }, timeoutMs);
    const onExit = () => killGroup();
    process.once('exit', onExit);
    child.once('error', (err) => { clearTimeout(timer); process.removeListener('exit', onExit); reject(err); });
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      process.removeListener('exit', onExit);
      killGroup();
      resolvePromise({ code: code ?? signal, stdout, stderr, timedOut });
    });
  });
}

/**
 * Applies setup blocks of the docs (docblocks.mjs) for user: a file block
 * is written (after substitution), a shell block runs in the project
 * directory with env. Rejects with the block's output when it fails.
 */
export async function applySetup(user, blocks, values, env) {
  for (const b of blocks) {
    const code = substitute(b.code, values);
    if (b.file) {
      const path = b.file.startsWith('~/') ? join(user.home, b.file.slice(2)) : resolve(user.project, b.file);
      await mkdir(dirname(path), { recursive: true });
      await writeFile(path, `${code}\n`);
      continue;
    }
    const r = await runGroup('bash', ['-euo', 'pipefail', '-c', code], { cwd: user.project, env, timeoutMs: 60_000 });
    if (r.code !== 0) throw new Error(`setup block ${b.id} (line ${b.line}) failed (${r.code}):\n${r.stdout}\n${r.stderr}`);
  }
}

/**
 * Runs client `name` once, non-interactively, on prompt with its model
 * API pointed at the fake: Claude Code `-p` (stream-json; Kandev's tools
 * pre-allowed as the docs say, unless allow is false), Gemini CLI `-p`,
 * Codex `exec --json` with a custom Responses provider. extraEnv adds to
 * the user's environment.
 */
export function runClient(name, user, fake, prompt, { extraEnv = {}, args = [], timeoutMs, allow = true } = {}) {
  const common = user.env(extraEnv);
  switch (name) {
    case 'claude':
      return runGroup(CLIENTS.claude.bin,
        ['-p', prompt, ...(allow ? ['--allowedTools', 'mcp__kandev__*'] : []), '--output-format', 'stream-json', '--verbose', ...args],
        { cwd: user.project, timeoutMs, env: { ...common, ANTHROPIC_BASE_URL: fake.url, ANTHROPIC_API_KEY: 'fake-key',
          CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1', DISABLE_AUTOUPDATER: '1' } });
    case 'gemini':
      return runGroup(process.execPath, [CLIENTS.gemini.bin, '-p', prompt, '--output-format', 'json', ...args],
        { cwd: user.project, timeoutMs, env: { ...common, GOOGLE_GEMINI_BASE_URL: fake.url, GEMINI_API_KEY: 'fake-key',
          GEMINI_CLI_NO_RELAUNCH: 'true' } });
    case 'codex':
      return runGroup(CLIENTS.codex.bin, ['exec', '--json', '--skip-git-repo-check',
        '-c', 'model_provider="fake"',
        '-c', `model_providers.fake={ name = "fake", base_url = "${fake.url}/v1", wire_api = "responses", env_key = "FAKE_OPENAI_KEY" }`,
        '-c', 'check_for_update_on_startup=false',
        '-m', 'gpt-5', ...args, prompt],
      { cwd: user.project, timeoutMs, env: { ...common, FAKE_OPENAI_KEY: 'fake-key', RUST_LOG: 'codex_rmcp_client=info' } });
    default:
      throw new Error(`unknown client ${name}`);
  }
}

/** Runs `<client> mcp list` (the clients' own server health check). */
export function mcpList(name, user, extraEnv = {}) {
  const env = user.env({ CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1', GEMINI_CLI_NO_RELAUNCH: 'true', ...extraEnv });
  return runGroup(name, ['mcp', 'list'], { cwd: user.project, env, timeoutMs: 60_000 });
}

/** Claude Code's stream-json init event: the MCP servers and their status. */
export function claudeServers(stdout) {
  const init = stdout.split('\n').filter(Boolean).map((l) => { try { return JSON.parse(l); } catch { return null; } })
    .find((e) => e?.type === 'system' && e.subtype === 'init');
  return Object.fromEntries((init?.mcp_servers ?? []).map((s) => [s.name, s.status]));
}
