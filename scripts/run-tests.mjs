// Runs every compiled test file under dist/test with Node's built-in runner.
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';

function collect(dir, out) {
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) collect(p, out);
    else if (name.endsWith('.test.js')) out.push(p);
  }
  return out;
}
const filter = process.argv.slice(2);
let files = collect('dist/test', []).sort();
if (filter.length) files = files.filter((f) => filter.some((x) => f.includes(x)));
// node --test without files would discover and run everything
if (files.length === 0) {
  console.error(`no test file matches ${filter.join(' ')}`);
  process.exit(1);
}
const run = (list, env = process.env) =>
  spawnSync(process.execPath, ['--test', '--test-concurrency=2', '--test-timeout=180000', ...list], { stdio: 'inherit', env }).status ?? 1;
let status = run(files);
// the full run also passes the resource, watch and patch suites on the etcd backend (one
// parameterised suite: test/helpers/server.ts starts every server on a per-file etcd)
const ETCD_SUITES = ['server/crud', 'server/watch', 'server/patch', 'server/list', 'server/apply', 'server/scale'];
if (filter.length === 0 && process.env.PLAT_TEST_STORAGE === undefined && existsSync('/usr/bin/etcd')) {
  console.log('# the resource, watch and patch suites again, on etcd (PLAT_TEST_STORAGE=etcd3)');
  const etcdFiles = files.filter((f) => ETCD_SUITES.some((x) => f.includes(x)));
  status = run(etcdFiles, { ...process.env, PLAT_TEST_STORAGE: 'etcd3' }) || status;
}
process.exit(status);
