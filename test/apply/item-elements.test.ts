/**
 * List item path elements (src/apply/item-elements.ts): the key element written without
 * building an object equals JSON.stringify of the object of key fields (sorted, defaults
 * filled, undefined and function values left out, integer-like names first), and the
 * per-apply memo holds only inside one withItemElements call.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { itemElement, keyElement, withItemElements } from '../../src/apply/item-elements.js';
import type { SchemaNode } from '../../src/schema/schema.js';

/** The definition: the object of the key fields, keys sorted, as JSON. */
function reference(item: Record<string, unknown>, keys: string[], defaults?: Record<string, unknown>): string {
  const k: Record<string, unknown> = {};
  for (const key of [...keys].sort()) {
    const v = item[key] ?? defaults?.[key];
    if (v !== undefined) k[key] = v;
  }
  return 'k:' + JSON.stringify(k);
}

const cases: [Record<string, unknown>, string[], Record<string, unknown>?][] = [
  [{ name: 'c', image: 'x' }, ['name']],
  [{ containerPort: 80 }, ['protocol', 'containerPort'], { protocol: 'TCP' }],
  [{ containerPort: 80, protocol: 'UDP' }, ['protocol', 'containerPort'], { protocol: 'TCP' }],
  [{ name: 'é"\n\\\u2028' }, ['name']],
  [{ name: null }, ['name'], { name: 'd' }],
  [{ name: null }, ['name']],
  [{}, ['name', 'port']],
  [{ a: { z: 1, y: [1, 'x'] }, b: 1.5 }, ['b', 'a']],
  [{ 'we"ird': 1, 'a b': 2 }, ['we"ird', 'a b']],
  [{ toString: 1 }, ['toString', 'constructor']],
  [{ 10: 'x', 2: 'y', b: 'z' }, ['b', '10', '2']],
  [{ __proto__: 'p', a: 1 } as Record<string, unknown>, ['__proto__', 'a']],
];

test('keyElement writes what JSON.stringify writes for the object of key fields', () => {
  for (const [item, keys, defaults] of cases)
    assert.equal(keyElement(item, keys, defaults), reference(item, keys, defaults), JSON.stringify(keys));
});

test('item elements are remembered per item inside one withItemElements call, and only there', () => {
  const s = { kind: 'list', listType: 'map', mapKeys: ['name'] } as SchemaNode;
  const item: Record<string, unknown> = { name: 'a' };
  withItemElements(() => {
    assert.equal(itemElement(item, s, 'listmap'), 'k:{"name":"a"}');
    item.name = 'b'; // never happens within one apply: shows the element is not computed again
    assert.equal(itemElement(item, s, 'listmap'), 'k:{"name":"a"}');
    // another schema node's keys are not answered from the memo
    const t = { ...s, mapKeys: ['name', 'x'] } as SchemaNode;
    assert.equal(itemElement(item, t, 'listmap'), 'k:{"name":"b"}');
  });
  // a later call (the next write) sees the item as it is now
  assert.equal(itemElement(item, s, 'listmap'), 'k:{"name":"b"}');
  withItemElements(() => assert.equal(itemElement(item, s, 'listmap'), 'k:{"name":"b"}'));
  assert.equal(itemElement('x', s, 'set'), 'v:"x"');
});

test('single string keys are answered from a bounded table: right for every value, before and after it starts over', () => {
  const keys = ['name'];
  const names = Array.from({ length: 10_000 }, (_, i) => (i % 3 ? `n${i}` : `é"\\${i}\u2028`));
  for (const name of names) assert.equal(keyElement({ name }, keys), reference({ name }, keys));
  for (const name of names.slice(0, 100)) assert.equal(keyElement({ name, x: 1 }, keys), reference({ name }, keys));
  // a default fills a missing key the same way; a non-string value takes the general path
  assert.equal(keyElement({}, ['protocol'], { protocol: 'TCP' }), 'k:{"protocol":"TCP"}');
  assert.equal(keyElement({ name: 7 }, keys), 'k:{"name":7}');
  assert.equal(keyElement({ name: '7' }, keys), 'k:{"name":"7"}');
});
