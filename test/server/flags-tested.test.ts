/**
 * Every command-line flag is passed by at least one test (issue 25 item 5): a static check over
 * the test sources, so a new flag without a test fails here. A flag counts as passed when a string
 * literal starts with it (`'--flag'`, `'--flag=v'`, `` `--flag ${v}` ``); a test title naming it
 * does not count.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { FLAG_NAMES } from '../../src/server/options.js';

const SELF = 'flags-tested.test.ts';

function testSources(dir: string, out: string[] = []): string[] {
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) testSources(p, out);
    else if (name.endsWith('.ts') && name !== SELF) out.push(p);
  }
  return out;
}

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** The flags no test source passes as an argument. */
export function untestedFlags(flags: readonly string[], sources: readonly string[]): string[] {
  const text = sources.join('\n');
  return flags.filter((f) => !new RegExp(`(?<!test\\()['"\`]--${escape(f)}(?=['"\`=\\s$])`).test(text));
}

test('every flag of the parser is passed by at least one test', () => {
  const sources = testSources('test').map((f) => readFileSync(f, 'utf8'));
  assert.ok(FLAG_NAMES.length >= 90, `the flag table is read (${FLAG_NAMES.length} flags)`);
  assert.deepEqual(untestedFlags(FLAG_NAMES, sources), []);
});

test('the check itself: a flag only named in a test title or a regular expression is untested', () => {
  const sources = [
    "test('--alpha does things', () => {});",
    'assert.match(err, /--beta must be/);',
    "startServer(['--gamma', 'x']);",
    "parseArgs(['--delta=1']);",
    'spawn(`--epsilon ${v}`);',
    "parseArgs(['--zeta-long']);",
  ];
  assert.deepEqual(untestedFlags(['alpha', 'beta', 'gamma', 'delta', 'epsilon', 'zeta'], sources), [
    'alpha',
    'beta',
    'zeta',
  ]);
});
