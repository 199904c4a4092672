/**
 * Webhook conversion beyond get/list/create/update: watches, server-side apply, the status
 * and scale subresources and Table views in a non-storage version go through the webhook.
 * v1 (storage) has spec.sizeCm (integer), spec.replicas, status.observedCm; v2 has spec.size
 * ("<n>cm"), spec.count (its scale path) and status.observed ("<n>cm"), each version its own
 * printer column. A strategic merge patch stays 415 as for every custom resource.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { startServer, request, type TestServer } from '../helpers/server.js';
import { openWatch } from '../helpers/watch.js';
import { Pki } from '../auth/helpers.js';
import { startAdmissionWebhook, type AdmissionWebhook } from '../admission/helpers.js';
import { waitEstablished } from '../registry/crd/fixtures.js';

let s: TestServer;
let pki: Pki;
let hook: AdmissionWebhook;
/** the webhook refuses every review while set */
let failing = false;
const GROUP = 'views.example.com';
const V1 = `/apis/${GROUP}/v1/namespaces/default/jars`;
const V2 = `/apis/${GROUP}/v2/namespaces/default/jars`;
const TABLE = { accept: 'application/json;as=Table;g=meta.plat.io;v=v1' };

const cm = (n: unknown) => `${String(n)}cm`;
const num = (v: unknown) => parseInt(String(v), 10);

/** v1 <-> v2: sizeCm <-> size, replicas <-> count, status.observedCm <-> status.observed */
function convertOne(o: any, desired: string): any {
  const out = structuredClone(o);
  out.apiVersion = desired;
  const move = (obj: any, from: string, to: string, f: (v: unknown) => unknown) => {
    if (obj && obj[from] !== undefined) {
      obj[to] = f(obj[from]);
      delete obj[from];
    }
  };
  if (desired.endsWith('/v2')) {
    move(out.spec, 'sizeCm', 'size', cm);
    move(out.spec, 'replicas', 'count', Number);
    move(out.status, 'observedCm', 'observed', cm);
  } else {
    move(out.spec, 'size', 'sizeCm', num);
    move(out.spec, 'count', 'replicas', Number);
    move(out.status, 'observed', 'observedCm', num);
  }
  return out;
}

function version(
  name: string,
  storage: boolean,
  spec: Record<string, unknown>,
  status: Record<string, unknown>,
  column: Record<string, string>,
  replicas: string,
) {
  return {
    name,
    served: true,
    storage,
    subresources: { status: {}, scale: { specReplicasPath: replicas, statusReplicasPath: '.status.replicas' } },
    additionalPrinterColumns: [column],
    schema: {
      openAPIV3Schema: {
        type: 'object',
        properties: {
          spec: { type: 'object', properties: spec },
          status: { type: 'object', properties: { ...status, replicas: { type: 'integer' } } },
        },
      },
    },
  };
}

before(async () => {
  pki = new Pki();
  hook = await startAdmissionWebhook(pki);
  hook.answers.set('/convert', (review) => {
    const req = review.request;
    if (failing)
      return {
        response: { uid: req.uid, result: { status: 'Failure', message: 'jar converter is down' }, allowed: undefined },
      };
    return {
      response: {
        uid: req.uid,
        result: { status: 'Success' },
        convertedObjects: req.objects.map((o: any) => convertOne(o, req.desiredAPIVersion)),
        allowed: undefined,
      },
    };
  });
  s = await startServer();
  const crd = {
    apiVersion: 'apiextensions.plat.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `jars.${GROUP}` },
    spec: {
      group: GROUP,
      scope: 'Namespaced',
      names: { plural: 'jars', kind: 'Jar' },
      versions: [
        version(
          'v1',
          true,
          { sizeCm: { type: 'integer' }, replicas: { type: 'integer' } },
          { observedCm: { type: 'integer' } },
          { name: 'Cm', type: 'integer', jsonPath: '.spec.sizeCm' },
          '.spec.replicas',
        ),
        version(
          'v2',
          false,
          { size: { type: 'string' }, count: { type: 'integer' } },
          { observed: { type: 'string' } },
          { name: 'Size', type: 'string', jsonPath: '.spec.size' },
          '.spec.count',
        ),
      ],
      conversion: {
        strategy: 'Webhook',
        webhook: {
          conversionReviewVersions: ['v1'],
          clientConfig: { url: `${hook.base}/convert`, caBundle: hook.caBundle },
        },
      },
    },
  };
  assert.equal(
    (await request(s.url, 'POST', '/apis/apiextensions.plat.io/v1/customresourcedefinitions', crd)).status,
    201,
  );
  await waitEstablished(s.url, `jars.${GROUP}`);
});
after(async () => {
  await s.stop();
  s.cleanup();
  await hook.close();
  rmSync(pki.dir, { recursive: true, force: true });
});

const create = async (name: string, sizeCm: number) => {
  const res = await request(s.url, 'POST', V1, {
    apiVersion: `${GROUP}/v1`,
    kind: 'Jar',
    metadata: { name },
    spec: { sizeCm, replicas: 2 },
  });
  assert.equal(res.status, 201, res.text);
  return res.json;
};

test('a watch in v2 gets every event converted; a failing conversion ends it with a 500 ERROR event', async () => {
  const first = await create('w1', 4);
  const w = await openWatch(s.url, `${V2}?watch=1&resourceVersion=0&allowWatchBookmarks=true`);
  try {
    await w.waitEvents(1);
    assert.deepEqual(
      [w.events[0]!.type, w.events[0]!.object.apiVersion, w.events[0]!.object.spec],
      ['ADDED', `${GROUP}/v2`, { size: '4cm', count: 2 }],
    );
    await create('w2', 9);
    const up = await request(s.url, 'PUT', `${V1}/w1`, { ...first, spec: { sizeCm: 5, replicas: 3 } });
    assert.equal(up.status, 200, up.text);
    await w.waitFor((evs) => evs.some((e) => e.type === 'MODIFIED'), 'MODIFIED');
    const seen = w.events
      .filter((e) => e.type !== 'BOOKMARK')
      .map((e) => [e.type, e.object.metadata.name, e.object.apiVersion, e.object.spec.size, e.object.spec.count]);
    assert.deepEqual(seen, [
      ['ADDED', 'w1', `${GROUP}/v2`, '4cm', 2],
      ['ADDED', 'w2', `${GROUP}/v2`, '9cm', 2],
      ['MODIFIED', 'w1', `${GROUP}/v2`, '5cm', 3],
    ]);
    failing = true;
    await create('w3', 1);
    await w.waitClosed();
    const last = w.events.at(-1)!;
    assert.equal(last.type, 'ERROR');
    assert.deepEqual([last.object.kind, last.object.code, last.object.reason], ['Status', 500, 'InternalError']);
    assert.equal(
      last.object.message,
      `Internal error occurred: conversion webhook for ${GROUP}/v1, Kind=Jar failed: conversion request failed: jar converter is down`,
    );
  } finally {
    failing = false;
    w.close();
  }
});

test('server-side apply in v2 works on the v2 shape and records v2 field ownership', async () => {
  const apply = (size: string) =>
    request(
      s.url,
      'PATCH',
      `${V2}/ap?fieldManager=jarctl`,
      `apiVersion: ${GROUP}/v2\nkind: Jar\nmetadata:\n  name: ap\nspec:\n  size: ${size}\n`,
      { 'content-type': 'application/apply-patch+yaml' },
    );
  const made = await apply('6cm');
  assert.equal(made.status, 201, made.text);
  assert.deepEqual([made.json.apiVersion, made.json.spec], [`${GROUP}/v2`, { size: '6cm' }]);
  const entry = made.json.metadata.managedFields.find((m: any) => m.manager === 'jarctl');
  assert.deepEqual(
    [entry.operation, entry.apiVersion, entry.fieldsV1],
    ['Apply', `${GROUP}/v2`, { 'f:spec': { 'f:size': {} } }],
  );
  assert.deepEqual((await request(s.url, 'GET', `${V1}/ap`)).json.spec, { sizeCm: 6 });
  const again = await apply('7cm');
  assert.equal(again.status, 200, again.text);
  assert.deepEqual([again.json.apiVersion, again.json.spec], [`${GROUP}/v2`, { size: '7cm' }]);
  assert.deepEqual((await request(s.url, 'GET', `${V1}/ap`)).json.spec, { sizeCm: 7 });
  // another manager's update in v2 takes spec.size in v2's terms: the applier now conflicts
  const put = await request(s.url, 'PUT', `${V2}/ap?fieldManager=editor`, { ...again.json, spec: { size: '8cm' } });
  assert.equal(put.status, 200, put.text);
  const owners = put.json.metadata.managedFields.map((m: any) => [
    m.manager,
    m.operation,
    m.apiVersion,
    JSON.stringify(m.fieldsV1),
  ]);
  // the applier owned only spec.size: its emptied entry goes
  assert.deepEqual(owners, [['editor', 'Update', `${GROUP}/v2`, '{"f:spec":{"f:size":{}}}']]);
  const conflict = await apply('9cm');
  assert.equal(conflict.status, 409, conflict.text);
  assert.equal(
    conflict.json.message,
    'Apply failed with 1 conflict: conflict with "editor" using views.example.com/v2: .spec.size',
  );
});

test('a strategic merge patch of a custom resource is 415 in any version', async () => {
  await create('smp', 2);
  const res = await request(
    s.url,
    'PATCH',
    `${V2}/smp`,
    { spec: { size: '3cm' } },
    { 'content-type': 'application/strategic-merge-patch+json' },
  );
  assert.equal(res.status, 415, res.text);
  assert.deepEqual([res.json.reason, res.json.code], ['UnsupportedMediaType', 415]);
  // upstream crdHandler's supportedTypes (CBOR apply only with the CBORServingAndStorage gate)
  assert.equal(
    res.json.message,
    'the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml',
  );
});

test('the status subresource in v2 reads and writes the converted status', async () => {
  await create('st', 3);
  const got = await request(s.url, 'GET', `${V2}/st/status`);
  assert.equal(got.status, 200, got.text);
  const put = await request(s.url, 'PUT', `${V2}/st/status`, { ...got.json, status: { observed: '3cm' } });
  assert.equal(put.status, 200, put.text);
  assert.deepEqual([put.json.apiVersion, put.json.status], [`${GROUP}/v2`, { observed: '3cm' }]);
  assert.deepEqual((await request(s.url, 'GET', `${V1}/st`)).json.status, { observedCm: 3 });
  const patched = await request(
    s.url,
    'PATCH',
    `${V2}/st/status`,
    { status: { observed: '8cm' } },
    { 'content-type': 'application/merge-patch+json' },
  );
  assert.equal(patched.status, 200, patched.text);
  const v1 = (await request(s.url, 'GET', `${V1}/st`)).json;
  assert.deepEqual([v1.status, v1.spec], [{ observedCm: 8 }, { sizeCm: 3, replicas: 2 }]);
});

test("the scale subresource in v2 follows v2's replicas path on the converted object", async () => {
  await create('sc', 1);
  const scale = await request(s.url, 'GET', `${V2}/sc/scale`);
  assert.equal(scale.status, 200, scale.text);
  assert.deepEqual([scale.json.kind, scale.json.spec], ['Scale', { replicas: 2 }]);
  const put = await request(s.url, 'PUT', `${V2}/sc/scale`, { ...scale.json, spec: { replicas: 4 } });
  assert.equal(put.status, 200, put.text);
  assert.deepEqual(put.json.spec, { replicas: 4 });
  assert.equal((await request(s.url, 'GET', `${V1}/sc`)).json.spec.replicas, 4);
  const patched = await request(
    s.url,
    'PATCH',
    `${V2}/sc/scale?fieldManager=scaler`,
    { spec: { replicas: 6 } },
    { 'content-type': 'application/merge-patch+json' },
  );
  assert.equal(patched.status, 200, patched.text);
  const after = (await request(s.url, 'GET', `${V2}/sc`)).json;
  assert.equal(after.spec.count, 6);
  // ownership of a scale write: v2's replicas path, under the scale subresource
  const scaler = after.metadata.managedFields.find((m: any) => m.manager === 'scaler');
  assert.deepEqual(
    [scaler.apiVersion, scaler.subresource, scaler.fieldsV1],
    [`${GROUP}/v2`, 'scale', { 'f:spec': { 'f:count': {} } }],
  );
});

test("a Table in v2 prints v2's columns from the converted objects", async () => {
  await create('tb', 11);
  const t2 = await request(s.url, 'GET', `${V2}/tb`, undefined, TABLE);
  assert.equal(t2.status, 200, t2.text);
  assert.deepEqual(
    [t2.json.kind, t2.json.columnDefinitions.map((c: any) => c.name), t2.json.rows[0].cells.slice(0, 2)],
    ['Table', ['Name', 'Size'], ['tb', '11cm']],
  );
  const list = await request(s.url, 'GET', V2, undefined, TABLE);
  assert.deepEqual(list.json.rows.find((r: any) => r.cells[0] === 'tb').cells, ['tb', '11cm']);
  const t1 = await request(s.url, 'GET', `${V1}/tb`, undefined, TABLE);
  assert.deepEqual(
    [t1.json.columnDefinitions.map((c: any) => c.name), t1.json.rows[0].cells],
    [
      ['Name', 'Cm'],
      ['tb', 11],
    ],
  );
});

test('delete and deletecollection in v2 honour their options and answer in v2', async () => {
  await create('dr', 5);
  const dry = await request(s.url, 'DELETE', `${V2}/dr?dryRun=All`);
  assert.equal(dry.status, 200, dry.text);
  // a custom resource's delete answers with a Success Status (the store does not return the object)
  assert.deepEqual([dry.json.kind, dry.json.status, dry.json.details?.name], ['Status', 'Success', 'dr']);
  assert.equal((await request(s.url, 'GET', `${V1}/dr`)).status, 200, 'a dry run deletes nothing');
  const res = await request(s.url, 'DELETE', `${V2}?labelSelector=gone%3Dyes`);
  assert.equal(res.status, 200, res.text);
  assert.equal(res.json.apiVersion, `${GROUP}/v2`);
  const labelled = await request(s.url, 'POST', V1, {
    apiVersion: `${GROUP}/v1`,
    kind: 'Jar',
    metadata: { name: 'dc', labels: { gone: 'yes' } },
    spec: { sizeCm: 8, replicas: 1 },
  });
  assert.equal(labelled.status, 201, labelled.text);
  const all = await request(s.url, 'DELETE', `${V2}?labelSelector=gone%3Dyes`);
  assert.equal(all.status, 200, all.text);
  assert.deepEqual(
    all.json.items.map((i: any) => [i.metadata.name, i.apiVersion, i.spec.size]),
    [['dc', `${GROUP}/v2`, '8cm']],
  );
  assert.equal((await request(s.url, 'GET', `${V1}/dc`)).status, 404);
});

test("a Table watch in v2 (kubectl get -w) prints v2's columns", async () => {
  await create('tw', 13);
  // the server ends the stream after timeoutSeconds: the whole body is read once
  const res = await fetch(`${s.url}${V2}?watch=1&resourceVersion=0&timeoutSeconds=1`, { headers: TABLE });
  assert.equal(res.status, 200);
  const events = (await res.text())
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l));
  const first = events[0];
  assert.deepEqual(
    [first.object.kind, first.object.columnDefinitions.map((c: any) => c.name)],
    ['Table', ['Name', 'Size']],
  );
  const row = events.flatMap((e: any) => e.object.rows).find((r: any) => r.cells[0] === 'tw');
  assert.deepEqual(row.cells, ['tw', '13cm']);
  assert.ok(
    events.slice(1).every((e: any) => e.object.columnDefinitions === null),
    'only the first event carries the columns',
  );
});
