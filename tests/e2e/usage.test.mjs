// Model selection and usage with real agents launched by Kandev's runtime
// over ACP, against the scripted fake model: a profile's model (one the
// agent offers, not its default) reaches the model API, the usage Kandev
// records for each of two turns (session.usage's totals and turn rows and
// task.usage over the operator's WebSocket API) equals what the fake
// reported for that turn's requests, counted on the fake's side, and a
// model the agent does not offer fails the launch.
//
// What each agent reports, from its source in node_modules:
// - claude-agent-acp 0.49 (dist/acp-agent.js, the "result" case) answers
//   session/prompt with ACP's `usage`: the sum of Claude Code's `result`
//   usage over the prompt, which sums the turn's agent-loop model calls;
//   its `usage_update` carries the session's cost (Claude Code's
//   total_cost_usd) and the last call's tokens as the context used.
// - Gemini CLI 0.61 (bundle/gemini-*.js, GeminiSession.prompt) answers
//   session/prompt with no ACP `usage` and sends no `usage_update`: its
//   counts are in `_meta.quota.token_count`, the sum of the main loop's
//   usageMetadata (promptTokenCount, candidatesTokenCount) per request,
//   which Kandev reads when `usage` is absent.
// The agent-loop requests are the ones that declare tools (side requests
// such as routing or titles declare none); every test counts those.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { waitFor } from './lib/kandev.mjs';
import { npmAgentsBackend, profileOf } from './lib/npmagents.mjs';
import { startFakeModel } from './lib/fakemodel.mjs';

async function runTurn(ws, profile, prompt) {
  const created = await ws.request('task.create', { title: `usage ${profile.name}`, description: prompt, agent_profile_id: profile.id });
  assert.ok(created.session_id, 'task.create started a session');
  const s = await waitFor(async () => {
    const got = await ws.request('session.get', { id: created.session_id });
    return ['IDLE', 'FAILED'].includes(got.state) ? got : null;
  }, 90_000, 'the session to end its turn');
  assert.equal(s.state, 'IDLE', s.error);
  return created;
}

/**
 * The fake's answers to the agent loop's requests (the ones that declared
 * tools) from answer index from on, and their summed usage.
 */
function loopUsage(fake, api, from = 0) {
  const loop = fake.answers.slice(from).filter((a) => a.api === api && a.tools);
  return { loop, input: loop.reduce((n, a) => n + a.input, 0), output: loop.reduce((n, a) => n + a.output, 0) };
}

/**
 * Sends the task's session a second prompt and waits for its turn to be
 * recorded and the session idle; returns the usage the fake reported for
 * that turn's agent-loop requests.
 */
async function secondTurn(ws, fake, api, created) {
  const from = fake.answers.length;
  await ws.request('task.message', { task_id: created.task.id, prompt: 'Thanks, that is all.' });
  await waitFor(async () => (await ws.request('session.usage', { id: created.session_id })).usage.turns === 2, 60_000, 'the second turn\'s usage');
  await waitFor(async () => (await ws.request('session.get', { id: created.session_id })).state === 'IDLE', 60_000, 'the session to be idle again');
  return loopUsage(fake, api, from);
}

/** Asserts the session's totals and turn rows (newest first) against the fake's per-turn sums. */
function assertTurns(s, turns) {
  assert.equal(s.usage.turns, turns.length);
  const sum = (k) => turns.reduce((n, x) => n + x[k], 0);
  assert.deepEqual({ in: s.usage.input_tokens, out: s.usage.output_tokens, cr: s.usage.cached_read_tokens, cw: s.usage.cached_write_tokens },
    { in: sum('input'), out: sum('output'), cr: 0, cw: 0 }, 'the session totals are the sum the fake reported');
  assert.deepEqual(s.turns.items.map((r) => ({ seq: r.seq, in: r.input_tokens, out: r.output_tokens })),
    turns.map((x, i) => ({ seq: i + 1, in: x.input, out: x.output })).reverse(), 'each turn row is what the fake reported for that turn');
}

async function usageOf(ws, created) {
  const s = await ws.request('session.usage', { id: created.session_id, limit: 10 });
  const task = await ws.request('task.usage', { task_id: created.task.id });
  return { s, task };
}

test('claude-agent-acp: the profile model reaches the model API and the recorded usage is what the fake reported', { timeout: 120_000 }, async (t) => {
  const fake = await startFakeModel({ tool: 'list_tasks_kandev', args: { limit: 1 } });
  t.after(() => fake.close());
  const ws = await npmAgentsBackend(t, fake);
  // "sonnet": offered by claude-agent-acp (default, opus[1m], sonnet,
  // sonnet[1m], haiku), not its default.
  const created = await runTurn(ws, await profileOf(ws, 'claude-code', { model: 'sonnet' }), 'List one task.');

  const { loop, input, output } = loopUsage(fake, 'anthropic');
  assert.equal(loop.length, fake.calls.length + 1, 'one request per tool call and one that ends the turn');
  assert.ok(fake.calls.some((c) => c.name.endsWith('list_tasks_kandev')), JSON.stringify(fake.calls));
  assert.ok(fake.answers.every((a) => /sonnet/.test(a.model)), `models requested: ${fake.answers.map((a) => a.model).join(', ')}`);

  const first = { input, output };
  const second = await secondTurn(ws, fake, 'anthropic', created);
  assert.ok(second.loop.length > 0 && second.loop.every((a) => /sonnet/.test(a.model)), 'the second turn asked the same model');

  const { s, task } = await usageOf(ws, created);
  assertTurns(s, [first, second]);
  // Context used: the last call's tokens (Claude's usage_update "used").
  const last = second.loop[second.loop.length - 1];
  assert.equal(s.usage.context_used, last.input + last.output);
  // Cost: Claude Code prices the tokens itself (USD, Sonnet's $3 in /
  // $15 out per million tokens) and reports the ACP session's running
  // total; Kandev records each turn's growth, so the totals are the price
  // of every token of both turns.
  const tokensIn = first.input + second.input;
  const tokensOut = first.output + second.output;
  assert.equal(s.usage.cost.currency, 'USD');
  assert.ok(Math.abs(s.usage.cost.amount - (tokensIn * 3 + tokensOut * 15) / 1e6) < 1e-9, JSON.stringify(s.usage.cost));
  assert.ok(Math.abs(s.turns.items[0].cost.amount - (second.input * 3 + second.output * 15) / 1e6) < 1e-9, JSON.stringify(s.turns.items[0].cost));
  assert.deepEqual(
    { sessions: task.sessions, turns: task.turns, in: task.input_tokens, out: task.output_tokens, costs: task.costs },
    { sessions: 1, turns: 2, in: tokensIn, out: tokensOut, costs: [s.usage.cost] }, 'task.usage sums the same');
  t.diagnostic(`model calls per turn ${loop.length} + ${second.loop.length} (${fake.answers.length - loop.length - second.loop.length} side requests): ${tokensIn} in / ${tokensOut} out recorded, cost ${s.usage.cost.amount} USD`);
});

test('Gemini CLI: the profile model reaches the model API and the recorded usage is what the fake reported; an unoffered model fails the launch', { timeout: 120_000 }, async (t) => {
  const fake = await startFakeModel({ tool: 'list_tasks_kandev', args: { limit: 1 } });
  t.after(() => fake.close());
  const ws = await npmAgentsBackend(t, fake);
  // gemini-3.5-flash-lite: offered (auto, gemini-2.5-pro, gemini-3.8-flash,
  // gemini-3.5-flash-lite), not its default ("auto").
  const created = await runTurn(ws, await profileOf(ws, 'gemini', { model: 'gemini-3.5-flash-lite' }), 'List one task.');

  const { loop, input, output } = loopUsage(fake, 'gemini');
  assert.equal(loop.length, fake.calls.length + 1, 'one request per tool call and one that ends the turn');
  assert.ok(fake.calls.some((c) => c.name.endsWith('list_tasks_kandev')), JSON.stringify(fake.calls));
  assert.ok(loop.every((a) => a.model === 'gemini-3.5-flash-lite'), `models requested: ${loop.map((a) => a.model).join(', ')}`);

  const first = { input, output };
  const second = await secondTurn(ws, fake, 'gemini', created);
  assert.ok(second.loop.length > 0 && second.loop.every((a) => a.model === 'gemini-3.5-flash-lite'), 'the second turn asked the same model');

  const { s, task } = await usageOf(ws, created);
  assertTurns(s, [first, second]);
  const tokensIn = first.input + second.input;
  const tokensOut = first.output + second.output;
  assert.deepEqual(task.costs, [], 'Gemini CLI reports no cost');
  assert.deepEqual({ sessions: task.sessions, turns: task.turns, in: task.input_tokens, out: task.output_tokens },
    { sessions: 1, turns: 2, in: tokensIn, out: tokensOut }, 'task.usage sums the same');
  t.diagnostic(`model calls per turn ${loop.length} + ${second.loop.length} (${fake.answers.length - loop.length - second.loop.length} side requests): ${tokensIn} in / ${tokensOut} out recorded`);

  const bad = await ws.request('task.create', { title: 'usage unoffered', description: 'Say hello.', agent_profile_id: (await profileOf(ws, 'gemini', { model: 'gpt-4o' })).id });
  const failed = await waitFor(async () => {
    const got = await ws.request('session.get', { id: bad.session_id });
    return ['IDLE', 'FAILED'].includes(got.state) ? got : null;
  }, 60_000, 'the launch with an unoffered model to end');
  assert.equal(failed.state, 'FAILED');
  assert.match(failed.error, /does not offer the profile's model; it offers: auto, gemini-2\.5-pro, gemini-3\.8-flash, gemini-3\.5-flash-lite/);
  assert.doesNotMatch(failed.error, /gpt-4o/);
});
