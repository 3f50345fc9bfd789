// A scripted fake model server for driving real agent CLIs (Claude Code,
// the Claude agent SDK, Gemini CLI, Codex) without a model account. It
// listens on 127.0.0.1 only and speaks three model APIs:
//
//   Anthropic Messages   POST /v1/messages (SSE when "stream": true),
//                        POST /v1/messages/count_tokens
//   Gemini               POST /v1beta/models/M:generateContent,
//                        POST /v1beta/models/M:streamGenerateContent (SSE with
//                        ?alt=sse, else a JSON array), POST …:countTokens
//   OpenAI Responses     POST /v1/responses (SSE when "stream": true)
//
// The script: a request that declares the tool to call (matched however
// the client mangles its name: mcp__kandev__T, mcp_kandev_T, kandev__T …)
// and whose conversation holds no tool result yet is answered with one
// call to that tool; once the conversation holds a tool result, the turn
// ends with a short text. Requests that declare no such tool (titles,
// summaries, routing, quota probes) get a plain text answer.
//
// Usage:
//   const fake = await startFakeModel({ tool: 'list_tasks_kandev', args: { limit: 5 } });
//   // point the client at fake.url (ANTHROPIC_BASE_URL, GOOGLE_GEMINI_BASE_URL,
//   // a Codex provider base_url of `${fake.url}/v1`)
//   fake.toolsDeclared('anthropic')  // tool names the client declared, as it spelled them
//   fake.calls                       // [{ api, name, args }] tool calls the fake made
//   fake.results                     // [{ api, name, text, isError }] tool results sent back
//   fake.requests                    // [{ api, method, path, body }] every request
//   fake.answers                     // [{ api, model, tools, input, output }] every generation
//                                    // answered: the model the request named, whether
//                                    // it declared tools, and the usage reported back
//   await fake.close()
import { createServer } from 'node:http';
import { randomUUID } from 'node:crypto';

/** The largest request body the fake reads (agents send long prompts). */
const MAX_BODY = 32 << 20;

/** True when name is tool as a client spells it (tool itself or a mangled prefix + tool). */
export function sameTool(name, tool) {
  return name === tool || (name.endsWith(tool) && /[^A-Za-z0-9]$/.test(name.slice(0, -tool.length)));
}

/**
 * Starts the fake. Options: tool (the tool name to call, unmangled; omit
 * to never call a tool), args (its arguments, default {}), reply (the
 * text that ends the turn), log (a function receiving one line per
 * request, for debugging).
 */
export async function startFakeModel({ tool, args = {}, reply = 'Done.', log } = {}) {
  const state = { tool, args, reply, requests: [], answers: [], calls: [], results: [], declared: { anthropic: [], gemini: [], openai: [] } };
  const server = createServer((req, res) => {
    readBody(req).then((raw) => route(state, req, res, raw, log)).catch((err) => {
      if (!res.headersSent) send(res, 500, { error: { message: String(err?.message ?? err) } });
      else res.end();
    });
  });
  await new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const { port } = server.address();
  return {
    url: `http://127.0.0.1:${port}`,
    requests: state.requests,
    answers: state.answers,
    calls: state.calls,
    results: state.results,
    /** The tool names the client declared in its latest request of api that declared tools. */
    toolsDeclared(api) { return [...state.declared[api]]; },
    close() {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

function readBody(req) {
  return new Promise((resolve, reject) => {
    const chunks = [];
    let size = 0;
    req.on('data', (c) => {
      size += c.length;
      if (size > MAX_BODY) {
        reject(new Error('request body too large'));
        req.destroy();
        return;
      }
      chunks.push(c);
    });
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

function route(state, req, res, raw, log) {
  const url = new URL(req.url, 'http://fake');
  let body = null;
  try { body = raw ? JSON.parse(raw) : null; } catch { /* kept null */ }
  const path = url.pathname;
  const api = path.startsWith('/v1beta/') ? 'gemini' : path.startsWith('/v1/responses') ? 'openai'
    : path.startsWith('/v1/messages') ? 'anthropic' : 'other';
  state.requests.push({ api, method: req.method, path, body });
  log?.(`${req.method} ${path}${url.search}`);
  if (req.method === 'POST' && path === '/v1/messages') return anthropic(state, body, res);
  if (req.method === 'POST' && path === '/v1/messages/count_tokens') return send(res, 200, { input_tokens: 10 });
  if (req.method === 'POST' && path === '/v1/responses') return openai(state, body, res);
  const g = /^\/v1beta\/models\/([^:/]+):(generateContent|streamGenerateContent|countTokens)$/.exec(path);
  if (req.method === 'POST' && g) {
    if (g[2] === 'countTokens') return send(res, 200, { totalTokens: 10 });
    return gemini(state, decodeURIComponent(g[1]), body, res, g[2] === 'streamGenerateContent', url.searchParams.get('alt') === 'sse');
  }
  return send(res, 404, { error: { type: 'not_found_error', message: `the fake model does not serve ${req.method} ${path}` } });
}

function send(res, status, obj) {
  const b = JSON.stringify(obj);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(b) });
  res.end(b);
}

function sse(res, events) {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
  for (const [event, data] of events) {
    res.write(`${event ? `event: ${event}\n` : ''}data: ${JSON.stringify(data)}\n\n`);
  }
  res.end();
}

/**
 * Decides the answer to a request: { call, args } for a tool call, else
 * { text }. declared is every tool name the request offers (deferred
 * ones included), results the tool results already in its conversation,
 * and search the client's tool that loads a deferred tool (Claude Code's
 * ToolSearch), when the tool to call is only deferred.
 */
function decide(state, api, { declared, results, deferred = [], search }) {
  if (declared.length > 0) state.declared[api] = declared;
  const match = state.tool ? declared.find((n) => sameTool(n, state.tool)) : undefined;
  if (!match) return { text: state.reply };
  const own = results.filter((r) => r.name === match);
  if (own.length > 0) {
    for (const r of own) {
      if (!state.results.some((x) => x.id === r.id)) state.results.push({ api, ...r });
    }
    return { text: state.reply };
  }
  if (deferred.includes(match) && search && !results.some((r) => r.name === search)) {
    const args = { query: `select:${match}` };
    state.calls.push({ api, name: search, args });
    return { call: search, args };
  }
  state.calls.push({ api, name: match, args: state.args });
  return { call: match, args: state.args };
}

// ---- Anthropic Messages ----------------------------------------------------

function anthropic(state, body, res) {
  if (!body || !Array.isArray(body.messages)) {
    return send(res, 400, { type: 'error', error: { type: 'invalid_request_error', message: 'messages: required' } });
  }
  const loaded = (body.tools ?? []).filter((t) => !t.defer_loading).map((t) => t.name).filter(Boolean);
  const deferred = deferredTools(body).filter((n) => !loaded.includes(n));
  const declared = [...loaded, ...deferred];
  const results = [];
  for (const m of body.messages) {
    if (!Array.isArray(m.content)) continue;
    for (const c of m.content) {
      if (c.type === 'tool_result') {
        results.push({ id: c.tool_use_id, name: nameOfAnthropicCall(body.messages, c.tool_use_id), text: flatText(c.content), isError: !!c.is_error });
      }
    }
  }
  const search = loaded.find((n) => n === 'ToolSearch');
  const d = decide(state, 'anthropic', { declared, results, deferred, search });
  const id = `msg_${randomUUID().replaceAll('-', '')}`;
  const block = d.call
    ? { type: 'tool_use', id: `toolu_${randomUUID().replaceAll('-', '')}`, name: d.call, input: d.args }
    : { type: 'text', text: d.text };
  const stop = d.call ? 'tool_use' : 'end_turn';
  const usage = { input_tokens: 10, output_tokens: 5, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 };
  state.answers.push({ api: 'anthropic', model: body.model, tools: declared.length > 0, input: usage.input_tokens, output: usage.output_tokens });
  const message = { id, type: 'message', role: 'assistant', model: body.model ?? 'fake', content: [block], stop_reason: stop, stop_sequence: null, usage };
  if (!body.stream) return send(res, 200, message);
  const start = d.call ? { ...block, input: {} } : { type: 'text', text: '' };
  const delta = d.call
    ? { type: 'input_json_delta', partial_json: JSON.stringify(d.args) }
    : { type: 'text_delta', text: d.text };
  return sse(res, [
    ['message_start', { type: 'message_start', message: { ...message, content: [], stop_reason: null, usage: { ...usage, output_tokens: 1 } } }],
    ['content_block_start', { type: 'content_block_start', index: 0, content_block: start }],
    ['content_block_delta', { type: 'content_block_delta', index: 0, delta }],
    ['content_block_stop', { type: 'content_block_stop', index: 0 }],
    ['message_delta', { type: 'message_delta', delta: { stop_reason: stop, stop_sequence: null }, usage: { output_tokens: 5 } }],
    ['message_stop', { type: 'message_stop' }],
  ]);
}

/**
 * The tool names Claude Code lists as deferred (loaded on demand through
 * ToolSearch): the lines after a text line that announces deferred tools.
 */
function deferredTools(body) {
  const texts = [];
  const collect = (c) => {
    if (typeof c === 'string') texts.push(c);
    else if (Array.isArray(c)) c.forEach((x) => collect(x?.text ?? ''));
  };
  collect(body.system);
  body.messages.forEach((m) => collect(m.content));
  const names = [];
  for (const t of texts) {
    const lines = t.split('\n');
    const at = lines.findIndex((l) => /deferred tools/i.test(l));
    if (at < 0) continue;
    for (const l of lines.slice(at + 1)) {
      const n = l.trim();
      if (!/^[A-Za-z0-9_.\-/]+$/.test(n)) break;
      names.push(n);
    }
  }
  return [...new Set(names)];
}

function nameOfAnthropicCall(messages, id) {
  for (const m of messages) {
    if (!Array.isArray(m.content)) continue;
    const u = m.content.find((c) => c.type === 'tool_use' && c.id === id);
    if (u) return u.name;
  }
  return '';
}

function flatText(content) {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content.map((c) => (typeof c === 'string' ? c : c?.text ?? '')).join('');
}

// ---- Gemini generateContent ------------------------------------------------

function gemini(state, model, body, res, stream, alt) {
  if (!body || !Array.isArray(body.contents)) {
    return send(res, 400, { error: { code: 400, message: 'contents: required', status: 'INVALID_ARGUMENT' } });
  }
  const declared = (body.tools ?? []).flatMap((t) => t.functionDeclarations ?? []).map((f) => f.name).filter(Boolean);
  const results = [];
  body.contents.forEach((c, i) => (c.parts ?? []).forEach((p, j) => {
    if (p.functionResponse) {
      const r = p.functionResponse;
      results.push({ id: r.id ?? `${i}.${j}`, name: r.name, text: JSON.stringify(r.response ?? {}), isError: !!r.response?.error });
    }
  }));
  const d = decide(state, 'gemini', { declared, results });
  // JSON-mode requests (Gemini CLI's model router, its loop and
  // next-speaker checks) get the smallest value their response schema allows.
  const cfg = body.generationConfig ?? {};
  const json = cfg.responseMimeType === 'application/json';
  const text = json ? JSON.stringify(sampleOf(cfg.responseJsonSchema ?? cfg.responseSchema ?? {})) : d.text;
  const part = d.call ? { functionCall: { name: d.call, args: d.args } } : { text };
  const usageMetadata = { promptTokenCount: 10, candidatesTokenCount: 5, totalTokenCount: 15 };
  state.answers.push({ api: 'gemini', model, tools: declared.length > 0, input: usageMetadata.promptTokenCount, output: usageMetadata.candidatesTokenCount });
  const answer = {
    candidates: [{ content: { role: 'model', parts: [part] }, finishReason: 'STOP', index: 0 }],
    usageMetadata,
    modelVersion: 'fake',
    responseId: randomUUID(),
  };
  if (!stream) return send(res, 200, answer);
  if (alt) return sse(res, [[null, answer]]);
  return send(res, 200, [answer]);
}

/** A value valid against a (Gemini-dialect or JSON) schema: required properties only. */
export function sampleOf(schema, depth = 0) {
  const type = String(schema?.type ?? 'object').toLowerCase();
  if (Array.isArray(schema?.enum) && schema.enum.length > 0) return schema.enum[0];
  if (depth > 8) return null;
  switch (type) {
    case 'string': return 'fake';
    case 'integer': case 'number': return schema.minimum ?? 1;
    case 'boolean': return false;
    case 'array': return [];
    default: {
      const out = {};
      for (const k of schema?.required ?? []) out[k] = sampleOf(schema.properties?.[k] ?? {}, depth + 1);
      return out;
    }
  }
}

// ---- OpenAI Responses ------------------------------------------------------

function openai(state, body, res) {
  if (!body || (!Array.isArray(body.input) && typeof body.input !== 'string')) {
    return send(res, 400, { error: { type: 'invalid_request_error', message: 'input: required' } });
  }
  // Codex groups each MCP server's tools in a namespace tool
  // ({type: "namespace", name: "mcp__kandev", tools: [...]}); a call names
  // the function and its namespace.
  const namespaces = new Map();
  const declared = (body.tools ?? []).flatMap((t) => {
    if (t.type !== 'namespace') return [t.name ?? t.function?.name];
    return (t.tools ?? []).map((f) => {
      namespaces.set(`${t.name}.${f.name}`, { namespace: t.name, name: f.name });
      return `${t.name}.${f.name}`;
    });
  }).filter(Boolean);
  const items = Array.isArray(body.input) ? body.input : [];
  const results = items.filter((x) => x.type === 'function_call_output').map((x) => ({
    id: x.call_id,
    name: callName(items.find((c) => c.type === 'function_call' && c.call_id === x.call_id)),
    text: typeof x.output === 'string' ? x.output : JSON.stringify(x.output),
    isError: false,
  }));
  const d = decide(state, 'openai', { declared, results });
  const respId = `resp_${randomUUID().replaceAll('-', '')}`;
  const item = d.call
    ? { type: 'function_call', id: `fc_${randomUUID().replaceAll('-', '')}`, call_id: `call_${randomUUID().replaceAll('-', '')}`, ...(namespaces.get(d.call) ?? { name: d.call }), arguments: JSON.stringify(d.args), status: 'completed' }
    : { type: 'message', id: `msg_${randomUUID().replaceAll('-', '')}`, role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: d.text, annotations: [] }] };
  const usage = { input_tokens: 10, input_tokens_details: { cached_tokens: 0 }, output_tokens: 5, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 15 };
  state.answers.push({ api: 'openai', model: body.model, tools: declared.length > 0, input: usage.input_tokens, output: usage.output_tokens });
  const response = { id: respId, object: 'response', created_at: Math.floor(Date.now() / 1000), status: 'completed', model: body.model ?? 'fake', output: [item], usage };
  if (!body.stream) return send(res, 200, response);
  const events = [
    ['response.created', { type: 'response.created', sequence_number: 0, response: { ...response, status: 'in_progress', output: [] } }],
    ['response.output_item.added', { type: 'response.output_item.added', sequence_number: 1, output_index: 0, item: { ...item, status: 'in_progress' } }],
  ];
  if (!d.call) {
    events.push(['response.output_text.delta', { type: 'response.output_text.delta', sequence_number: 2, item_id: item.id, output_index: 0, content_index: 0, delta: d.text }]);
  }
  events.push(
    ['response.output_item.done', { type: 'response.output_item.done', sequence_number: 3, output_index: 0, item }],
    ['response.completed', { type: 'response.completed', sequence_number: 4, response }],
  );
  return sse(res, events);
}

function callName(call) {
  if (!call) return '';
  return call.namespace ? `${call.namespace}.${call.name}` : call.name;
}
