/**
 * The JSON of an updated object reusing the texts of subtrees it shares with the version it
 * replaces (src/registry/shared-json.ts): always JSON.stringify's text, a remembered text used
 * only for a node that is also the replaced version's, and through a shard the stored JSON of
 * applies and rescales equal to a fresh encoding of the object.
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import type { Op } from '../../src/actors/protocol.js';
import { encodeSharing, forgetTexts, rememberedTexts, stringifySharing } from '../../src/registry/shared-json.js';
import { mulberry32 } from '../../bench/lib/mulberry32.js';
import { openShard } from '../helpers/shard.js';

const big = (tag: string) => ({ tag, pad: 'x'.repeat(120), list: [1, 2, { a: tag }] });

function deployment(tag: string): Record<string, unknown> {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: {
      name: 'd',
      labels: { app: 'd' },
      managedFields: [
        { manager: 'm', operation: 'Apply', time: tag, fieldsType: 'FieldsV1', fieldsV1: { 'f:spec': big(tag) } },
      ],
    },
    spec: { replicas: 1, template: big(tag) },
    status: {},
  };
}

test('the same text as JSON.stringify, with and without a previous version', () => {
  const prev = deployment('a');
  const next = { ...prev, spec: { ...(prev.spec as object), replicas: 2 } };
  assert.equal(stringifySharing(prev, {}), JSON.stringify(prev));
  assert.equal(stringifySharing(next, prev), JSON.stringify(next));
  // what JSON.stringify leaves out or writes as null, at the levels written member by member
  const odd = {
    a: undefined,
    b: () => 1,
    c: Symbol('s'),
    metadata: { x: undefined, managedFields: [undefined, () => 1, { fieldsV1: undefined, n: null }] },
    d: [undefined, 1, Number.NaN, Number.POSITIVE_INFINITY, -0, 1e21, 0.1, true, false],
    n: { a: Number.NaN, b: -0, c: 1e-7, d: 2 ** 53 + 2, e: false },
    '1': 'integer keys first',
    'q"u\\o\u2028te': '\u0000',
    e: { toJSON: () => 'replaced' },
    f: new Date(0),
    g: Object.assign(Object.create(null) as object, { z: 1 }),
    // own keys only, enumerable only, integer-like first (the member-by-member levels walk keys with for-in)
    h: Object.defineProperty({ b: 1, '10': 'x', a: 2, '2': 'y' }, 'hidden', { value: 3, enumerable: false }),
  };
  assert.equal(stringifySharing(odd, {}), JSON.stringify(odd));
  assert.equal(stringifySharing(odd, odd), JSON.stringify(odd));
  const withToJson = { a: 1, toJSON: () => ({ b: 2 }) };
  assert.equal(stringifySharing(withToJson, {}), JSON.stringify(withToJson));
  assert.equal(stringifySharing([1, { a: 2 }], {}), JSON.stringify([1, { a: 2 }]));
});

test('random objects: the same text as JSON.stringify, versions sharing random subtrees', () => {
  const rand = mulberry32(24);
  const value = (depth: number): unknown => {
    const r = rand();
    if (depth > 4 || r < 0.3) return [null, true, 1.5, 'ß"\n', undefined][Math.floor(rand() * 5)];
    if (r < 0.5) return Array.from({ length: Math.floor(rand() * 4) }, () => value(depth + 1));
    const o: Record<string, unknown> = {};
    for (let i = Math.floor(rand() * 5); i > 0; i--)
      o[['a', 'b', 'managedFields', 'fieldsV1', '7'][i]!] = value(depth + 1);
    o.pad = 'p'.repeat(Math.floor(rand() * 200));
    return o;
  };
  /** a copy sharing some subtrees, with some members replaced */
  const variant = (v: unknown, depth: number): unknown => {
    if (v === null || typeof v !== 'object' || rand() < 0.4) return v;
    if (rand() < 0.2) return value(depth);
    if (Array.isArray(v)) return v.map((x) => variant(x, depth + 1));
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, variant(x, depth + 1)]));
  };
  for (let i = 0; i < 300; i++) {
    let prev: unknown = { metadata: { managedFields: [{ fieldsV1: value(3) }] }, spec: value(1), x: value(1) };
    assert.equal(stringifySharing(prev, {}), JSON.stringify(prev));
    for (let n = 0; n < 4; n++) {
      const next = variant(prev, 0);
      assert.equal(stringifySharing(next, prev), JSON.stringify(next));
      prev = next;
    }
  }
});

test('a remembered text is used only for a node the replaced version shares', () => {
  forgetTexts();
  const prev = deployment('a');
  stringifySharing(prev, {});
  assert.ok(rememberedTexts() >= 2, 'the template and the fieldsV1 tree are remembered');
  // the same nodes, changed after their text was taken (never done to a stored object): a
  // version that does not share them with `prev` gets their text anew
  const spec = prev.spec as { template: { tag: string } };
  spec.template.tag = 'changed';
  const unrelated = { ...prev, spec: { ...spec } };
  // shared with prev: the remembered text (stale here, which shows that it was reused)
  assert.notEqual(stringifySharing(unrelated, prev), JSON.stringify(unrelated));
  assert.match(stringifySharing(unrelated, prev), /"template":\{"tag":"a"/);
  // not shared with the version given: taken anew (and remembered anew)
  assert.equal(stringifySharing(unrelated, { spec: { template: { ...spec.template } } }), JSON.stringify(unrelated));
  assert.equal(stringifySharing(unrelated, {}), JSON.stringify(unrelated));
  assert.equal(stringifySharing(unrelated, prev), JSON.stringify(unrelated));
  forgetTexts();
  assert.equal(rememberedTexts(), 0);
});

test("the count of { and [ is the text's, reused pieces included; unknown (Infinity) on the fallbacks", () => {
  const count = (t: string) => [...t].filter((c) => c === '{' || c === '[').length;
  const prev = deployment('a');
  const odd = { 'k{[': ['[', { '{': '}' }], metadata: { managedFields: [{ fieldsV1: { 'k:{"a":1}': {} } }] } };
  for (const [obj, p] of [
    [prev, {}],
    [{ ...prev, spec: { ...(prev.spec as object), replicas: 3 } }, prev],
    [odd, {}],
    [odd, odd],
  ] as const) {
    const piece = encodeSharing(obj, p);
    assert.equal(piece.text, JSON.stringify(obj));
    assert.equal(piece.openers, count(piece.text));
  }
  assert.equal(encodeSharing([1], {}).openers, Number.POSITIVE_INFINITY);
  let deep: unknown = 1;
  for (let i = 0; i < 200_000; i++) deep = [deep];
  assert.equal(encodeSharing({ a: deep }, {}).openers, Number.POSITIVE_INFINITY);
});

test('bounded: the texts of many objects stay within two generations', () => {
  forgetTexts();
  for (let i = 0; i < 5000; i++) stringifySharing(deployment(String(i)), {});
  assert.ok(rememberedTexts() <= 2 * 2048, String(rememberedTexts()));
  forgetTexts();
});

test('nested past the native stack: the text of the iterative encoder', () => {
  let deep: unknown = 1;
  for (let i = 0; i < 200_000; i++) deep = [deep];
  const obj = { spec: { template: deep } };
  const text = stringifySharing(obj, obj);
  assert.equal(text, `{"spec":{"template":${'['.repeat(200_000)}1${']'.repeat(200_000)}}}`);
});

const shard = await openShard('shared-json');
after(() => shard.close());
let id = 1;

function op(verb: 'apply' | 'get', text = '', manager = 'deployer', force = false): Op {
  const type = { group: 'apps', version: 'v1', resource: 'deployments' };
  const enc = { format: 'json', pretty: false } as const;
  const user = { username: 't', groups: ['system:masters', 'system:authenticated'] };
  if (verb === 'get') return { id: id++, op: 'get', type, enc, namespace: 'default', name: 'd', user } as Op;
  return {
    ...{ id: id++, op: 'patch', type, enc, dryRun: false, namespace: 'default', name: 'd', user },
    ...{ patchType: 'apply', text, force, fieldManager: manager },
  } as Op;
}

test('through the shard: every stored JSON is the object encoded afresh', async () => {
  const body = (k: number) =>
    JSON.stringify({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'd', labels: { app: 'd' } },
      spec: {
        selector: { matchLabels: { app: 'd' } },
        template: {
          metadata: { labels: { app: 'd' } },
          spec: { containers: [{ name: 'a', image: `x:${k % 3}`, env: [{ name: 'K', value: String(k) }] }] },
        },
      },
    });
  const scale = (n: number) =>
    JSON.stringify({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'd' }, spec: { replicas: n } });
  let replicas = 1;
  let last = 0;
  for (let k = 0; k < 12; k++) {
    const scaler = k % 3 === 2;
    const r = await shard.one(scaler ? op('apply', scale(k), 'scaler', true) : op('apply', body(k)));
    assert.ok('body' in r && (r.code === 200 || r.code === 201), JSON.stringify(r));
    if (scaler) replicas = k;
    else last = k;
    const got = await shard.one(op('get'));
    assert.ok('body' in r && 'body' in got);
    const text = (got.body as string).trimEnd();
    assert.equal((r.body as string).trimEnd(), text);
    const obj = JSON.parse(text) as {
      metadata: { resourceVersion: string; generation: number; managedFields: { manager: string }[] };
      spec: { replicas: number; template: { spec: { containers: { image: string; env: unknown[] }[] } } };
    };
    // compact, in the object's order, and the latest of every part (none taken from a stale text)
    assert.equal(text, JSON.stringify(obj));
    assert.equal(obj.spec.replicas, replicas);
    assert.equal(obj.spec.template.spec.containers[0]!.image, `x:${last % 3}`);
    assert.deepEqual(obj.spec.template.spec.containers[0]!.env, [{ name: 'K', value: String(last) }]);
    // (ordered by time, then manager: the clock's second decides)
    assert.deepEqual(
      obj.metadata.managedFields.map((e) => e.manager).sort(),
      k < 2 ? ['deployer'] : ['deployer', 'scaler'],
    );
  }
});
