/**
 * NonStructuralSchema as upstream: a v1 write must leave a CRD structural, so only a CRD
 * persisted before that rule (here written into the data directory before the server starts)
 * can be non-structural. Such a CRD is served, carries NonStructuralSchema=True (Violations,
 * the findings as the message), may be updated without being made structural (upstream
 * requireStructuralSchema looks at the stored object), and loses the condition once fixed. A
 * new non-structural CRD is still a 422.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { open } from 'lmdb';
import { startServer, request, type TestServer } from '../helpers/server.js';
import { until } from '../helpers/poll.js';
import { shardOf } from '../../src/actors/routing.js';

const TYPE_KEY = 'apiextensions.plat.io/customresourcedefinitions';
const CRDS = '/apis/apiextensions.plat.io/v1/customresourcedefinitions';
const GROUP = 'legacy.example.com';
const NAME = `relics.${GROUP}`;
const VIOLATION =
  'spec.versions[0].schema.openAPIV3Schema.properties[spec].type: Required value: must not be empty for specified object fields';
let s: TestServer;
let dir: string;

/** spec has properties but no type: not structural */
const LEGACY_SCHEMA = {
  openAPIV3Schema: { type: 'object', properties: { spec: { properties: { size: { type: 'integer' } } } } },
};

function legacyCRD(name: string, plural: string, kind: string): any {
  return {
    apiVersion: 'apiextensions.plat.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: {
      name,
      uid: `00000000-0000-0000-0000-00000000000${plural.length % 10}`,
      resourceVersion: '1',
      generation: 1,
      creationTimestamp: '2020-01-01T00:00:00Z',
    },
    spec: {
      group: GROUP,
      scope: 'Namespaced',
      names: { plural, singular: kind.toLowerCase(), kind, listKind: `${kind}List` },
      versions: [{ name: 'v1', served: true, storage: true, schema: LEGACY_SCHEMA }],
      conversion: { strategy: 'None' },
    },
    status: { acceptedNames: { plural: '', kind: '' }, storedVersions: ['v1'] },
  };
}

const conditionOf = (crd: any, type: string) => (crd?.status?.conditions ?? []).find((c: any) => c.type === type);

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'crd-nonstructural-'));
  // a CRD persisted before v1 required structural schemas, written before the server starts
  const db = open<string, string>({
    path: join(dir, `shard-${shardOf(TYPE_KEY, 2)}-of-2`),
    encoding: 'string',
    compression: false,
  });
  db.putSync(`${TYPE_KEY}//${NAME}`, JSON.stringify(legacyCRD(NAME, 'relics', 'Relic')));
  await db.close();
  s = await startServer([], dir);
});
after(async () => {
  await s?.stop();
  rmSync(dir, { recursive: true, force: true });
});

test('a stored non-structural CRD is served with NonStructuralSchema=True naming the violations', async () => {
  const crd = await until(async () => {
    const r = await request(s.url, 'GET', `${CRDS}/${NAME}`);
    return conditionOf(r.json, 'Established')?.status === 'True' ? r.json : undefined;
  }, 'the legacy CRD established');
  const cond = conditionOf(crd, 'NonStructuralSchema');
  assert.deepEqual([cond?.status, cond?.reason, cond?.message], ['True', 'Violations', VIOLATION]);
  const made = await request(s.url, 'POST', `/apis/${GROUP}/v1/namespaces/default/relics`, {
    apiVersion: `${GROUP}/v1`,
    kind: 'Relic',
    metadata: { name: 'r1' },
    spec: { size: 3 },
  });
  assert.equal(made.status, 201, made.text);
});

test('it may be updated while it stays non-structural; a new non-structural CRD is refused', async () => {
  const cur = (await request(s.url, 'GET', `${CRDS}/${NAME}`)).json;
  const labelled = await request(s.url, 'PUT', `${CRDS}/${NAME}`, {
    ...cur,
    metadata: { ...cur.metadata, labels: { era: 'old' } },
  });
  assert.equal(labelled.status, 200, labelled.text);
  const fresh = legacyCRD(`fossils.${GROUP}`, 'fossils', 'Fossil');
  delete fresh.metadata.uid;
  delete fresh.metadata.resourceVersion;
  delete fresh.status;
  const refused = await request(s.url, 'POST', CRDS, fresh);
  assert.equal(refused.status, 422, refused.text);
  assert.deepEqual(
    refused.json.details.causes.map((c: any) => `${c.field}: ${c.message}`),
    [
      'spec.validation.openAPIV3Schema.properties[spec].type: Required value: must not be empty for specified object fields',
    ],
  );
});

test('once its schema is structural the condition goes', async () => {
  const cur = (await request(s.url, 'GET', `${CRDS}/${NAME}`)).json;
  const fixed = structuredClone(cur);
  fixed.spec.versions[0].schema.openAPIV3Schema.properties.spec.type = 'object';
  const res = await request(s.url, 'PUT', `${CRDS}/${NAME}`, fixed);
  assert.equal(res.status, 200, res.text);
  await until(async () => {
    const r = await request(s.url, 'GET', `${CRDS}/${NAME}`);
    return r.json.status.conditions.some((c: any) => c.type === 'Established') &&
      !conditionOf(r.json, 'NonStructuralSchema')
      ? true
      : undefined;
  }, 'NonStructuralSchema removed');
});
