/**
 * The update comparisons of src/registry/objects.ts against their previous forms: specChanged
 * (now without copying the two objects or building a key set) and unchangedWrite (now answering
 * false at once for a new generation). Seeded random pairs of objects sharing and differing in
 * top-level fields, fields absent or present as undefined, and metadata with and without a
 * generation; each must answer as the reference does.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { KubeObject, Stored } from '../../src/api/object.js';
import { sameStored, specChanged, unchangedWrite, managedTimesOnly } from '../../src/registry/objects.js';
import { same } from '../../src/registry/strategies/field-errors.js';
import { mulberry32 } from '../../bench/lib/mulberry32.js';

/** specChanged as it was: both objects copied, the union of their keys in a Set. */
function specChangedReference(obj: KubeObject, old: KubeObject): boolean {
  const a: Record<string, unknown> = { ...obj };
  const b: Record<string, unknown> = { ...old };
  for (const k of new Set([...Object.keys(a), ...Object.keys(b)])) {
    if (k === 'metadata' || k === 'status' || k === 'kind' || k === 'apiVersion') continue;
    if (!same(a[k], b[k])) return true;
  }
  return false;
}

/** unchangedWrite as it was: no generation shortcut. */
function unchangedWriteReference(next: Stored, old: Stored): boolean {
  const base = { ...old, metadata: { ...old.metadata, resourceVersion: next.metadata.resourceVersion } };
  if (sameStored(next, base)) return true;
  const fields = next.metadata.managedFields;
  const was = old.metadata.managedFields;
  if (!Array.isArray(fields) || !Array.isArray(was) || fields === was) return false;
  return (
    sameStored({ ...next, metadata: { ...next.metadata, managedFields: was } }, base) && managedTimesOnly(fields, was)
  );
}

const TOP = ['spec', 'status', 'data', 'kind', 'apiVersion', 'rules', 'template', 'webhooks'];
const VALUES: unknown[] = [
  1,
  2,
  'a',
  'b',
  true,
  null,
  { x: 1 },
  { x: 2 },
  { y: [1, 2] },
  [1],
  [2],
  undefined,
  // nested: key order, a key present as undefined, arrays of objects, an array against an object
  { a: { b: 1, c: 2 } },
  { a: { c: 2, b: 1 } },
  { a: { b: 1 } },
  { a: { b: 1, c: undefined } },
  { a: { b: [{ c: 1 }, { d: [] }] } },
  { a: { b: [{ c: 2 }, { d: [] }] } },
  { a: { b: { 0: { c: 1 }, 1: { d: [] } } } },
  { a: {}, b: null },
];

function pairs(seed: number, n: number): [Record<string, unknown>, Record<string, unknown>][] {
  const r = mulberry32(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
  const out: [Record<string, unknown>, Record<string, unknown>][] = [];
  for (let i = 0; i < n; i++) {
    const a: Record<string, unknown> = {};
    const b: Record<string, unknown> = {};
    const times = ['2026-01-01T00:00:00Z', '2026-01-01T00:00:01Z'];
    const entries = (t: string) => [{ manager: 'm', operation: 'Apply', time: t, fieldsV1: { 'f:spec': {} } }];
    const metaOf = () => {
      const m: Record<string, unknown> = { name: 'x', resourceVersion: pick(['1', '2']) };
      const g = pick([undefined, 'absent', 1, 2]);
      if (g !== 'absent') m.generation = g;
      if (r() < 0.5) m.managedFields = entries(pick(times));
      return m;
    };
    a.metadata = metaOf();
    b.metadata = r() < 0.3 ? a.metadata : metaOf();
    for (const k of [pick(TOP), pick(TOP), pick(TOP)]) {
      if (Object.hasOwn(a, k) || Object.hasOwn(b, k)) continue;
      const roll = r();
      if (roll < 0.25) continue; // in neither
      if (roll < 0.45) a[k] = pick(VALUES);
      else if (roll < 0.65) b[k] = pick(VALUES);
      else {
        const v = pick(VALUES);
        a[k] = v;
        b[k] = r() < 0.6 ? (v !== null && typeof v === 'object' ? structuredClone(v) : v) : pick(VALUES);
      }
    }
    out.push([a, b]);
  }
  return out;
}

test('specChanged answers as the copying version over random pairs', () => {
  let changed = 0;
  for (const [a, b] of pairs(24, 5000)) {
    const want = specChangedReference(a as KubeObject, b as KubeObject);
    assert.equal(specChanged(a as KubeObject, b as KubeObject), want, JSON.stringify([a, b]));
    assert.equal(specChanged(b as KubeObject, a as KubeObject), specChangedReference(b as KubeObject, a as KubeObject));
    if (want) changed++;
  }
  assert.ok(changed > 500 && changed < 4500, `both answers drawn (${changed} changed)`);
});

test('specChanged: a field only the old object has, present or undefined', () => {
  const old = { kind: 'K', metadata: {}, spec: { a: 1 }, extra: 1 } as unknown as KubeObject;
  assert.equal(specChanged({ kind: 'K', metadata: {}, spec: { a: 1 } } as unknown as KubeObject, old), true);
  const undef = { kind: 'K', metadata: {}, spec: { a: 1 }, extra: undefined } as unknown as KubeObject;
  assert.equal(specChanged({ kind: 'K', metadata: {}, spec: { a: 1 } } as unknown as KubeObject, undef), false);
  assert.equal(
    specChanged({ kind: 'J', metadata: { a: 1 }, status: 2, spec: { a: 1 } } as unknown as KubeObject, undef),
    false,
  );
});

test('unchangedWrite answers as before, a new generation included', () => {
  let unchanged = 0;
  let generations = 0;
  for (const [a, b] of pairs(7, 5000)) {
    const next = a as unknown as Stored;
    const old = b as unknown as Stored;
    if (next.metadata.generation !== old.metadata.generation) generations++;
    const want = unchangedWriteReference(next, old);
    assert.equal(unchangedWrite(next, old), want, JSON.stringify([a, b]));
    if (want) unchanged++;
  }
  assert.ok(unchanged > 50, `unchanged writes drawn (${unchanged})`);
  assert.ok(generations > 500, `new generations drawn (${generations})`);
});
