// The official TypeScript MCP SDK as the client of a real kandev backend:
// the external /mcp endpoint over Streamable HTTP and a session's
// `kandev mcp` over stdio. Every tool result carries structuredContent
// (the same JSON as its text); where a tool advertises an outputSchema
// (ask_user_question_kandev) the SDK validates against it (a mismatch
// throws). The other tools' result contracts are checked by the Go suite
// (internal/app callJSON), as they are not advertised to save context.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ErrorCode, McpError, ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';

import {
  KANDEV, callTool, countTasks, createSession, createTask, kandevCLI, operatorClient, operatorWS, run,
  sessionClient, startBackend, text, waitFor, withTimeout,
} from './lib/kandev.mjs';

/** The tool names `kandev tools --mode M` prints: what tools/list must serve. */
async function catalogNames(mode) {
  const tools = JSON.parse(await run(KANDEV, ['tools', '--mode', mode, '--json']));
  return tools.map((t) => t.name).sort();
}

async function listNames(client) {
  const { tools } = await withTimeout(client.listTools(), 15_000, 'tools/list');
  return tools.map((t) => t.name).sort();
}

/**
 * Invalid-argument cases: each is refused as a tool error (isError) whose
 * text starts "invalid arguments for <tool>: " and matches want. None may
 * echo the marker value.
 */
const MARKER = 'E2E-SECRET-VALUE';
const invalidCases = [
  { tool: 'create_task_kandev', args: { title: `${MARKER}-${'x'.repeat(60)}`, start_agent: false },
    want: /^invalid arguments for create_task_kandev: \/title: longer than 60 characters \(maxLength\)$/ },
  { tool: 'create_task_kandev', args: { title: 'ok', start_agent: false, [MARKER]: 1 },
    want: /^invalid arguments for create_task_kandev: unknown field at \/; allowed: / },
  { tool: 'create_task_kandev', args: { title: 'ok', start_agent: MARKER },
    want: /^invalid arguments for create_task_kandev: \/start_agent: /},
  { tool: 'create_task_kandev', args: { title: 'x', prompt: 'a', description: MARKER },
    want: /^invalid arguments for create_task_kandev: provide either prompt or description, not both$/ },
  { tool: 'create_task_kandev', args: { start_agent: false },
    want: /^invalid arguments for create_task_kandev: \/ is missing required "title"$/ },
  { tool: 'list_tasks_kandev', args: { workflowid: MARKER },
    want: /^invalid arguments for list_tasks_kandev: unknown field at \/; allowed: .*\(did you mean "workflow_id"\?\)$/ },
  { tool: 'list_tasks_kandev', args: { limit: 201 },
    want: /^invalid arguments for list_tasks_kandev: \/limit: / },
  { tool: 'list_tasks_kandev', args: { state: 'in_progress' },
    want: /^invalid arguments for list_tasks_kandev: \/state: / },
];

/** Runs every invalid case and checks that no task was written. */
async function checkInvalidArguments(client, counter = client) {
  const before = await countTasks(counter);
  for (const c of invalidCases) {
    const r = await callTool(client, c.tool, c.args);
    const msg = text(r);
    assert.equal(r.isError, true, `${c.tool} ${JSON.stringify(c.args)}: got a success, want a tool error`);
    assert.match(msg, c.want, `${c.tool} ${JSON.stringify(c.args)}`);
    assert.ok(!msg.includes(MARKER), `${c.tool}: the error echoes a caller value: ${msg}`);
    assert.equal(r.structuredContent, undefined, `${c.tool}: an error carries structured content`);
  }
  assert.equal(await countTasks(counter), before, 'refused calls changed the number of tasks');
}

/** Calls every given tool and checks each returned schema-valid structured content. */
async function checkStructuredResults(client, calls) {
  const { tools } = await client.listTools();
  for (const [name, args] of calls) {
    const tool = tools.find((t) => t.name === name);
    assert.ok(tool, `${name} is not listed`);
    // callTool throws if structuredContent does not match an advertised output schema.
    const r = await callTool(client, name, args);
    assert.ok(!r.isError, `${name}: ${text(r)}`);
    assert.equal(typeof r.structuredContent, 'object', `${name}: no structuredContent`);
    assert.deepEqual(JSON.parse(text(r)), r.structuredContent, `${name}: text and structuredContent differ`);
  }
}

/** A raw POST to the backend (node:http, so Host can be forged). */
function rawPost(url, { headers = {}, body = '' } = {}) {
  return withTimeout(new Promise((resolve, reject) => {
    const req = http.request(url, { method: 'POST', headers }, (res) => {
      let data = '';
      res.on('data', (c) => { data += c; });
      res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, body: data }));
    });
    req.on('error', reject);
    req.end(body);
  }), 15_000, `POST ${url}`);
}

const initializeBody = JSON.stringify({
  jsonrpc: '2.0', id: 1, method: 'initialize',
  params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
});
const jsonHeaders = { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' };

describe('external /mcp over Streamable HTTP', { timeout: 180_000 }, () => {
  let b;
  let op;
  before(async () => {
    b = await startBackend();
    op = await operatorClient(b);
  });
  after(async () => {
    await op?.close();
    await b?.stop();
  });

  it('refuses a client without the operator bearer token (401)', async () => {
    const res = await rawPost(`${b.url}/mcp`, { headers: jsonHeaders, body: initializeBody });
    assert.equal(res.status, 401);
    assert.match(res.headers['www-authenticate'] ?? '', /^Bearer/);
    for (const headers of [undefined, { Authorization: 'Bearer wrong-token' }]) {
      const client = new Client({ name: 'no-token', version: '1' });
      const transport = new StreamableHTTPClientTransport(new URL('/mcp', b.url), headers ? { requestInit: { headers } } : {});
      await assert.rejects(withTimeout(client.connect(transport), 15_000, 'connect'), (err) => {
        assert.equal(err.code, 401, String(err));
        return true;
      });
      await client.close();
    }
  });

  it('serves the external catalog exactly as `kandev tools --mode external` prints it', async () => {
    assert.deepEqual(await listNames(op), await catalogNames('external'));
    assert.deepEqual(op.getServerVersion()?.name, 'kandev');
  });

  it('returns structured results that validate against the output schemas', async () => {
    const ws = (await callTool(op, 'list_workspaces_kandev', {})).structuredContent.items;
    assert.equal(ws.length, 1);
    const wf = (await callTool(op, 'list_workflows_kandev', { workspace_id: ws[0].id })).structuredContent.items;
    await checkStructuredResults(op, [
      ['list_workspaces_kandev', {}],
      ['list_workflows_kandev', { workspace_id: ws[0].id }],
      ['list_workflow_steps_kandev', { workflow_id: wf[0].id }],
      ['list_tasks_kandev', {}],
      ['list_agents_kandev', { limit: 10 }],
      ['list_executor_profiles_kandev', {}],
      ['create_task_kandev', { title: 'Structured', start_agent: false }],
    ]);
  });

  it('refuses invalid arguments with a tool error in the documented format and writes nothing', async () => {
    await checkInvalidArguments(op);
  });

  it('answers an unknown tool with a JSON-RPC invalid-params error', async () => {
    await assert.rejects(callTool(op, 'no_such_tool_kandev', {}), (err) => {
      assert.ok(err instanceof McpError, String(err));
      assert.equal(err.code, ErrorCode.InvalidParams);
      return true;
    });
  });

  it('answers ping and logging/setLevel, and refuses a foreign Host header', async () => {
    assert.deepEqual(await withTimeout(op.ping(), 10_000, 'ping'), {});
    assert.deepEqual(await withTimeout(op.setLoggingLevel('info'), 10_000, 'setLevel'), {});
    const auth = { ...jsonHeaders, Authorization: `Bearer ${b.token}` };
    const evil = await rawPost(`${b.url}/mcp`, { headers: { ...auth, Host: 'evil.example.com', Origin: 'http://evil.example.com' }, body: initializeBody });
    assert.equal(evil.status, 403, 'DNS-rebinding protection: a foreign Host must be refused');
    const local = await rawPost(`${b.url}/mcp`, { headers: auth, body: initializeBody });
    assert.equal(local.status, 200);
  });
});

describe('a session over stdio (kandev mcp)', { timeout: 180_000 }, () => {
  let b;
  let op;
  let taskId;
  before(async () => {
    b = await startBackend();
    op = await operatorClient(b);
    taskId = await createTask(op, 'E2E parent');
  });
  after(async () => {
    await op?.close();
    await b?.stop();
  });

  it('lists the task-mode catalog and calls tools with schema-valid structured results', async (t) => {
    const s = await sessionClient(b, await createSession(b, taskId));
    t.after(() => s.client.close());
    assert.deepEqual(await listNames(s.client), await catalogNames('task'));
    const ws = (await callTool(s.client, 'list_workspaces_kandev', {})).structuredContent.items;
    const wf = (await callTool(s.client, 'list_workflows_kandev', { workspace_id: ws[0].id })).structuredContent.items;
    await checkStructuredResults(s.client, [
      ['list_workspaces_kandev', {}],
      ['list_workflows_kandev', { workspace_id: ws[0].id }],
      ['list_workflow_steps_kandev', { workflow_id: wf[0].id }],
      ['list_tasks_kandev', { include_archived: true }],
      ['create_task_kandev', { title: 'Child over stdio', parent_id: 'self', start_agent: false }],
    ]);
    const child = (await callTool(op, 'list_tasks_kandev', {})).structuredContent.items.find((x) => x.title === 'Child over stdio');
    assert.equal(child?.parent_id, taskId, 'parent_id "self" did not resolve to the bound task');
  });

  it('refuses invalid arguments with a tool error in the documented format and writes nothing', async (t) => {
    const s = await sessionClient(b, await createSession(b, taskId));
    t.after(() => s.client.close());
    await checkInvalidArguments(s.client, op);
  });

  it('follows `kandev mode set` while connected: one list_changed, config tools only, task tools unknown', async (t) => {
    const session = await createSession(b, taskId);
    const s = await sessionClient(b, session);
    t.after(() => s.client.close());
    let changed = 0;
    s.client.setNotificationHandler(ToolListChangedNotificationSchema, () => { changed++; });
    assert.deepEqual(await listNames(s.client), await catalogNames('task'));
    assert.ok(!(await callTool(s.client, 'list_tasks_kandev', {})).isError);

    const out = await kandevCLI(b, ['mode', 'set', '--session', session.sessionId, '--mode', 'config']);
    assert.match(out, /mode config/);
    await waitFor(() => changed > 0, 15_000, 'notifications/tools/list_changed');

    const config = await catalogNames('config');
    assert.deepEqual(await listNames(s.client), config);
    const taskOnly = (await catalogNames('task')).filter((n) => !config.includes(n));
    assert.ok(taskOnly.includes('create_task_kandev'), `create_task_kandev should be task-only, task-only tools: ${taskOnly}`);
    for (const name of taskOnly) {
      await assert.rejects(callTool(s.client, name, {}), (err) => {
        assert.ok(err instanceof McpError, `${name}: ${err}`);
        assert.equal(err.code, ErrorCode.InvalidParams, `${name}: ${err.message}`);
        assert.match(err.message, /unknown tool/i, name);
        return true;
      });
    }
    // A config tool works in the new mode.
    assert.ok(!(await callTool(s.client, 'list_tasks_kandev', {})).isError);
    assert.equal(changed, 1, 'one mode switch must send exactly one notifications/tools/list_changed');
  });

  it('ask_user_question_kandev waits for the operator, sending progress keep-alives', async (t) => {
    const session = await createSession(b, taskId);
    // Keep-alives every 200 ms instead of 20 s so the test stays short.
    const s = await sessionClient(b, session, { env: { KANDEV_PROGRESS_INTERVAL: '200ms' } });
    t.after(() => s.client.close());
    const ws = await operatorWS(b);
    t.after(() => ws.close());
    await ws.request('subscribe', { topics: [`session:${session.sessionId}`] });

    const progress = [];
    const question = {
      prompt: 'Which database should the service use?',
      title: 'Database',
      options: [
        { label: 'SQLite', description: 'Embedded, one machine.' },
        { label: 'PostgreSQL', description: 'A server, for teams.' },
      ],
    };
    const asked = callTool(s.client, 'ask_user_question_kandev', { questions: [question], timeout_seconds: 120 }, {
      timeoutMs: 60_000,
      onprogress: (p) => progress.push(p),
    });
    asked.catch(() => {}); // observed below; avoid an unhandled rejection meanwhile

    const q = await ws.next('question.created');
    assert.equal(q.session_id, session.sessionId);
    assert.equal(q.questions.length, 1);
    const pending = (await callTool(op, 'list_pending_questions_kandev', {})).structuredContent.items;
    assert.ok(pending.some((x) => x.id === q.id), 'the question is not listed as pending');

    // The call is still waiting and keep-alives arrive meanwhile.
    await waitFor(() => progress.length >= 2, 15_000, 'two progress notifications');
    let settled = false;
    asked.then(() => { settled = true; }, () => { settled = true; });
    await new Promise((r) => setImmediate(r));
    assert.equal(settled, false, 'ask_user_question returned before the operator answered');

    const answer = await ws.request('question.answer', {
      pending_id: q.id, answers: [{ question_id: q.questions[0].id, selected_options: ['q1_opt2'] }],
    });
    assert.equal(answer.claimed, true);

    const r = await asked;
    assert.ok(!r.isError, text(r));
    assert.equal(r.structuredContent.status, 'answered');
    assert.equal(r.structuredContent.pending_id, q.id);
    assert.deepEqual(r.structuredContent.answers.map((a) => [a.question_id, a.selected_options]), [[q.questions[0].id, ['q1_opt2']]]);

    // First answer wins: a second one (through the external endpoint) is not claimed.
    const second = await callTool(op, 'answer_question_kandev', {
      pending_id: q.id, answers: [{ question_id: q.questions[0].id, selected_options: ['q1_opt1'] }],
    });
    assert.ok(!second.isError, text(second));
    assert.equal(second.structuredContent.claimed, false);
    assert.deepEqual(second.structuredContent.question.answers[0].selected_options, ['q1_opt2']);
  });
});
