// A real agent CLI launched by Kandev's runtime over ACP, exactly as a
// user's would be: the claude-code agent type's command points (through
// the data dir's agents.json, the operator's override) at the
// @agentclientprotocol/claude-agent-acp from the lockfile, and its model
// API at the scripted fake model on loopback. The agent must receive
// Kandev's own MCP server through ACP session/new and make a real Kandev
// tool call whose effect is checked from Kandev's side.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, writeFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createRequire } from 'node:module';
import { startBackend, operatorClient, callTool, waitFor } from './lib/kandev.mjs';
import { startFakeModel } from './lib/fakemodel.mjs';

const require = createRequire(import.meta.url);
const acpEntry = resolve(require.resolve('@agentclientprotocol/claude-agent-acp/package.json'), '..', 'dist', 'index.js');

test('Kandev launches claude-agent-acp over ACP and its Kandev tool call takes effect', { timeout: 180_000 }, async (t) => {
  const title = 'Filed by Claude over ACP';
  const fake = await startFakeModel({ tool: 'create_task_kandev', args: { title, parent_id: 'self', start_agent: false } });
  t.after(() => fake.close());
  const dataDir = await mkdtemp(join(tmpdir(), 'kandev-acp-'));
  const home = await mkdtemp(join(tmpdir(), 'kandev-acp-home-'));
  t.after(() => rm(home, { recursive: true, force: true }));
  await writeFile(join(dataDir, 'agents.json'), JSON.stringify({
    'claude-code': { command: process.execPath, args: [acpEntry] },
  }));
  const b = await startBackend({
    agents: true, dataDir,
    env: { HOME: home, ANTHROPIC_BASE_URL: fake.url, ANTHROPIC_API_KEY: 'test-key-not-a-secret', CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1' },
  });
  t.after(() => b.stop());
  const c = await operatorClient(b);
  t.after(() => c.close());

  // The default agent profile is claude-code's; let it auto-approve the
  // permission Claude asks before an MCP tool call.
  const agents = (await callTool(c, 'list_agents_kandev', {})).structuredContent.items;
  const claude = agents.find((a) => a.name === 'claude-code');
  const profiles = (await callTool(c, 'list_agent_profiles_kandev', { agent_id: claude.id })).structuredContent.items;
  const approved = await callTool(c, 'update_agent_profile_kandev', { profile_id: profiles[0].id, auto_approve: true });
  assert.ok(!approved.isError && approved.structuredContent.auto_approve === true, JSON.stringify(approved.content));

  const created = (await callTool(c, 'create_task_kandev', {
    title: 'ACP task', prompt: 'Please file the follow-up task.', agent_profile_id: profiles[0].id,
  })).structuredContent;
  assert.ok(created.session_id, 'create_task started a session');

  const sub = await waitFor(async () => {
    const tasks = (await callTool(c, 'list_tasks_kandev', { limit: 50 })).structuredContent.items;
    return tasks.find((x) => x.title === title);
  }, 120_000, 'the agent-created task');
  assert.equal(sub.parent_id, created.task.id, 'the agent acted as its own session (parent_id self)');

  // From the fake's side: Claude declared Kandev's task-mode tools to its model.
  const declared = fake.toolsDeclared('anthropic');
  assert.ok(declared.some((n) => n.endsWith('create_task_kandev')), `declared: ${declared.join(', ')}`);
  t.diagnostic(`claude-agent-acp declared ${declared.filter((n) => n.includes('_kandev')).length} Kandev tools to its model`);
  await waitFor(() => fake.results.some((r) => !r.isError && r.text.includes(title)), 60_000, 'the tool result to reach the model');

  // From Kandev's side: the conversation recorded the tool call; the turn ended.
  const conv = await waitFor(async () => {
    const msgs = (await callTool(c, 'get_task_conversation_kandev', { task_id: created.task.id, limit: 200 })).structuredContent.items;
    return msgs.some((m) => m.type === 'tool_call' && m.content.includes('create_task_kandev') && m.content.includes('"completed"')) ? msgs : null;
  }, 60_000, 'the recorded tool call');
  assert.ok(conv.some((m) => m.type === 'permission' && m.content.includes('Auto-approved')), 'the permission was auto-approved');
  const sessions = await waitFor(async () => {
    const s = (await callTool(c, 'list_task_sessions_kandev', { task_id: created.task.id })).structuredContent.items;
    return s[0]?.state === 'IDLE' ? s : null;
  }, 60_000, 'the session to be idle');
  assert.equal(sessions[0].managed, true);
});
