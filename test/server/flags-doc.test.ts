/**
 * `--help`, `--version` and docs/flags.md (issue 20 item 2): every flag the parser knows is
 * documented (and nothing else), docs/flags.md is the rendering of the same table, `--help`
 * prints it grouped by flag set, `--version` names the gitVersion /version serves.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { FLAG_NAMES, parseArgs } from '../../src/server/options.js';
import { FLAG_DOCS, FLAG_SETS, renderFlagsMarkdown, renderHelp } from '../../src/server/flag-docs.js';
import { runMain } from '../helpers/run-main.js';
import { startServer, request } from '../helpers/server.js';

test('every parsed flag is documented, every documented flag parses', () => {
  assert.deepEqual([...FLAG_DOCS.map((d) => d.name)].sort(), [...FLAG_NAMES].sort());
  assert.equal(new Set(FLAG_DOCS.map((d) => d.name)).size, FLAG_DOCS.length, 'no flag documented twice');
});

test('docs/flags.md is generated from the flag table (npm run gen:flags)', () => {
  assert.equal(
    readFileSync('docs/flags.md', 'utf8'),
    renderFlagsMarkdown(),
    'docs/flags.md is stale: run npm run gen:flags',
  );
});

test('-v, -h and --version spellings parse', () => {
  assert.equal(parseArgs(['-v=3']).verbosity, 3);
  assert.equal(parseArgs(['-v', '4']).verbosity, 4);
  assert.equal(parseArgs(['--v=5', '--logging-format', 'json']).loggingFormat, 'json');
  assert.throws(() => parseArgs(['-v=11']), /--v must be an integer between 0 and 10, got "11"/);
  assert.equal(parseArgs(['-h']).help, true);
  assert.equal(parseArgs(['--version=raw']).version, 'raw');
});

test('--help prints every flag set and flag, exit 0; --version the gitVersion of /version', async () => {
  const help = await runMain(['--help']);
  assert.equal(help.code, 0, help.stderr);
  assert.equal(help.stdout, renderHelp());
  for (const set of FLAG_SETS) assert.match(help.stdout, new RegExp(`^${set} flags:$`, 'm'));
  assert.match(help.stdout, /^ {6}--shards int {3,}number of storage shards .*\(default 2\)$/m);
  const version = await runMain(['--version']);
  assert.equal(version.code, 0, version.stderr);
  const s = await startServer();
  try {
    const served = (await request(s.url, 'GET', '/version')).json;
    assert.equal(version.stdout, `platform-apiserver ${served.gitVersion}\n`);
    const raw = await runMain(['--version=raw']);
    assert.deepEqual(JSON.parse(raw.stdout), served);
  } finally {
    await s.stop();
    s.cleanup();
  }
});
