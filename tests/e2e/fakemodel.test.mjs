// The fake model server's script, spoken over each API as the agent CLIs
// speak it (lib/fakemodel.mjs): first turn → one call of the tool, after
// its result → the turn ends; deferred tools are loaded first; side
// requests get text. Real HTTP on 127.0.0.1.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';

import { sameTool, startFakeModel } from './lib/fakemodel.mjs';

let fake;
before(async () => { fake = await startFakeModel({ tool: 'list_tasks_kandev', args: { limit: 5 }, reply: 'All done.' }); });
after(() => fake.close());

async function post(path, body) {
  const r = await fetch(fake.url + path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: r.status, type: r.headers.get('content-type'), text: await r.text() };
}

/** The data objects of an SSE body, with their event names. */
function events(text) {
  return text.split('\n\n').filter(Boolean).map((chunk) => {
    const event = /^event: (.*)$/m.exec(chunk)?.[1];
    return { event, data: JSON.parse(/^data: (.*)$/m.exec(chunk)[1]) };
  });
}

describe('fake model', () => {
  it('matches tool names however clients mangle them', () => {
    for (const n of ['list_tasks_kandev', 'mcp__kandev__list_tasks_kandev', 'mcp_kandev_list_tasks_kandev', 'mcp__kandev.list_tasks_kandev']) {
      assert.ok(sameTool(n, 'list_tasks_kandev'), n);
    }
    assert.ok(!sameTool('xlist_tasks_kandev', 'list_tasks_kandev'));
    assert.ok(!sameTool('list_tasks_kandev_2', 'list_tasks_kandev'));
  });

  it('Anthropic Messages: a streamed tool_use, then end_turn after the tool_result', async () => {
    const tools = [{ name: 'Read', input_schema: {} }, { name: 'mcp__kandev__list_tasks_kandev', input_schema: {} }];
    const first = await post('/v1/messages', { model: 'm', stream: true, tools, messages: [{ role: 'user', content: 'list' }] });
    assert.equal(first.type, 'text/event-stream');
    const ev = events(first.text);
    assert.deepEqual(ev.map((e) => e.event), ['message_start', 'content_block_start', 'content_block_delta', 'content_block_stop', 'message_delta', 'message_stop']);
    const block = ev[1].data.content_block;
    assert.equal(block.type, 'tool_use');
    assert.equal(block.name, 'mcp__kandev__list_tasks_kandev');
    assert.deepEqual(JSON.parse(ev[2].data.delta.partial_json), { limit: 5 });
    assert.equal(ev[4].data.delta.stop_reason, 'tool_use');
    const messages = [{ role: 'user', content: 'list' }, { role: 'assistant', content: [{ ...block, input: { limit: 5 } }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: block.id, content: [{ type: 'text', text: '{"items":[]}' }] }] }];
    const second = JSON.parse((await post('/v1/messages', { model: 'm', tools, messages })).text);
    assert.equal(second.stop_reason, 'end_turn');
    assert.deepEqual(second.content, [{ type: 'text', text: 'All done.' }]);
    assert.deepEqual(fake.toolsDeclared('anthropic'), ['Read', 'mcp__kandev__list_tasks_kandev']);
    assert.deepEqual(fake.results.at(-1), { api: 'anthropic', id: block.id, name: 'mcp__kandev__list_tasks_kandev', text: '{"items":[]}', isError: false });
  });

  it('Anthropic Messages: a deferred tool is loaded with ToolSearch first', async () => {
    const system = 'The following deferred tools are now available via ToolSearch:\nWebFetch\nmcp__kandev__list_tasks_kandev\n\nMore text.';
    const tools = [{ name: 'ToolSearch', input_schema: {} }];
    const first = JSON.parse((await post('/v1/messages', { system, tools, messages: [{ role: 'user', content: 'list' }] })).text);
    assert.deepEqual(first.content[0].input, { query: 'select:mcp__kandev__list_tasks_kandev' });
    assert.equal(first.content[0].name, 'ToolSearch');
    assert.deepEqual(fake.toolsDeclared('anthropic'), ['ToolSearch', 'WebFetch', 'mcp__kandev__list_tasks_kandev']);
    const loaded = [...tools, { name: 'mcp__kandev__list_tasks_kandev', input_schema: {} }];
    const messages = [{ role: 'user', content: 'list' }, { role: 'assistant', content: first.content },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: first.content[0].id, content: [{ type: 'tool_reference', tool_name: 'mcp__kandev__list_tasks_kandev' }] }] }];
    const second = JSON.parse((await post('/v1/messages', { system, tools: loaded, messages })).text);
    assert.equal(second.content[0].name, 'mcp__kandev__list_tasks_kandev');
    assert.deepEqual(second.content[0].input, { limit: 5 });
  });

  it('Anthropic Messages: requests without the tool get text; count_tokens answers', async () => {
    const r = JSON.parse((await post('/v1/messages', { messages: [{ role: 'user', content: 'a title please' }] })).text);
    assert.deepEqual(r.content, [{ type: 'text', text: 'All done.' }]);
    assert.deepEqual(JSON.parse((await post('/v1/messages/count_tokens', { messages: [] })).text), { input_tokens: 10 });
  });

  it('Gemini: a functionCall over SSE, then text after the functionResponse; JSON mode fills the schema', async () => {
    const tools = [{ functionDeclarations: [{ name: 'mcp_kandev_list_tasks_kandev', parametersJsonSchema: {} }] }];
    const first = await post('/v1beta/models/g:streamGenerateContent?alt=sse', { contents: [{ role: 'user', parts: [{ text: 'list' }] }], tools });
    const part = events(first.text)[0].data.candidates[0].content.parts[0];
    assert.deepEqual(part, { functionCall: { name: 'mcp_kandev_list_tasks_kandev', args: { limit: 5 } } });
    const contents = [{ role: 'user', parts: [{ text: 'list' }] }, { role: 'model', parts: [part] },
      { role: 'user', parts: [{ functionResponse: { id: 'c1', name: 'mcp_kandev_list_tasks_kandev', response: { output: '{}' } } }] }];
    const second = JSON.parse((await post('/v1beta/models/g:generateContent', { contents, tools })).text);
    assert.deepEqual(second.candidates[0].content.parts, [{ text: 'All done.' }]);
    const json = JSON.parse((await post('/v1beta/models/g:generateContent', { contents: [{ role: 'user', parts: [{ text: 'route' }] }],
      generationConfig: { responseMimeType: 'application/json', responseJsonSchema: { type: 'OBJECT', required: ['score', 'why'], properties: { score: { type: 'INTEGER' }, why: { type: 'STRING' } } } } })).text);
    assert.deepEqual(JSON.parse(json.candidates[0].content.parts[0].text), { score: 1, why: 'fake' });
    assert.deepEqual(JSON.parse((await post('/v1beta/models/g:countTokens', { contents: [] })).text), { totalTokens: 10 });
  });

  it('OpenAI Responses: a namespaced function_call, then a message after the output', async () => {
    const tools = [{ type: 'function', name: 'exec_command' }, { type: 'namespace', name: 'mcp__kandev', tools: [{ type: 'function', name: 'list_tasks_kandev' }] }];
    const first = await post('/v1/responses', { model: 'o', stream: true, input: [{ type: 'message', role: 'user', content: [{ type: 'input_text', text: 'list' }] }], tools });
    const ev = events(first.text);
    assert.deepEqual(ev.map((e) => e.event), ['response.created', 'response.output_item.added', 'response.output_item.done', 'response.completed']);
    const item = ev[2].data.item;
    assert.equal(item.type, 'function_call');
    assert.equal(item.namespace, 'mcp__kandev');
    assert.equal(item.name, 'list_tasks_kandev');
    assert.deepEqual(JSON.parse(item.arguments), { limit: 5 });
    assert.deepEqual(fake.toolsDeclared('openai'), ['exec_command', 'mcp__kandev.list_tasks_kandev']);
    const input = [{ type: 'message', role: 'user', content: [] }, item, { type: 'function_call_output', call_id: item.call_id, output: '{"items":[]}' }];
    const second = events((await post('/v1/responses', { stream: true, input, tools })).text);
    assert.equal(second.at(-1).data.response.output[0].content[0].text, 'All done.');
    assert.equal(fake.results.at(-1).name, 'mcp__kandev.list_tasks_kandev');
  });

  it('keeps each answered generation: the model named, whether tools were declared, the usage sent', async () => {
    const own = await startFakeModel({ tool: 'list_tasks_kandev' });
    try {
      const at = (path, body) => fetch(own.url + path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }).then((r) => r.text());
      const a = JSON.parse(await at('/v1/messages', { model: 'claude-x', tools: [{ name: 'mcp__kandev__list_tasks_kandev' }], messages: [{ role: 'user', content: 'l' }] }));
      const g = JSON.parse(await at('/v1beta/models/gemini-y:generateContent', { contents: [{ role: 'user', parts: [{ text: 'title' }] }] }));
      const o = JSON.parse(await at('/v1/responses', { model: 'gpt-z', input: 'hi' }));
      await at('/v1/messages/count_tokens', { messages: [] });
      assert.deepEqual(own.answers, [
        { api: 'anthropic', model: 'claude-x', tools: true, input: a.usage.input_tokens, output: a.usage.output_tokens },
        { api: 'gemini', model: 'gemini-y', tools: false, input: g.usageMetadata.promptTokenCount, output: g.usageMetadata.candidatesTokenCount },
        { api: 'openai', model: 'gpt-z', tools: false, input: o.usage.input_tokens, output: o.usage.output_tokens },
      ]);
    } finally {
      await own.close();
    }
  });

  it('refuses what it does not serve, with an error body', async () => {
    assert.equal((await post('/v1/chat/completions', {})).status, 404);
    assert.equal((await post('/v1/messages', { model: 'm' })).status, 400);
    assert.equal((await post('/v1/responses', {})).status, 400);
    assert.equal((await post('/v1beta/models/g:generateContent', {})).status, 400);
  });
});
