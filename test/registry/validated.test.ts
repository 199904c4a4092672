/**
 * Validation skips what a write shares by reference with a validated object it replaces
 * (src/registry/validated.ts): the schema's required fields (src/schema/required.ts) and a
 * workload's pod template (src/registry/strategies/workloads.ts). The answer must be the one a
 * whole check gives: objects not known validated are checked whole, and a subtree a write
 * replaced (a new version of it) is checked again.
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import type { Op } from '../../src/actors/protocol.js';
import { requiredCauses } from '../../src/schema/required.js';
import { schemaIndex } from '../../src/schema/schema.js';
import { deploymentStrategy } from '../../src/registry/strategies/workloads.js';
import { markValidated, validatedOrUndefined } from '../../src/registry/validated.js';
import type { Workload } from '../../src/api/kinds.js';
import type { Stored } from '../../src/api/object.js';
import { openShard } from '../helpers/shard.js';

const schema = schemaIndex().forKind('apps', 'v1', 'Deployment')!;

function deployment(containers: Record<string, unknown>[], replicas = 1): Workload {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'd', namespace: 'default' },
    spec: {
      replicas,
      selector: { matchLabels: { app: 'd' } },
      template: { metadata: { labels: { app: 'd' } }, spec: { containers } },
    },
  } as Workload;
}

/** The same object with spec copied and replicas changed: the template is shared. */
const rescaled = (w: Workload, replicas: number): Workload => ({ ...w, spec: { ...w.spec, replicas } }) as Workload;

test('required fields: the same causes with a cause-free previous object as without one', () => {
  const prev = deployment([{ name: 'a', image: 'x' }]);
  assert.deepEqual(requiredCauses(prev, schema), []);
  const shared = rescaled(prev, 3);
  assert.deepEqual(requiredCauses(shared, schema, prev), requiredCauses(shared, schema));
  // a subtree the write replaced is walked: a container without its name is found
  const replaced = deployment([{ image: 'x' }]);
  const expected = [
    { reason: 'FieldValueRequired', message: 'Required value', field: 'spec.template.spec.containers[0].name' },
  ];
  assert.deepEqual(requiredCauses(replaced, schema), expected);
  assert.deepEqual(requiredCauses(replaced, schema, prev), expected);
  // changed in place below a shared parent? never: a write copies every node on the way to a change
  const item = { ...(prev.spec!.template!.spec!.containers as Record<string, unknown>[])[0] };
  delete item.name;
  const copied = rescaled(prev, 2);
  copied.spec!.template = {
    ...prev.spec!.template!,
    spec: { ...prev.spec!.template!.spec!, containers: [item] },
  } as never;
  assert.deepEqual(requiredCauses(copied, schema, prev), expected);
});

test('required fields: a subtree shared with the previous object is not walked again', () => {
  // previous objects must have had no cause; this one lacks a container name, to show the skip
  const prev = deployment([{ image: 'x' }]);
  assert.equal(requiredCauses(rescaled(prev, 2), schema).length, 1);
  assert.deepEqual(requiredCauses(rescaled(prev, 2), schema, prev), []);
});

test('a workload template is checked again unless the previous object was validated and shares it', () => {
  const bad = deployment([{ name: 'a', image: 'x', ports: [{ containerPort: 0 }] }]);
  const templateCauses = (obj: Workload, old?: Workload) =>
    deploymentStrategy
      .validate(obj as Stored<Workload>, undefined, old as Stored<Workload> | undefined)
      .filter((c) => c.field?.startsWith('spec.template.spec'));
  const next = rescaled(bad, 2);
  assert.equal(validatedOrUndefined(bad), undefined);
  assert.ok(templateCauses(next, bad).length > 0, 'not known validated: checked whole');
  markValidated(bad); // (stands for an object that passed; this one would not have)
  assert.equal(validatedOrUndefined(bad), bad);
  assert.deepEqual(templateCauses(next, bad), [], 'shared with a validated object: skipped');
  const newTemplate = rescaled(bad, 2);
  newTemplate.spec!.template = structuredClone(bad.spec!.template);
  assert.ok(templateCauses(newTemplate, bad).length > 0, 'a new template: checked');
  assert.ok(templateCauses(next).length > 0, 'no previous object: checked');
});

test('a workload selector is checked again unless the validated previous object shares it and the template', () => {
  const selectorCauses = (obj: Workload, old?: Workload) =>
    deploymentStrategy
      .validate(obj as Stored<Workload>, undefined, old as Stored<Workload> | undefined)
      .filter((c) => c.field?.startsWith('spec.selector') || c.field === 'spec.template.metadata.labels');
  // a selector that does not select the template (stands for an object that passed; this one would not have)
  const bad = deployment([{ name: 'a', image: 'x' }]);
  bad.spec!.selector = { matchLabels: { app: 'other' } };
  assert.ok(selectorCauses(rescaled(bad, 2), bad).length > 0, 'not known validated: checked');
  markValidated(bad);
  assert.deepEqual(selectorCauses(rescaled(bad, 2), bad), [], 'selector and template shared: skipped');
  const newSelector = rescaled(bad, 2);
  newSelector.spec!.selector = { matchLabels: { app: 'other' } };
  assert.ok(selectorCauses(newSelector, bad).length > 0, 'a new selector: checked');
  const newTemplate = rescaled(bad, 2);
  newTemplate.spec!.template = structuredClone(bad.spec!.template);
  assert.ok(selectorCauses(newTemplate, bad).length > 0, 'a new template under the shared selector: checked');
  // a deployer's apply: a new template (new containers) that keeps the labels node
  const newContainers = rescaled(bad, 2);
  newContainers.spec!.template = { ...bad.spec!.template, spec: { containers: [{ name: 'b', image: 'y' }] } };
  assert.deepEqual(selectorCauses(newContainers, bad), [], 'the same labels under the shared selector: skipped');
  const newLabels = rescaled(bad, 2);
  newLabels.spec!.template = { ...bad.spec!.template, metadata: { labels: { app: 'd' } } };
  assert.ok(selectorCauses(newLabels, bad).length > 0, 'new labels under the shared selector: checked');
  const noTemplate = rescaled(bad, 2);
  noTemplate.spec!.template = undefined;
  assert.ok(selectorCauses(noTemplate, bad).length > 0, 'no template: checked');
});

test("a new template's container ports and resources shared with the validated previous container are not checked again", () => {
  const causes = (obj: Workload, old?: Workload) =>
    deploymentStrategy
      .validate(obj as Stored<Workload>, undefined, old as Stored<Workload> | undefined)
      .map((c) => c.field)
      .filter((f) => f?.startsWith('spec.template.spec.containers[0]'));
  // ports and resources that would fail (stand for ones that passed)
  const bad = deployment([
    { name: 'a', image: 'x', ports: [{ containerPort: 0 }], resources: { requests: { cpu: '-1' } } },
  ]);
  markValidated(bad);
  /** a new template whose container is a copy keeping (or not) the previous ports and resources nodes */
  const next = (keepPorts: boolean, keepResources: boolean) => {
    const was = (bad.spec!.template!.spec!.containers as Record<string, unknown>[])[0]!;
    const c: Record<string, unknown> = { ...structuredClone(was), image: 'y' };
    if (keepPorts) c.ports = was.ports;
    if (keepResources) c.resources = was.resources;
    const w = rescaled(bad, 1);
    w.spec!.template = { ...bad.spec!.template!, spec: { ...bad.spec!.template!.spec!, containers: [c] } } as never;
    return w;
  };
  assert.deepEqual(causes(next(true, true), bad), []);
  assert.deepEqual(causes(next(false, true), bad), ['spec.template.spec.containers[0].ports[0].containerPort']);
  assert.deepEqual(causes(next(true, false), bad), ['spec.template.spec.containers[0].resources.requests[cpu]']);
  assert.equal(causes(next(true, true)).length, 2, 'no validated previous object: checked whole');
});

const shard = await openShard('validated');
after(() => shard.close());
let id = 1;

function applyOp(text: string, manager: string, force = false): Op {
  return {
    id: id++,
    op: 'patch',
    type: { group: 'apps', version: 'v1', resource: 'deployments' },
    enc: { format: 'json', pretty: false },
    dryRun: false,
    namespace: 'default',
    name: 'd',
    patchType: 'apply',
    text,
    force,
    fieldManager: manager,
    user: { username: 't', groups: ['system:masters', 'system:authenticated'] },
  };
}

test('through the shard: applies that leave the template alone pass; a new invalid template is refused after them', async () => {
  const body = (port: number) => {
    const w = deployment([{ name: 'a', image: 'x', ports: [{ containerPort: port }] }]) as Record<string, unknown>;
    delete (w.spec as Record<string, unknown>).replicas;
    (w.metadata as Record<string, unknown>).namespace = undefined;
    return JSON.stringify(w);
  };
  const scale = (n: number) =>
    JSON.stringify({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'd' }, spec: { replicas: n } });
  const code = async (op: Op) => {
    const r = await shard.one(op);
    return 'code' in r ? r.code : 'error' in r ? r.error.code : 0;
  };
  assert.equal(await code(applyOp(body(80), 'deployer')), 201);
  for (let n = 2; n < 5; n++) assert.equal(await code(applyOp(scale(n), 'scaler', true)), 200);
  assert.equal(await code(applyOp(body(0), 'deployer')), 422);
  assert.equal(await code(applyOp(scale(7), 'scaler', true)), 200);
  assert.equal(await code(applyOp(body(81), 'deployer')), 200);
  // a required field the new template lacks (no container name) is still found
  const nameless = body(82).replace('"name":"a",', '');
  assert.equal(await code(applyOp(nameless, 'deployer')), 422);
  assert.equal(await code(applyOp(scale(8), 'scaler', true)), 200);
});
