/**
 * Defaults on read: a default added to a CRD after objects exist shows on those objects when
 * read (get, list, watch), without a write (same resourceVersion), as upstream defaults every
 * stored custom resource it decodes; a read through another version gets that version's
 * defaults. After a restart the stored objects are defaulted as they are loaded.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startServer, request, type TestServer } from '../../helpers/server.js';
import { openWatch } from '../../helpers/watch.js';
import { until } from '../../helpers/poll.js';
import { waitEstablished } from './fixtures.js';

const GROUP = 'defaults.example.com';
const CRDS = '/apis/apiextensions.plat.io/v1/customresourcedefinitions';
const NAME = `lamps.${GROUP}`;
const V1 = `/apis/${GROUP}/v1/namespaces/default/lamps`;
const V2 = `/apis/${GROUP}/v2/namespaces/default/lamps`;
let s: TestServer;
let dir: string;

const schema = (color: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
  openAPIV3Schema: {
    type: 'object',
    properties: { spec: { type: 'object', properties: { watts: { type: 'integer' }, color, ...extra } } },
  },
});

function crd(v1Color: Record<string, unknown>, v2Extra: Record<string, unknown> = {}): any {
  return {
    apiVersion: 'apiextensions.plat.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: NAME },
    spec: {
      group: GROUP,
      scope: 'Namespaced',
      names: { plural: 'lamps', kind: 'Lamp' },
      versions: [
        { name: 'v1', served: true, storage: true, schema: schema(v1Color) },
        { name: 'v2', served: true, storage: false, schema: schema({ type: 'string' }, v2Extra) },
      ],
    },
  };
}

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'read-defaults-'));
  s = await startServer([], dir);
  assert.equal((await request(s.url, 'POST', CRDS, crd({ type: 'string' }))).status, 201);
  await waitEstablished(s.url, NAME);
});
after(async () => {
  await s.stop();
  s.cleanup();
  rmSync(dir, { recursive: true, force: true });
});

/**
 * Stores a Lamp of 40 W while the CRD has no defaults (each test makes its own, so it runs
 * alone), labelled `case=<name>` for a list of this test's objects only.
 */
async function storeUndefaulted(name: string): Promise<void> {
  await changeCRD({ type: 'string' });
  const lamp = {
    apiVersion: `${GROUP}/v1`,
    kind: 'Lamp',
    metadata: { name, labels: { case: name } },
    spec: { watts: 40 },
  };
  // the CRD's new schema serves once a dry run no longer defaults the color
  await until(async () => {
    const r = await request(s.url, 'POST', `${V1}?dryRun=All`, lamp);
    return r.status === 201 && r.json.spec.color === undefined ? true : undefined;
  }, 'the CRD without defaults');
  const made = await request(s.url, 'POST', V1, lamp);
  assert.equal(made.status, 201, made.text);
  assert.deepEqual(made.json.spec, { watts: 40 });
}

/** Replaces the CRD's versions (a fresh read for the resourceVersion). */
async function changeCRD(v1Color: Record<string, unknown>, v2Extra: Record<string, unknown> = {}): Promise<void> {
  const cur = (await request(s.url, 'GET', `${CRDS}/${NAME}`)).json;
  const res = await request(s.url, 'PUT', `${CRDS}/${NAME}`, {
    ...cur,
    spec: { ...cur.spec, versions: crd(v1Color, v2Extra).spec.versions },
  });
  assert.equal(res.status, 200, res.text);
}

test('a default added to the CRD shows on objects stored before it, in get, list and watch, without a write', async () => {
  const made = await request(s.url, 'POST', V1, {
    apiVersion: `${GROUP}/v1`,
    kind: 'Lamp',
    metadata: { name: 'old' },
    spec: { watts: 40 },
  });
  assert.equal(made.status, 201, made.text);
  const rv = made.json.metadata.resourceVersion;
  await changeCRD({ type: 'string', default: 'amber' });
  const got = await until(async () => {
    const r = await request(s.url, 'GET', `${V1}/old`);
    return r.json?.spec?.color !== undefined ? r.json : undefined;
  }, 'the default on read');
  assert.deepEqual([got.spec, got.metadata.resourceVersion], [{ watts: 40, color: 'amber' }, rv]);
  const list = await request(s.url, 'GET', V1);
  assert.deepEqual(
    list.json.items.map((i: any) => i.spec),
    [{ watts: 40, color: 'amber' }],
  );
  const w = await openWatch(s.url, `${V1}?watch=1&resourceVersion=0`);
  try {
    const [ev] = await w.waitEvents(1);
    assert.deepEqual([ev!.type, ev!.object.spec], ['ADDED', { watts: 40, color: 'amber' }]);
  } finally {
    w.close();
  }
});

test("a read through another version gets that version's defaults", async () => {
  await storeUndefaulted('versions');
  await changeCRD({ type: 'string', default: 'amber' }, { shade: { type: 'string', default: 'round' } });
  const got = await until(async () => {
    const r = await request(s.url, 'GET', `${V2}/versions`);
    return r.json?.spec?.shade !== undefined ? r.json : undefined;
  }, 'the v2 default on read');
  assert.deepEqual([got.apiVersion, got.spec], [`${GROUP}/v2`, { watts: 40, color: 'amber', shade: 'round' }]);
  const list = await request(s.url, 'GET', `${V2}?labelSelector=case%3Dversions`);
  assert.deepEqual(
    list.json.items.map((i: any) => i.spec),
    [{ watts: 40, color: 'amber', shade: 'round' }],
  );
  // the storage version's reads come from the caches the CRD change re-defaults: the shard's, and
  // the front's copy, which the change reaches after the converter (a read through v2) does
  const v1 = await until(async () => {
    const r = await request(s.url, 'GET', `${V1}/versions`);
    return r.json?.spec?.color !== undefined ? r.json : undefined;
  }, 'the v1 default on read');
  assert.deepEqual(v1.spec, { watts: 40, color: 'amber' });
  // live events of a v2 watch are converted on the front thread: v2's defaults there too
  const w = await openWatch(s.url, `${V2}?watch=1&resourceVersion=${list.json.metadata.resourceVersion}`);
  try {
    const made = await request(s.url, 'POST', V1, {
      apiVersion: `${GROUP}/v1`,
      kind: 'Lamp',
      metadata: { name: 'new' },
      spec: { watts: 60 },
    });
    assert.equal(made.status, 201, made.text);
    const [ev] = await w.waitEvents(1);
    assert.deepEqual(
      [ev!.type, ev!.object.apiVersion, ev!.object.spec],
      ['ADDED', `${GROUP}/v2`, { watts: 60, color: 'amber', shade: 'round' }],
    );
  } finally {
    w.close();
  }
  await request(s.url, 'DELETE', `${V1}/new`);
});

test('after a restart, stored objects are defaulted as they are loaded', async () => {
  await storeUndefaulted('restart');
  await changeCRD({ type: 'string', default: 'amber' });
  await s.stop();
  s = await startServer([], dir);
  const got = await until(async () => {
    const r = await request(s.url, 'GET', `${V1}/restart`);
    return r.status === 200 ? r.json : undefined;
  }, 'the object after the restart');
  assert.deepEqual(got.spec, { watts: 40, color: 'amber' });
});
