// The official MCP conformance suite (@modelcontextprotocol/conformance,
// pinned in the lockfile, run with the Node 22 binary it needs) against
// the Streamable HTTP endpoint of `kandev serve --conformance`: the same
// gate, transport and event store as the product's /mcp, serving the
// fixture tools (test_*, json_schema_2020_12_tool) the scenarios call.
// The runner cannot send an Authorization header, so the product's /mcp
// (operator token required) is covered by sdk.test.mjs instead.
//
// Every scenario that applies to a tools-only server must pass: no
// expected-failures baseline, and no check may end in FAILURE or WARNING.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { E2E_DIR, node22, run, startBackend } from './lib/kandev.mjs';

const RUNNER = join(E2E_DIR, 'node_modules/@modelcontextprotocol/conformance/dist/index.js');

export const SCENARIOS = [
  'server-initialize',
  'ping',
  'tools-list',
  'tools-call-simple-text',
  'tools-call-error',
  'tools-call-with-progress',
  'tools-call-with-logging',
  'json-schema-2020-12',
  'dns-rebinding-protection',
  'logging-set-level',
  'server-sse-multiple-streams',
];

/** Reads the checks.json the runner wrote under dir (one scenario run). */
async function readChecks(dir) {
  const [sub] = await readdir(dir);
  assert.ok(sub, `the runner wrote no results under ${dir}`);
  return JSON.parse(await readFile(join(dir, sub, 'checks.json'), 'utf8'));
}

describe('MCP conformance suite', { timeout: 180_000 }, () => {
  let b;
  let out;
  before(async () => {
    out = await mkdtemp(join(tmpdir(), 'kandev-e2e-conformance-'));
    b = await startBackend({ args: ['--conformance'] });
  });
  after(async () => {
    await b?.stop();
    if (out) await rm(out, { recursive: true, force: true });
  });

  it('runs the pinned runner version', async () => {
    const v = (await run(node22(), [RUNNER, '--version'])).trim();
    assert.equal(v, '0.1.16');
  });

  for (const scenario of SCENARIOS) {
    it(scenario, async (t) => {
      const dir = join(out, scenario);
      let stdout;
      try {
        stdout = await run(node22(), [RUNNER, 'server', '--url', `${b.url}/conformance/mcp`, '--scenario', scenario, '-o', dir],
          { timeoutMs: 60_000 });
      } catch (err) {
        assert.fail(`conformance ${scenario} failed (exit ${err.code}):\n${err.stdout}\n${err.stderr}`);
      }
      const checks = await readChecks(dir);
      assert.ok(checks.length > 0, `no checks ran:\n${stdout}`);
      for (const c of checks) {
        t.diagnostic(`${c.id}: ${c.status}`);
        assert.ok(['SUCCESS', 'INFO'].includes(c.status), `${c.id}: ${c.status} ${c.errorMessage ?? ''}\n${stdout}`);
      }
      assert.ok(checks.some((c) => c.status === 'SUCCESS'), `no successful check:\n${stdout}`);
    });
  }
});
