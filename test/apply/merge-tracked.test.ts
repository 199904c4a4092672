/**
 * The one walk doing the merge and the applied set (src/apply/merge-tracked.ts mergeTracked)
 * against the two walks it replaces: mergeApplied (the same object, and the live object itself
 * where nothing changed) and appliedFieldSet (the same members in the same order, the same
 * repeated keys in the same order), over random Deployment pairs (lists merged item by item and
 * by the general algorithm, nulls, empty maps, undeclared fields, system metadata, status,
 * repeated keys), for the main resource and the status and scale subresources.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { FieldSet } from '../../src/apply/fieldset.js';
import { withItemElements } from '../../src/apply/item-elements.js';
import { mergeApplied } from '../../src/apply/merge.js';
import { mergeTracked } from '../../src/apply/merge-tracked.js';
import { appliedFieldSet } from '../../src/apply/tracked-paths.js';
import { schemaIndex } from '../../src/schema/schema.js';

const deployment = schemaIndex().forKind('apps', 'v1', 'Deployment')!;
const SUBS = [undefined, 'status', 'scale'];

let seed = 7;
const rnd = (): number => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
const pick = <T>(xs: T[]): T => xs[Math.floor(rnd() * xs.length)]!;

function container(name: string): Record<string, unknown> {
  const c: Record<string, unknown> = { name, image: pick(['x:1', 'x:2']) };
  if (rnd() < 0.6)
    c.env = pick([[], [{ name: 'E', value: pick(['1', '2']) }], [{ name: 'F' }, { name: 'E', value: '1' }]]);
  if (rnd() < 0.5) c.ports = [{ containerPort: pick([80, 81]), protocol: pick(['TCP', 'UDP', undefined]) }];
  if (rnd() < 0.4)
    c.resources = pick([{}, { limits: { cpu: '1' } }, { limits: null }, { requests: { memory: '1Mi' } }]);
  if (rnd() < 0.2) c.args = pick([['a'], ['a', 'b'], null]);
  if (rnd() < 0.1) c.undeclared = pick([{ a: 1 }, null, 'x']);
  return c;
}

function variant(): Record<string, unknown> {
  const names = Array.from({ length: Math.floor(rnd() * 4) }, () => pick(['a', 'b', 'c']));
  const meta: Record<string, unknown> = { name: 'd' };
  if (rnd() < 0.5) meta.labels = pick([{}, { app: pick(['x', 'y']) }, { app: null }]);
  if (rnd() < 0.3) meta.uid = 'u';
  if (rnd() < 0.2) meta.annotations = null;
  if (rnd() < 0.2) meta.finalizers = pick([['f'], ['f', 'g'], ['g', 'f']]);
  const obj: Record<string, unknown> = { apiVersion: 'apps/v1', kind: 'Deployment' };
  if (rnd() < 0.9) obj.metadata = rnd() < 0.1 ? null : meta;
  const pod: Record<string, unknown> = { containers: names.map(container) };
  if (rnd() < 0.2) pod.nodeSelector = pick([{}, { z: '1' }]);
  if (rnd() < 0.2) pod.tolerations = [{ key: pick(['k', 'l']) }];
  const spec: Record<string, unknown> = { template: rnd() < 0.1 ? null : { spec: pod } };
  if (rnd() < 0.5) spec.replicas = rnd() < 0.2 ? null : Math.floor(rnd() * 3);
  if (rnd() < 0.3) spec.selector = { matchLabels: { app: 'x' } };
  if (rnd() < 0.1) spec.strategy = pick([{ type: 'Recreate' }, 'odd']);
  obj.spec = rnd() < 0.05 ? pick([null, 'odd']) : spec;
  if (rnd() < 0.3) obj.status = { replicas: 1, conditions: [{ type: pick(['A', 'A', 'B']), status: 'True' }] };
  if (rnd() < 0.05) obj.extra = { x: 1 };
  return JSON.parse(JSON.stringify(obj));
}

const keys = (s: FieldSet) => s.paths().map((p) => p.join('/'));

test('mergeTracked is mergeApplied and appliedFieldSet in one walk', () => {
  let fused = 0;
  let sameBase = 0;
  for (let i = 0; i < 600; i++) {
    const live = i % 5 === 0 ? { apiVersion: 'apps/v1', kind: 'Deployment', metadata: {} } : variant();
    // a re-apply of the live object's own values: unchanged subtrees come back as live's
    const applied = i % 7 === 0 ? structuredClone(live) : variant();
    for (const sub of SUBS) {
      const wantRepeats: string[] = [];
      const want = withItemElements(() => ({
        set: appliedFieldSet(applied, deployment, sub, wantRepeats),
        merged: mergeApplied(live, applied, deployment),
      }));
      const repeats: string[] = [];
      const got = withItemElements(() => mergeTracked(live, applied, deployment, sub, repeats));
      assert.ok(got, `${i}`);
      fused++;
      assert.deepEqual(keys(got.set), keys(want.set), `set ${i} ${sub}`);
      assert.deepEqual(repeats, wantRepeats, `repeats ${i} ${sub}`);
      assert.deepEqual(got.merged, want.merged, `merged ${i} ${sub}`);
      assert.equal(got.merged === live, want.merged === live, `identity ${i} ${sub}`);
      if (got.merged === live) sameBase++;
    }
  }
  assert.equal(fused, 1800);
  assert.ok(sameBase > 0, 'some applies change nothing');
});

test('mergeTracked leaves a non-object configuration to the two walks', () => {
  assert.equal(mergeTracked({}, [1], deployment, undefined, []), undefined);
  assert.equal(mergeTracked({}, 'x', deployment, undefined, []), undefined);
});

test('mergeTracked never writes into its inputs', () => {
  for (let i = 0; i < 100; i++) {
    const live = variant();
    const applied = variant();
    const [l, a] = [JSON.stringify(live), JSON.stringify(applied)];
    withItemElements(() => mergeTracked(live, applied, deployment, undefined, []));
    assert.equal(JSON.stringify(live), l);
    assert.equal(JSON.stringify(applied), a);
  }
});
