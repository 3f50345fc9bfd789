// The npm agents of tests/e2e's lockfile, run by a Kandev backend against
// the scripted fake model: the suites that launch real agent CLIs over
// Kandev's runtime share this set-up.
import assert from 'node:assert/strict';
import { mkdtemp, writeFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startBackend, operatorWS, E2E_DIR } from './kandev.mjs';

/** The directory of a lockfile package (some export no package.json to require). */
export const pkgDir = (name) => join(E2E_DIR, 'node_modules', name);
const claudeEntry = join(pkgDir('@agentclientprotocol/claude-agent-acp'), 'dist', 'index.js');
const geminiEntry = join(pkgDir('@google/gemini-cli'), 'bundle', 'gemini.js');

/**
 * Starts a backend that launches agents, with Claude (claude-agent-acp)
 * and Gemini CLI, plus the agents.json entries of extra, pointed at fake
 * (its model APIs), each in a fresh HOME; stops it after t. Returns the
 * operator's WebSocket client.
 */
export async function npmAgentsBackend(t, fake, extra = {}) {
  const dataDir = await mkdtemp(join(tmpdir(), 'kandev-npm-agents-'));
  const home = await mkdtemp(join(tmpdir(), 'kandev-npm-agents-home-'));
  t.after(() => rm(home, { recursive: true, force: true }));
  await writeFile(join(dataDir, 'agents.json'), JSON.stringify({
    'claude-code': { command: process.execPath, args: [claudeEntry] },
    gemini: { command: process.execPath, args: [geminiEntry, '--acp'] },
    ...extra,
  }));
  const b = await startBackend({
    agents: true, dataDir,
    env: {
      HOME: home, ANTHROPIC_BASE_URL: fake.url, ANTHROPIC_API_KEY: 'test-key-not-a-secret', CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
      GOOGLE_GEMINI_BASE_URL: fake.url, GEMINI_API_KEY: 'test-key-not-a-secret', GEMINI_CLI_TRUST_WORKSPACE: 'true', GEMINI_CLI_NO_RELAUNCH: 'true',
    },
  });
  t.after(() => b.stop());
  const ws = await operatorWS(b);
  t.after(() => ws.close());
  return ws;
}

/** Creates an auto-approving profile of the agent named agentName with fields. */
export async function profileOf(ws, agentName, fields) {
  const agents = (await ws.request('agent.list', { limit: 100 })).items;
  const a = agents.find((x) => x.name === agentName);
  assert.ok(a, `agent ${agentName}`);
  return ws.request('agent.profile.create', { agent_id: a.id, name: `e2e-${Math.random().toString(36).slice(2, 8)}`, auto_approve: true, ...fields });
}
