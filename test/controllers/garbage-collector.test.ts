import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, request, type TestServer } from '../helpers/server.js';

let s: TestServer;
before(async () => {
  s = await startServer();
});
after(async () => {
  await s.stop();
  s.cleanup();
});

const CM = (ns: string) => `/api/v1/namespaces/${ns}/configmaps`;
const SEC = (ns: string) => `/api/v1/namespaces/${ns}/secrets`;

async function until(fn: () => Promise<boolean>, what: string, tries = 300): Promise<void> {
  for (let i = 0; i < tries; i++) {
    if (await fn()) return;
    await new Promise((r) => setTimeout(r, 20));
  }
  assert.fail(`timed out waiting for ${what}`);
}
const exists = async (path: string) => (await request(s.url, 'GET', path)).status === 200;

/** A -> B (secret, blocking) -> C: a three-level owner chain in namespace ns. */
async function chain(ns: string) {
  await request(s.url, 'POST', '/api/v1/namespaces', { metadata: { name: ns } });
  const a = (await request(s.url, 'POST', CM(ns), { metadata: { name: 'a' } })).json;
  const ref = (o: any, kind: string) => ({
    apiVersion: 'v1',
    kind,
    name: o.metadata.name,
    uid: o.metadata.uid,
    blockOwnerDeletion: true,
  });
  const b = (await request(s.url, 'POST', SEC(ns), { metadata: { name: 'b', ownerReferences: [ref(a, 'ConfigMap')] } }))
    .json;
  const c = (await request(s.url, 'POST', CM(ns), { metadata: { name: 'c', ownerReferences: [ref(b, 'Secret')] } }))
    .json;
  assert.ok(a.metadata.uid && b.metadata.uid && c.metadata.uid);
  return { a, b, c };
}

test('background (default): deleting the owner deletes the whole chain; the reply is a Success Status', async () => {
  await chain('gc-bg');
  const d = await request(s.url, 'DELETE', `${CM('gc-bg')}/a`);
  assert.equal(d.status, 200);
  assert.equal(d.json.kind, 'Status');
  assert.equal(d.json.status, 'Success');
  assert.equal(d.json.details.name, 'a');
  await until(async () => !(await exists(`${SEC('gc-bg')}/b`)), 'b deleted');
  await until(async () => !(await exists(`${CM('gc-bg')}/c`)), 'c deleted');
});

test('orphan: the owner goes, dependents stay without the reference', async () => {
  const { b } = await chain('gc-or');
  const d = await request(s.url, 'DELETE', `${CM('gc-or')}/a`, { propagationPolicy: 'Orphan' });
  assert.equal(d.status, 200);
  assert.ok(d.json.metadata.finalizers.includes('orphan'), 'pending with the orphan finalizer');
  await until(async () => !(await exists(`${CM('gc-or')}/a`)), 'a gone');
  const got = (await request(s.url, 'GET', `${SEC('gc-or')}/b`)).json;
  assert.equal(got.metadata.uid, b.metadata.uid);
  assert.equal(got.metadata.ownerReferences, undefined);
  const c = (await request(s.url, 'GET', `${CM('gc-or')}/c`)).json;
  assert.equal(c.metadata.ownerReferences[0].uid, b.metadata.uid);
});

test('foreground: the owner stays until blocking dependents are gone, bottom up', async () => {
  await chain('gc-fg');
  const d = await request(s.url, 'DELETE', `${CM('gc-fg')}/a?propagationPolicy=Foreground`);
  assert.equal(d.status, 200);
  assert.ok(d.json.metadata.deletionTimestamp);
  assert.ok(d.json.metadata.finalizers.includes('foregroundDeletion'));
  await until(async () => !(await exists(`${CM('gc-fg')}/c`)), 'c deleted');
  await until(async () => !(await exists(`${SEC('gc-fg')}/b`)), 'b deleted');
  await until(async () => !(await exists(`${CM('gc-fg')}/a`)), 'a deleted last');
});

test('orphanDependents=true is Orphan; bad options are 422; preconditions are 409', async () => {
  await chain('gc-opt');
  const both = await request(s.url, 'DELETE', `${CM('gc-opt')}/a`, {
    propagationPolicy: 'Orphan',
    orphanDependents: true,
  });
  assert.equal(both.status, 422);
  const bad = await request(s.url, 'DELETE', `${CM('gc-opt')}/a?propagationPolicy=Sideways`);
  assert.equal(bad.status, 422);
  assert.equal(bad.json.reason, 'Invalid');
  const pre = await request(s.url, 'DELETE', `${CM('gc-opt')}/a`, { preconditions: { uid: 'not-it' } });
  assert.equal(pre.status, 409);
  const o = await request(s.url, 'DELETE', `${CM('gc-opt')}/a?orphanDependents=true`);
  assert.ok(o.json.metadata.finalizers.includes('orphan'));
  await until(async () => !(await exists(`${CM('gc-opt')}/a`)), 'a gone');
  assert.ok(await exists(`${SEC('gc-opt')}/b`));
});

test('pods bound to a node wait for their grace period; unbound pods go at once and are returned', async () => {
  const pod = (name: string, nodeName?: string) => ({
    metadata: { name },
    spec: { containers: [{ name: 'c', image: 'i' }], ...(nodeName ? { nodeName } : {}) },
  });
  await request(s.url, 'POST', '/api/v1/namespaces/default/pods', pod('unbound'));
  const u = await request(s.url, 'DELETE', '/api/v1/namespaces/default/pods/unbound');
  assert.equal(u.json.kind, 'Pod');
  assert.equal((await request(s.url, 'GET', '/api/v1/namespaces/default/pods/unbound')).status, 404);
  await request(s.url, 'POST', '/api/v1/namespaces/default/pods', pod('bound', 'n1'));
  const b = await request(s.url, 'DELETE', '/api/v1/namespaces/default/pods/bound');
  assert.equal(b.json.metadata.deletionGracePeriodSeconds, 30);
  assert.equal((await request(s.url, 'GET', '/api/v1/namespaces/default/pods/bound')).status, 200);
  const now = await request(s.url, 'DELETE', '/api/v1/namespaces/default/pods/bound?gracePeriodSeconds=0');
  assert.equal(now.status, 200);
  assert.equal((await request(s.url, 'GET', '/api/v1/namespaces/default/pods/bound')).status, 404);
});

test('--controllers=*,-garbagecollector: a dangling owner reference is left alone', async () => {
  const off = await startServer(['--controllers', '*,-garbagecollector']);
  try {
    const dangling = {
      metadata: {
        name: 'orphaned',
        ownerReferences: [
          { apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'gone', uid: '6c1f4b9e-2a7d-4c55-9a3e-0b8f2d1e7c40' },
        ],
      },
    };
    await request(s.url, 'POST', '/api/v1/namespaces', { metadata: { name: 'gc-dangling' } });
    assert.equal((await request(off.url, 'POST', CM('default'), dangling)).status, 201);
    assert.equal((await request(s.url, 'POST', CM('gc-dangling'), dangling)).status, 201);
    // the collecting server removes its copy; by then the other would have too
    await until(async () => !(await exists(`${CM('gc-dangling')}/orphaned`)), 'dangling dependent collected');
    assert.equal((await request(off.url, 'GET', `${CM('default')}/orphaned`)).status, 200);
  } finally {
    await off.stop();
    off.cleanup();
  }
});

const MERGE = { 'content-type': 'application/merge-patch+json' };
const ownerRef = (o: any) => ({ apiVersion: 'v1', kind: 'ConfigMap', name: o.metadata.name, uid: o.metadata.uid });

test('an object created without ownerReferences and given one later is collected with its owner', async () => {
  const ns = 'gc-later';
  await request(s.url, 'POST', '/api/v1/namespaces', { metadata: { name: ns } });
  const owner = (await request(s.url, 'POST', CM(ns), { metadata: { name: 'owner' } })).json;
  assert.equal((await request(s.url, 'POST', CM(ns), { metadata: { name: 'late' } })).status, 201);
  const p = await request(
    s.url,
    'PATCH',
    `${CM(ns)}/late`,
    { metadata: { ownerReferences: [ownerRef(owner)] } },
    MERGE,
  );
  assert.equal(p.status, 200);
  assert.equal((await request(s.url, 'DELETE', `${CM(ns)}/owner`)).status, 200);
  await until(async () => !(await exists(`${CM(ns)}/late`)), 'late dependent collected');
});

test('a dependent that drops its ownerReferences stays when its former owner goes', async () => {
  const ns = 'gc-dropped';
  await request(s.url, 'POST', '/api/v1/namespaces', { metadata: { name: ns } });
  const owner = (await request(s.url, 'POST', CM(ns), { metadata: { name: 'owner' } })).json;
  const refs = { ownerReferences: [ownerRef(owner)] };
  assert.equal((await request(s.url, 'POST', CM(ns), { metadata: { name: 'kept', ...refs } })).status, 201);
  assert.equal((await request(s.url, 'POST', CM(ns), { metadata: { name: 'witness', ...refs } })).status, 201);
  const p = await request(s.url, 'PATCH', `${CM(ns)}/kept`, { metadata: { ownerReferences: null } }, MERGE);
  assert.equal(p.status, 200);
  assert.equal(p.json.metadata.ownerReferences, undefined);
  assert.equal((await request(s.url, 'DELETE', `${CM(ns)}/owner`)).status, 200);
  // the witness still referencing the owner is collected in the same pass that would take `kept`
  await until(async () => !(await exists(`${CM(ns)}/witness`)), 'witness collected');
  const kept = await request(s.url, 'GET', `${CM(ns)}/kept`);
  assert.equal(kept.status, 200);
  assert.equal(kept.json.metadata.ownerReferences, undefined);
});
