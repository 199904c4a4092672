/**
 * The per-kind Quantity plans: compiled from the reference schema, they reach every
 * definition field the reference types as resource.Quantity, and nothing else.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { schemaIndex, type SchemaNode } from '../../src/schema/schema.js';
import { canonicalizeQuantities, quantityPlan, type QuantityPlan } from '../../src/schema/quantities.js';
import { canonicalQuantity } from '../../src/api/quantity.js';
import { deepFreeze } from '../../src/api/deep-freeze.js';

const REFERENCE = fileURLToPath(new URL('../../../reference/openapi-v2.json', import.meta.url));
const defs: Record<string, any> = JSON.parse(readFileSync(REFERENCE, 'utf8')).definitions;
const QUANTITY_REF = /\.apimachinery\.pkg\.api\.resource\.Quantity$/;

/** `<definition>.<field>` for every field the reference types as a Quantity (itself, map value or list item). */
function referenceFields(): Set<string> {
  const out = new Set<string>();
  const refOf = (s: any): string | undefined => s?.$ref ?? s?.additionalProperties?.$ref ?? s?.items?.$ref;
  for (const [name, d] of Object.entries(defs)) {
    for (const [k, v] of Object.entries<any>(d.properties ?? {}))
      if (QUANTITY_REF.test(refOf(v) ?? '')) out.add(`${name}.${k}`);
  }
  return out;
}

/** The `<definition>.<field>` pairs a plan reaches, walking it beside its schema. */
function planFields(node: SchemaNode, plan: QuantityPlan, out: Set<string>): void {
  if (plan.at === 'struct') {
    for (const [k, p] of plan.fields) {
      const child = node.props![k]!;
      const leaf = p.at === 'value' || ((p.at === 'map' || p.at === 'list') && p.elem.at === 'value');
      if (leaf) out.add(`${node.name}.${k}`);
      else planFields(child, p, out);
    }
  } else if (plan.at === 'map' || plan.at === 'list') {
    planFields(node.elem!, plan.elem, out);
  }
}

test('plans reach exactly the reference Quantity fields of the served kinds', () => {
  const reached = new Set<string>();
  for (const d of Object.values(defs)) {
    for (const g of d['x-plat-group-version-kind'] ?? []) {
      const node = schemaIndex().forKind(g.group, g.version, g.kind);
      const plan = quantityPlan(node);
      if (node && plan) planFields(node, plan, reached);
    }
  }
  const expected = referenceFields();
  for (const f of reached) assert.ok(expected.has(f), `${f} is no Quantity in the reference`);
  for (const f of expected) assert.ok(reached.has(f), `${f} is not reached from any kind`);
});

test('kinds without Quantity fields have no plan', () => {
  for (const [group, version, kind] of <[string, string, string][]>[
    ['', 'v1', 'ConfigMap'],
    ['', 'v1', 'Secret'],
    ['', 'v1', 'Service'],
    ['rbac.authorization.plat.io', 'v1', 'Role'],
  ]) {
    const node = schemaIndex().forKind(group, version, kind);
    assert.ok(node, kind);
    assert.equal(quantityPlan(node), undefined, kind);
  }
  assert.ok(quantityPlan(schemaIndex().forKind('', 'v1', 'Pod')));
});

test('canonicalizeQuantities rewrites map values, struct fields and list items; fails on the first bad one', () => {
  const node = schemaIndex().forKind('', 'v1', 'Pod')!;
  const plan = quantityPlan(node)!;
  const pod = {
    spec: {
      containers: [{ name: 'c', resources: { requests: { cpu: '1000m', memory: null }, limits: { memory: 1024 } } }],
      volumes: [{ name: 'v', emptyDir: { sizeLimit: '1024Mi' } }],
      overhead: { cpu: '0.1' },
    },
    status: { containerStatuses: [{ allocatedResources: { cpu: '2000m' } }] },
  };
  const fail = (m: string): never => {
    throw new Error(m);
  };
  const out = canonicalizeQuantities(pod, plan, fail);
  assert.deepEqual(out.spec.containers[0]!.resources, {
    requests: { cpu: '1', memory: '0' },
    limits: { memory: '1024' },
  });
  assert.equal(out.spec.volumes[0]!.emptyDir.sizeLimit, '1Gi');
  assert.deepEqual(out.spec.overhead, { cpu: '100m' });
  assert.deepEqual(out.status.containerStatuses[0]!.allocatedResources, { cpu: '2' });
  assert.throws(
    () => canonicalizeQuantities({ spec: { overhead: { cpu: '1kk' } } }, plan, fail),
    /unable to parse quantity's suffix/,
  );
});

test('remembered canonical strings: the same answers as canonicalQuantity, past the bound, and a bad one fails every time', () => {
  const plan = quantityPlan(schemaIndex().forKind('', 'v1', 'Pod')!)!;
  const fail = (m: string): never => {
    throw new Error(m);
  };
  // 5,000 distinct strings (more than the memo holds), each canonicalized twice
  const inputs = Array.from(
    { length: 5000 },
    (_, i) => `${i % 7 === 0 ? i * 1000 : i}${['m', 'Mi', '', 'k', 'e3'][i % 5]}`,
  );
  for (let round = 0; round < 2; round++) {
    const { overhead } = canonicalizeQuantities(
      { spec: { overhead: Object.fromEntries(inputs.map((q, i) => [`r${i}`, q])) } },
      plan,
      fail,
    ).spec;
    inputs.forEach((q, i) => {
      const want = canonicalQuantity(q);
      assert.ok('value' in want);
      assert.equal(overhead[`r${i}`], want.value, q);
    });
  }
  for (let round = 0; round < 2; round++)
    assert.throws(() => canonicalizeQuantities({ spec: { overhead: { cpu: '1kk' } } }, plan, fail), /suffix/);
});

test('canonicalizeQuantities never writes into its input: copies only the nodes on a changed path, answers an unchanged value itself', () => {
  const plan = quantityPlan(schemaIndex().forKind('', 'v1', 'Pod')!)!;
  const fail = (m: string): never => {
    throw new Error(m);
  };
  const canonicalPod = deepFreeze({
    metadata: { name: 'p' },
    spec: {
      containers: [
        { name: 'a', resources: { requests: { cpu: '100m', memory: '64Mi' }, limits: { cpu: '1' } } },
        { name: 'b', resources: { requests: { cpu: '250m' } } },
      ],
      overhead: { cpu: '100m' },
    },
  });
  // everything canonical already (as every stored object is): the very same object back
  assert.equal(canonicalizeQuantities(canonicalPod, plan, fail), canonicalPod);
  // one container's limit spelled another way: a new path down to it, every other node shared
  const spelled = deepFreeze({
    ...canonicalPod,
    spec: {
      ...canonicalPod.spec,
      containers: [
        {
          ...canonicalPod.spec.containers[0]!,
          resources: { ...canonicalPod.spec.containers[0]!.resources, limits: { cpu: '1000m' } },
        },
        canonicalPod.spec.containers[1]!,
      ],
    },
  });
  const out = canonicalizeQuantities(spelled, plan, fail);
  assert.notEqual(out, spelled);
  assert.deepEqual(out, canonicalPod);
  assert.equal(spelled.spec.containers[0]!.resources.limits?.cpu, '1000m');
  assert.equal(out.metadata, spelled.metadata);
  assert.equal(out.spec.overhead, spelled.spec.overhead);
  assert.equal(out.spec.containers[1], spelled.spec.containers[1]);
  assert.equal(out.spec.containers[0]!.resources.requests, spelled.spec.containers[0]!.resources.requests);
  // a null map value and a number: new nodes too, the frozen input as it was
  const odd = deepFreeze({ spec: { overhead: { cpu: null, memory: 1024 } } });
  assert.deepEqual(canonicalizeQuantities(odd, plan, fail), { spec: { overhead: { cpu: '0', memory: '1024' } } });
  assert.deepEqual(odd, { spec: { overhead: { cpu: null, memory: 1024 } } });
});
