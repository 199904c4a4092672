// Runs test files in the order given (run-tests.mjs decides it): `node --test` would sort them.
//
//   node <RUNNER_FLAGS less --test> scripts/lib/run-ordered.mjs <list.json>
//
// list.json is an array of compiled test files. The files run as under `node --test` (a process
// each, RUNNER_CONCURRENCY at a time, each file bounded by RUNNER_TIMEOUT_MS, this process's
// --test-* flags passed on to every file's process) with the same default reporter (spec on a
// terminal, else TAP). Exit code 1 when a test or a file failed.
//
// TEST_FAILURES_OUT=<path> writes the failed tests, one `<file> :: <name> :: <error's first line>` per line, as they fail
// (run-tests.mjs prints them again at the end of its output, where a CI log's tail shows them).
//
// TEST_DURATIONS_OUT=<path> also writes each file's time (the sum of its top-level tests'
// durations, in seconds) as `{ "seconds": { "<durationKey>": s } }`: the table test-order.mjs
// sorts by (scripts/lib/test-durations.json).
import { appendFileSync, readFileSync, writeFileSync } from 'node:fs';
import { run } from 'node:test';
import { spec, tap } from 'node:test/reporters';
import { RUNNER_CONCURRENCY, RUNNER_TIMEOUT_MS } from './test-names.mjs';
import { durationKey } from './test-order.mjs';

const files = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const stream = run({ files, concurrency: RUNNER_CONCURRENCY, timeout: RUNNER_TIMEOUT_MS });

// a file's time: the sum of its top-level tests' durations (each measured in the file's process;
// a before() hook counts in the first test). The runner reports a file's events only when the
// files before it have reported, so the time an event arrives says little about when it happened.
// Written after every file's test (a run cut short still leaves what it measured).
const seconds = {};
const out = process.env.TEST_DURATIONS_OUT;
const count = (data) => {
  if (!data.file || data.nesting !== 0) return;
  const key = durationKey(data.file);
  seconds[key] = Math.round((seconds[key] ?? 0) * 1000 + (data.details?.duration_ms ?? 0)) / 1000;
  if (out) writeFileSync(out, `${JSON.stringify({ seconds }, null, 1)}\n`);
};
stream.on('test:pass', count);
const failuresOut = process.env.TEST_FAILURES_OUT;
// the error's first line (an assertion's message; a test's error wraps it as its cause), bounded
const firstLine = (error) =>
  String(error?.cause?.message ?? error?.message ?? '')
    .split('\n')[0]
    .slice(0, 300);
stream.on('test:fail', (data) => {
  process.exitCode = 1;
  count(data);
  // a failed subtest fails its parents too: the deepest one names the failure
  if (failuresOut && data.details?.error?.failureType !== 'subtestsFailed')
    appendFileSync(failuresOut, `${data.file ?? '(no file)'} :: ${data.name} :: ${firstLine(data.details?.error)}\n`);
});

stream.compose(process.stdout.isTTY ? new spec() : tap).pipe(process.stdout);
