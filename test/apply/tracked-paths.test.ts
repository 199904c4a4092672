/**
 * The one-walk forms of apply's sets (src/apply/tracked-paths.ts appliedFieldSet, compare.ts
 * compareTracked) against their definitions: tracked(fieldsOf(x)) and tracked(compare(a, b)),
 * over Deployments varied at random (metadata, status, nulls, empty maps, repeated keys), for
 * the main resource and the status and scale subresources.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { type FieldSet, fieldsOf } from '../../src/apply/fieldset.js';
import { compare, compareTracked } from '../../src/apply/compare.js';
import { appliedFieldSet, tracked } from '../../src/apply/tracked-paths.js';
import { schemaIndex } from '../../src/schema/schema.js';

const deployment = schemaIndex().forKind('apps', 'v1', 'Deployment')!;
const SUBS = [undefined, 'status', 'scale'];

function variants(count: number): Record<string, unknown>[] {
  let seed = 11;
  const rnd = (): number => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
  const pick = <T>(xs: T[]): T => xs[Math.floor(rnd() * xs.length)]!;
  const out: Record<string, unknown>[] = [];
  for (let i = 0; i < count; i++) {
    const names = Array.from({ length: 1 + Math.floor(rnd() * 3) }, () => pick(['a', 'b', 'c']));
    const containers = names.map((name) => ({
      name,
      image: pick(['x:1', 'x:2']),
      ...(rnd() < 0.5 ? { env: [{ name: 'E', value: pick(['1', '2']) }] } : {}),
      ...(rnd() < 0.3 ? { resources: rnd() < 0.5 ? {} : { limits: { cpu: '1' } } } : {}),
    }));
    const meta: Record<string, unknown> = { name: 'd' };
    if (rnd() < 0.5) meta.labels = rnd() < 0.3 ? {} : { app: pick(['x', 'y']) };
    if (rnd() < 0.3) meta.uid = 'u';
    if (rnd() < 0.3) meta.resourceVersion = '5';
    if (rnd() < 0.3) meta.annotations = null;
    const obj: Record<string, unknown> = { apiVersion: 'apps/v1', kind: 'Deployment' };
    if (rnd() < 0.9) obj.metadata = rnd() < 0.1 ? null : meta;
    const spec: Record<string, unknown> = { template: { spec: { containers } } };
    if (rnd() < 0.5) spec.replicas = rnd() < 0.2 ? null : Math.floor(rnd() * 3);
    if (rnd() < 0.3) spec.selector = { matchLabels: { app: 'x' } };
    obj.spec = spec;
    if (rnd() < 0.4) obj.status = { replicas: 1, conditions: [{ type: pick(['A', 'A', 'B']), status: 'True' }] };
    out.push(obj);
  }
  return out;
}

const keys = (s: FieldSet) => s.paths().map((p) => p.join('/'));

test('appliedFieldSet is tracked(fieldsOf(x)), members in the same order', () => {
  for (const x of variants(300))
    for (const sub of SUBS)
      assert.deepEqual(keys(appliedFieldSet(x, deployment, sub, [])), keys(tracked(fieldsOf(x, deployment), sub)));
});

test('appliedFieldSet notes every repeated list key, tracked or not, in walk order', () => {
  const x = {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    spec: { template: { spec: { containers: [{ name: 'a' }, { name: 'a' }, { name: 'b' }, { name: 'b' }] } } },
    status: { conditions: [{ type: 'A' }, { type: 'A' }] },
  };
  const repeats: string[] = [];
  appliedFieldSet(x, deployment, undefined, repeats);
  assert.deepEqual(repeats, [
    '.spec.template.spec.containers: duplicate entries for key [name="a"]',
    '.spec.template.spec.containers: duplicate entries for key [name="b"]',
    '.status.conditions: duplicate entries for key [type="A"]',
  ]);
});

test('compareTracked is tracked(compare(a, b)) for added, modified and removed', () => {
  const xs = variants(120);
  for (let i = 0; i + 1 < xs.length; i++)
    for (const sub of SUBS) {
      const [a, b] = [xs[i], xs[i + 1]];
      const want = compare(a, b, deployment);
      const got = compareTracked(a, b, deployment, sub);
      for (const k of ['added', 'modified', 'removed'] as const)
        assert.deepEqual(keys(got[k]).sort(), keys(tracked(want[k], sub)).sort(), `${k} ${i} ${sub}`);
    }
});

test('compare pairs list-map items with the same keys in the same order as the general matching does', () => {
  // 40 more items, the same on both sides, make the lists too long to pair: the general matching
  // by element, which records nothing for them; the paths of the first items come out the same, in the same order
  const padding = Array.from({ length: 40 }, (_, i) => ({ name: `pad${i}`, image: 'p' }));
  const pad = (x: Record<string, unknown>) => {
    const y = structuredClone(x) as { spec: { template: { spec: { containers: unknown[] } } } };
    y.spec.template.spec.containers.push(...structuredClone(padding));
    return y;
  };
  const xs = variants(60);
  let paired = 0;
  for (let n = 0; n < xs.length * xs.length; n++) {
    const [i, j] = [Math.floor(n / xs.length), n % xs.length];
    const [a, b] = [xs[i]!, xs[j]!];
    const names = (x: Record<string, unknown>) =>
      JSON.stringify(
        (x.spec as { template: { spec: { containers: { name: string }[] } } }).template.spec.containers.map(
          (c) => c.name,
        ),
      );
    if (names(a) !== names(b) || new Set(JSON.parse(names(a))).size !== JSON.parse(names(a)).length) continue;
    paired++;
    const got = compare(a, b, deployment);
    const want = compare(pad(a), pad(b), deployment);
    for (const k of ['added', 'modified', 'removed'] as const)
      assert.deepEqual(keys(got[k]), keys(want[k]), `${k} ${i}`);
  }
  assert.ok(paired > 100, `${paired} pairs with the same container names`);
});
