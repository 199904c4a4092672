/**
 * upstream ValidateFieldManager (src/registry/patch.ts fieldManagerCauses) with its printable
 * ASCII fast path: the same causes as the per-character Unicode test for every ASCII character,
 * a few others, and the 128-byte bound on either side.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fieldManagerCauses } from '../../src/registry/patch.js';

const printable = (ch: string): boolean => ch === ' ' || /^[\p{L}\p{M}\p{N}\p{P}\p{S}]$/u.test(ch);

test('every ASCII character, alone and inside a name: refused exactly when Go unicode.IsPrint refuses it', () => {
  for (let c = 0; c < 0x80; c++) {
    const ch = String.fromCharCode(c);
    for (const name of [ch, `kube-${ch}-controller`]) {
      const causes = fieldManagerCauses(name);
      assert.equal(causes.length, printable(ch) ? 0 : 1, `U+${c.toString(16)}`);
      if (!printable(ch)) assert.match(causes[0]!.message!, /invalid character U\+00[0-7][0-9A-F] \(at position \d+\)/);
    }
  }
  for (const name of ['müller', '名前', 'a\u200bb', 'x\u0085y'])
    assert.equal(fieldManagerCauses(name).length, [...name].every(printable) ? 0 : 1, JSON.stringify(name));
});

test('at most 128 bytes: 128 ASCII characters pass, 129 or 65 two-byte characters are too long', () => {
  assert.deepEqual(fieldManagerCauses('m'.repeat(128)), []);
  assert.deepEqual(
    fieldManagerCauses('m'.repeat(129)).map((c) => c.reason),
    ['FieldValueTooLong'],
  );
  assert.deepEqual(
    fieldManagerCauses('é'.repeat(65)).map((c) => c.reason),
    ['FieldValueTooLong'],
  );
  assert.deepEqual(fieldManagerCauses(''), []);
});
