// npm run coverage [-- <run-tests filters...>]
//
// Line and branch coverage of src/ (and workers/, the shard actors' entry) with c8: builds with
// source maps (so the figures name the .ts files), runs scripts/run-tests.mjs under c8
// (NODE_V8_COVERAGE reaches every process and worker the tests start: the servers, their shard
// actors, the TLS terminator), then prints the per-folder table of scripts/coverage-table.mjs.
// With filters only those test files run (the whole suite takes 11+ min on a quiet 2-core
// machine); the table then says which.
// Generated code (src/registry/generated/) is left out of the figures.
import { spawnSync } from 'node:child_process';
import { rmSync } from 'node:fs';

const filters = process.argv.slice(2);
const run = (cmd, args, env = process.env) => spawnSync(cmd, args, { stdio: 'inherit', env }).status ?? 1;

if (run('npx', ['tsc', '-p', '.', '--sourceMap']) !== 0) process.exit(1);
rmSync('coverage', { recursive: true, force: true });
const c8 = [
  'node_modules/c8/bin/c8.js',
  '--all',
  '--src',
  'dist/src',
  '--src',
  'dist/workers',
  '--include',
  'dist/src/**',
  '--include',
  'dist/workers/**',
  '--exclude',
  'dist/src/registry/generated/**',
  '--reporter',
  'json-summary',
  '--reporter',
  'text-summary',
  '--report-dir',
  'coverage',
  '--temp-directory',
  'coverage/tmp',
  process.execPath,
  'scripts/run-tests.mjs',
  ...filters,
];
const status = run(process.execPath, c8);
run(process.execPath, [
  'scripts/coverage-table.mjs',
  'coverage/coverage-summary.json',
  ...(filters.length ? ['--subset', filters.join(' ')] : []),
]);
// a failing test is reported, but the figures are still printed
process.exit(status);
