/**
 * apply's merge (src/apply/merge.ts) answers the live value itself for what an applied
 * configuration does not change, so the merged object shares its unchanged subtrees with the
 * stored one (the comparison, validation and no-op check then stop at them by reference), and
 * it never writes into its inputs (they may be the cached object).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mergeApplied, mergeItemsByKey } from '../../src/apply/merge.js';
import type { SchemaNode } from '../../src/schema/schema.js';
import { schemaIndex } from '../../src/schema/schema.js';
import { deepFreeze } from '../../src/api/deep-freeze.js';

const deployment = schemaIndex().forKind('apps', 'v1', 'Deployment')!;

function variants(count: number, seed: number): Record<string, unknown>[] {
  const rnd = (): number => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
  const pick = <T>(xs: T[]): T => xs[Math.floor(rnd() * xs.length)]!;
  return Array.from({ length: count }, () => {
    // distinct names: apply refuses repeated list keys before it merges
    const names = ['a', 'b', 'c'].filter(() => rnd() < 0.6);
    const containers = (names.length ? names : ['a']).map((name) => ({
      name,
      image: pick(['x:1', 'x:2']),
      ...(rnd() < 0.5 ? { env: [{ name: pick(['E', 'F']), value: pick(['1', '2']) }] } : {}),
      ...(rnd() < 0.4 ? { resources: { limits: { cpu: pick(['1', '2']) } } } : {}),
      ...(rnd() < 0.3 ? { args: [pick(['-a', '-b'])] } : {}),
    }));
    const spec: Record<string, unknown> = { template: { metadata: { labels: { app: 'x' } }, spec: { containers } } };
    if (rnd() < 0.5) spec.replicas = rnd() < 0.2 ? null : Math.floor(rnd() * 3);
    if (rnd() < 0.4) spec.selector = { matchLabels: { app: pick(['x', 'y']) } };
    const labels = rnd() < 0.5 ? { app: pick(['x', 'y']) } : undefined;
    const obj: Record<string, unknown> = {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'd', ...(labels ? { labels } : {}) },
      spec,
    };
    if (rnd() < 0.3) obj.status = { replicas: 1 };
    return obj;
  });
}

test('merging what is already there answers the live object itself; merging twice changes nothing the second time', () => {
  const lives = variants(200, 7);
  const applieds = variants(200, 1234);
  for (let i = 0; i < lives.length; i++) {
    const live = deepFreeze(lives[i]!);
    const applied = deepFreeze(applieds[i]!);
    // frozen inputs: a write into either throws
    const once = deepFreeze(mergeApplied(live, applied, deployment));
    const twice = mergeApplied(once, applied, deployment);
    assert.equal(twice, once, `round ${i}: ${JSON.stringify(applied)}`);
    assert.equal(mergeApplied(once, {}, deployment), once);
    // the same JSON as a merge onto a private copy (key order included)
    assert.equal(JSON.stringify(mergeApplied(structuredClone(live), applied, deployment)), JSON.stringify(once));
  }
});

test('an applied change copies only its path: siblings and untouched items are the live values', () => {
  const live = deepFreeze({
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'd', labels: { app: 'x' } },
    spec: {
      replicas: 2,
      selector: { matchLabels: { app: 'x' } },
      template: {
        metadata: { labels: { app: 'x' } },
        spec: {
          containers: [
            { name: 'a', image: 'x:1', resources: { limits: { cpu: '1' } }, ports: [{ containerPort: 80 }] },
            { name: 'b', image: 'y:1' },
          ],
        },
      },
    },
    status: { replicas: 2 },
  });
  const applied = {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'd', labels: { app: 'x' } },
    spec: {
      selector: { matchLabels: { app: 'x' } },
      template: {
        metadata: { labels: { app: 'x' } },
        spec: {
          containers: [
            { name: 'a', image: 'x:2', resources: { limits: { cpu: '1' } }, ports: [{ containerPort: 80 }] },
          ],
        },
      },
    },
  };
  const out = mergeApplied(live, applied, deployment) as typeof live;
  const [a, b] = out.spec.template.spec.containers;
  const [liveA, liveB] = live.spec.template.spec.containers;
  assert.equal(a!.image, 'x:2');
  assert.notEqual(a, liveA);
  assert.equal(b, liveB);
  assert.equal(a!.resources, liveA!.resources);
  assert.equal(a!.ports, liveA!.ports);
  assert.equal(out.metadata, live.metadata);
  assert.equal(out.spec.selector, live.spec.selector);
  assert.equal(out.spec.template.metadata, live.spec.template.metadata);
  assert.equal(out.status, live.status);
  assert.equal(live.spec.template.spec.containers[0]!.image, 'x:1');
});

test('a map key named __proto__ merges as an own key, and null removes it; the live map is never written', () => {
  const live = deepFreeze(
    JSON.parse(
      '{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d","labels":{"__proto__":"a","b":"1"}}}',
    ),
  );
  const set = mergeApplied(live, JSON.parse('{"metadata":{"labels":{"__proto__":"z"}}}'), deployment) as typeof live;
  assert.equal(Object.getPrototypeOf(set.metadata.labels), Object.prototype);
  assert.deepEqual(Object.entries(set.metadata.labels), [
    ['__proto__', 'z'],
    ['b', '1'],
  ]);
  const removed = mergeApplied(
    live,
    JSON.parse('{"metadata":{"labels":{"__proto__":null}}}'),
    deployment,
  ) as typeof live;
  assert.deepEqual(Object.entries(removed.metadata.labels), [['b', '1']]);
  assert.equal(mergeApplied(live, JSON.parse('{"metadata":{"labels":{"x":null}}}'), deployment), live);
  assert.equal(JSON.stringify(live.metadata.labels), '{"__proto__":"a","b":"1"}');
});

test('lists holding the same keys in the same order merge item by item as the general list merge does', () => {
  const podSpec = (deployment.props!.spec!.props!.template!.props!.spec as SchemaNode).props!;
  const containers = podSpec.containers as SchemaNode;
  assert.equal(containers.listType, 'map');
  let seed = 99;
  const rnd = (): number => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
  const pick = <T>(xs: T[]): T => xs[Math.floor(rnd() * xs.length)]!;
  for (let round = 0; round < 300; round++) {
    const names = ['a', 'b', 'c', 'd'].filter(() => rnd() < 0.7);
    const item = (name: string) => ({
      name,
      image: pick(['x:1', 'x:2']),
      ...(rnd() < 0.5 ? { env: [{ name: pick(['E', 'F']), value: pick(['1', '2']) }] } : {}),
      ...(rnd() < 0.3 ? { args: [pick(['-a', '-b'])] } : {}),
    });
    const live = deepFreeze(names.map(item));
    // mostly the same keys in the same order; sometimes reordered, shortened or repeated (the general merge)
    let appliedNames = [...names];
    const r = rnd();
    if (r < 0.15) appliedNames.reverse();
    else if (r < 0.25) appliedNames = appliedNames.slice(1);
    else if (r < 0.3 && appliedNames.length) appliedNames.push(appliedNames[0]!);
    const applied = deepFreeze(appliedNames.map(item));
    const merged = mergeApplied(live, applied, containers);
    const general = mergeItemsByKey(live, applied, containers, 'listmap');
    assert.equal(JSON.stringify(merged), JSON.stringify(general), `round ${round}`);
    // unchanged items are the live ones in both
    (merged as unknown[]).forEach((x, i) => assert.equal(x === live[i], general[i] === live[i]));
  }
});
