/**
 * The command line (src/server/cli.ts) loads the server (~300 modules) and --reshard's LMDB only
 * after the flags parsed and the data directory was checked: a refused flag, --help and
 * --version (most of the suite's failing starts) answer without them.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { staticImports } from '../helpers/import-graph.js';
import { runMain } from '../helpers/run-main.js';

test('cli.js reaches neither the server nor LMDB through static imports', () => {
  const { files, packages } = staticImports('src/server/cli.js');
  assert.ok(files.has('src/server/options.js'), 'the walk found the flag parser');
  for (const f of ['src/server/server.js', 'src/server/reshard.js', 'workers/shard-actor.js'])
    assert.equal(files.has(f), false, `${f} is imported statically`);
  for (const p of ['lmdb', 'uWebSockets.js', 'piscina'])
    assert.equal(packages.get(p), undefined, `${p} is imported statically by ${packages.get(p)}`);
  assert.ok(files.size < 60, `${files.size} modules before the flags parse`);
});

test('a refused flag is still one line and exit 2; --version still answers', async () => {
  const bad = await runMain(['--no-such-flag']);
  assert.equal(bad.code, 2, bad.stderr);
  assert.match(bad.stderr, /^error: .*no-such-flag/);
  const v = await runMain(['--version']);
  assert.equal(v.code, 0, v.stderr);
  assert.match(v.stdout, /^platform-apiserver v/);
});
