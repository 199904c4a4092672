// Runs test files in the order given (run-tests.mjs decides it): `node --test` would sort them.
//
//   node <RUNNER_FLAGS less --test> scripts/lib/run-ordered.mjs <list.json>
//
// list.json is an array of compiled test files. The files run as under `node --test` (a process
// each, RUNNER_CONCURRENCY at a time, each file bounded by RUNNER_TIMEOUT_MS, this process's
// --test-* flags passed on to every file's process) with the same default reporter (spec on a
// terminal, else TAP). Exit code 1 when a test or a file failed.
//
// TEST_DURATIONS_OUT=<path> also writes each file's wall time (from the moment it left the queue
// to its last report, in seconds) as `{ "seconds": { "<durationKey>": s } }`: the table
// test-order.mjs sorts by (scripts/lib/test-durations.json).
import { readFileSync, writeFileSync } from 'node:fs';
import { run } from 'node:test';
import { spec, tap } from 'node:test/reporters';
import { RUNNER_CONCURRENCY, RUNNER_TIMEOUT_MS } from './test-names.mjs';
import { durationKey } from './test-order.mjs';

const files = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const stream = run({ files, concurrency: RUNNER_CONCURRENCY, timeout: RUNNER_TIMEOUT_MS });

const started = new Map();
const last = new Map();
stream.on('test:fail', () => {
  process.exitCode = 1;
});
// (test:enqueue comes for every file at once; test:dequeue when the file's process starts)
stream.on('test:dequeue', (data) => {
  if (data.file && data.nesting === 0 && !started.has(data.file)) started.set(data.file, Date.now());
});
for (const type of ['test:start', 'test:pass', 'test:fail', 'test:diagnostic', 'test:stdout', 'test:stderr']) {
  stream.on(type, (data) => {
    if (data.file) last.set(data.file, Date.now());
  });
}
stream.on('end', () => {
  const out = process.env.TEST_DURATIONS_OUT;
  if (!out) return;
  const seconds = {};
  for (const [file, t0] of started) seconds[durationKey(file)] = Math.round((last.get(file) ?? t0) - t0) / 1000;
  writeFileSync(out, `${JSON.stringify({ seconds }, null, 1)}\n`);
});

stream.compose(process.stdout.isTTY ? new spec() : tap).pipe(process.stdout);
