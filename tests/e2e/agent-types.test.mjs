// Every agent type over Kandev's runtime with the real npm agents of the
// lockfile: agent.detect finds Claude (claude-agent-acp), Gemini CLI and
// GitHub Copilot installed with the versions their ACP initialize answers
// and the mock agent with its own, and every other type not installed
// (npx probes run --no --offline: nothing is downloaded); Copilot's real
// session/new is reached (it answers that it needs a GitHub login); a
// profile's model reaches claude-agent-acp's model API (the fake model's
// requests carry it), and a model it does not offer fails the launch.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { readFileSync } from 'node:fs';
import { waitFor } from './lib/kandev.mjs';
import { npmAgentsBackend, profileOf, pkgDir } from './lib/npmagents.mjs';
import { startFakeModel } from './lib/fakemodel.mjs';

const copilotBin = join(pkgDir('@github/copilot-linux-x64'), 'copilot');
const version = (name) => JSON.parse(readFileSync(join(pkgDir(name), 'package.json'), 'utf8')).version;

async function detect(ws, refresh) {
  const out = {};
  let cursor;
  for (let i = 0; i < 10; i += 1) {
    const page = await ws.request('agent.detect', { refresh: refresh && i === 0, limit: 50, ...(cursor ? { cursor } : {}) }, 240_000);
    for (const d of page.items) out[d.name] = d;
    if (!page.next_cursor) return out;
    cursor = page.next_cursor;
  }
  throw new Error('agent.detect never ended');
}

async function startTask(ws, profile, prompt) {
  const created = await ws.request('task.create', { title: `types ${profile.name}`, description: prompt, agent_profile_id: profile.id });
  assert.ok(created.session_id, 'task.create started a session');
  return created;
}

async function sessionEnd(ws, created, states) {
  return waitFor(async () => {
    const s = await ws.request('session.get', { id: created.session_id });
    return states.includes(s.state) ? s : null;
  }, 150_000, `the session to be ${states.join(' or ')}`);
}

test('agent.detect finds the installed real agents with their versions and every other type not installed', { timeout: 300_000 }, async (t) => {
  const fake = await startFakeModel({});
  t.after(() => fake.close());
  const ws = await npmAgentsBackend(t, fake, { copilot: { command: copilotBin, args: ['--acp'] } });
  const got = await detect(ws, true);
  for (const [name, pkg] of [['claude-code', '@agentclientprotocol/claude-agent-acp'], ['gemini', '@google/gemini-cli'], ['copilot', '@github/copilot']]) {
    assert.equal(got[name].status, 'installed', `${name}: ${JSON.stringify(got[name])}`);
    assert.equal(got[name].version, version(pkg), `${name}'s initialize answered its package's version`);
  }
  assert.equal(got['mock-agent'].status, 'installed');
  for (const name of ['codex', 'opencode', 'amp', 'auggie', 'qwen', 'droid', 'iflow', 'kilocode', 'pi', 'cursor', 'devin', 'kimi', 'kiro', 'qoder', 'trae', 'grok', 'hermes', 'omp']) {
    assert.equal(got[name].status, 'not_installed', `${name}: ${JSON.stringify(got[name])}`);
    assert.ok(got[name].install, `${name} says how to install it`);
  }
  t.diagnostic(Object.values(got).map((d) => `${d.name}=${d.status}${d.version ? `@${d.version}` : ''}`).join(' '));
});

test('Copilot: Kandev launches the real @github/copilot --acp through initialize to session/new', { timeout: 200_000 }, async (t) => {
  const fake = await startFakeModel({});
  t.after(() => fake.close());
  const ws = await npmAgentsBackend(t, fake, { copilot: { command: copilotBin, args: ['--acp'] } });
  const created = await startTask(ws, await profileOf(ws, 'copilot', {}), 'Say hello.');
  const s = await sessionEnd(ws, created, ['FAILED', 'IDLE']);
  // No GitHub account here: Copilot answers initialize (its version is
  // detected above) and refuses session/new until it is logged in.
  assert.equal(s.state, 'FAILED');
  assert.match(s.error, /the agent refused session\/new: Authentication required/);
});

test('A profile model reaches claude-agent-acp\'s model API; a model it does not offer fails the launch', { timeout: 300_000 }, async (t) => {
  const fake = await startFakeModel({});
  t.after(() => fake.close());
  const ws = await npmAgentsBackend(t, fake, { copilot: { command: copilotBin, args: ['--acp'] } });
  const created = await startTask(ws, await profileOf(ws, 'claude-code', { model: 'haiku' }), 'Say hello.');
  await sessionEnd(ws, created, ['IDLE']);
  const models = fake.requests.filter((r) => r.api === 'anthropic' && r.path === '/v1/messages').map((r) => r.body?.model);
  assert.ok(models.length > 0 && models.every((m) => /haiku/.test(m)), `models requested: ${models.join(', ')}`);
  const offered = (await detect(ws, false))['claude-code'];
  assert.deepEqual(offered.models.map((m) => m.id), ['default', 'opus[1m]', 'sonnet', 'sonnet[1m]', 'haiku']);
  assert.ok(offered.modes.includes('plan'), JSON.stringify(offered.modes));

  const bad = await startTask(ws, await profileOf(ws, 'claude-code', { model: 'gpt-4o' }), 'Say hello.');
  const s = await sessionEnd(ws, bad, ['FAILED', 'IDLE']);
  assert.equal(s.state, 'FAILED');
  assert.match(s.error, /does not offer the profile's model; it offers: default, opus\[1m\], sonnet, sonnet\[1m\], haiku/);
  assert.doesNotMatch(s.error, /gpt-4o/);
});
