// Runs every compiled test file under dist/test with Node's built-in runner.
import { readdirSync, statSync } from 'node:fs';
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
const r = spawnSync(process.execPath, ['--test', '--test-concurrency=2', '--test-timeout=180000', ...files], { stdio: 'inherit' });
process.exit(r.status ?? 1);
