// The scripted fake model (fakemodel.mjs) as a process, for tests that
// are not written in JavaScript (the Go Docker executor test):
//
//   node fakemodel-cli.mjs '{"tool":"create_task_kandev","args":{...}}'
//
// prints `listening <url>` on stdout once it serves, one `call <json>`
// line per tool call it made and one `result <json>` line per tool result
// it was sent, and stops on SIGTERM or when stdin closes.
import { startFakeModel } from './fakemodel.mjs';

const opts = JSON.parse(process.argv[2] ?? '{}');
const fake = await startFakeModel({ tool: opts.tool, args: opts.args ?? {}, reply: opts.reply });
let calls = 0;
let results = 0;
const report = setInterval(() => {
  for (; calls < fake.calls.length; calls++) process.stdout.write(`call ${JSON.stringify(fake.calls[calls])}\n`);
  for (; results < fake.results.length; results++) process.stdout.write(`result ${JSON.stringify(fake.results[results])}\n`);
}, 50);
process.stdout.write(`listening ${fake.url}\n`);
const stop = async () => {
  clearInterval(report);
  await fake.close();
  process.exit(0);
};
process.on('SIGTERM', stop);
process.stdin.on('end', stop);
process.stdin.resume();
