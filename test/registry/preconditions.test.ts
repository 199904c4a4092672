/**
 * Optimistic concurrency on every write verb that carries a version: a PATCH of each patch type
 * whose body names a stale metadata.resourceVersion, and a DELETE with stale preconditions, are
 * 409 Conflict with upstream's message (rest.BeforeDelete for DELETE) and leave the object as it was.
 */
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

const CM = '/api/v1/namespaces/default/configmaps';
const DEP = '/apis/apps/v1/namespaces/default/deployments';
const modified = (name: string) =>
  `Operation cannot be fulfilled on configmaps "${name}": the object has been modified; please apply your changes to the latest version and try again`;

/** Creates a ConfigMap and updates it once: returns its stale (first) and current versions. */
async function twoVersions(name: string): Promise<{ stale: string; current: any }> {
  const c = await request(s.url, 'POST', CM, { metadata: { name }, data: { a: '1' } });
  assert.equal(c.status, 201, c.text);
  const u = await request(s.url, 'PUT', `${CM}/${name}`, {
    metadata: { name, resourceVersion: c.json.metadata.resourceVersion },
    data: { a: '2' },
  });
  assert.equal(u.status, 200, u.text);
  assert.notEqual(u.json.metadata.resourceVersion, c.json.metadata.resourceVersion);
  return { stale: c.json.metadata.resourceVersion, current: u.json };
}

async function assertUnchanged(path: string, current: any): Promise<void> {
  const g = await request(s.url, 'GET', path);
  assert.equal(g.status, 200, g.text);
  assert.equal(g.json.metadata.resourceVersion, current.metadata.resourceVersion);
  assert.deepEqual(g.json.data, current.data);
}

const PATCHES: [string, string, (rv: string, name: string) => unknown, string][] = [
  ['merge', 'application/merge-patch+json', (rv) => ({ metadata: { resourceVersion: rv }, data: { a: 'merge' } }), ''],
  [
    'json',
    'application/json-patch+json',
    (rv) => [
      { op: 'replace', path: '/metadata/resourceVersion', value: rv },
      { op: 'replace', path: '/data/a', value: 'json' },
    ],
    '',
  ],
  [
    'strategic',
    'application/strategic-merge-patch+json',
    (rv) => ({ metadata: { resourceVersion: rv }, data: { a: 'smp' } }),
    '',
  ],
  // force: the manager takes data.a from the PUT's manager, so only the version can refuse it
  [
    'apply',
    'application/apply-patch+yaml',
    (rv, name) => ({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name, resourceVersion: rv },
      data: { a: 'apply' },
    }),
    '?fieldManager=applier&force=true',
  ],
];

for (const [type, contentType, body, query] of PATCHES) {
  test(`a ${type} patch with a stale resourceVersion is 409 Conflict and changes nothing; the current one applies`, async () => {
    const name = `stale-${type}`;
    const { stale, current } = await twoVersions(name);
    const r = await request(s.url, 'PATCH', `${CM}/${name}${query}`, body(stale, name), {
      'content-type': contentType,
    });
    assert.equal(r.status, 409, r.text);
    assert.deepEqual(r.json, {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: modified(name),
      reason: 'Conflict',
      details: { name, kind: 'configmaps' },
      code: 409,
    });
    await assertUnchanged(`${CM}/${name}`, current);
    // the same patch with the current version is accepted: the 409 came from the version alone
    const ok = await request(s.url, 'PATCH', `${CM}/${name}${query}`, body(current.metadata.resourceVersion, name), {
      'content-type': contentType,
    });
    assert.equal(ok.status, 200, ok.text);
    assert.notEqual(ok.json.data.a, '2');
  });
}

test('DELETE with a stale preconditions.resourceVersion is 409 with upstream BeforeDelete message; the object stays', async () => {
  const { stale, current } = await twoVersions('stale-del-rv');
  const r = await request(s.url, 'DELETE', `${CM}/stale-del-rv`, { preconditions: { resourceVersion: stale } });
  assert.equal(r.status, 409, r.text);
  assert.deepEqual(r.json, {
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message: `Operation cannot be fulfilled on ConfigMap "stale-del-rv": the ResourceVersion in the precondition (${stale}) does not match the ResourceVersion in record (${current.metadata.resourceVersion}). The object might have been modified`,
    reason: 'Conflict',
    details: { name: 'stale-del-rv', kind: 'ConfigMap' },
    code: 409,
  });
  await assertUnchanged(`${CM}/stale-del-rv`, current);
  const ok = await request(s.url, 'DELETE', `${CM}/stale-del-rv`, {
    preconditions: { resourceVersion: current.metadata.resourceVersion, uid: current.metadata.uid },
  });
  assert.equal(ok.status, 200, ok.text);
  assert.equal((await request(s.url, 'GET', `${CM}/stale-del-rv`)).status, 404);
});

test('DELETE with another uid in preconditions is 409 naming both uids; the object stays', async () => {
  const { current } = await twoVersions('stale-del-uid');
  const r = await request(s.url, 'DELETE', `${CM}/stale-del-uid`, { preconditions: { uid: 'not-the-uid' } });
  assert.equal(r.status, 409, r.text);
  assert.equal(r.json.reason, 'Conflict');
  assert.equal(
    r.json.message,
    `Operation cannot be fulfilled on ConfigMap "stale-del-uid": the UID in the precondition (not-the-uid) does not match the UID in record (${current.metadata.uid}). The object might have been deleted and then recreated`,
  );
  assert.deepEqual(r.json.details, { name: 'stale-del-uid', kind: 'ConfigMap' });
  await assertUnchanged(`${CM}/stale-del-uid`, current);
});

test('a stale DELETE precondition on a grouped kind names Kind.group, as upstream', async () => {
  const c = await request(s.url, 'POST', DEP, {
    metadata: { name: 'stale-dep' },
    spec: {
      selector: { matchLabels: { a: 'b' } },
      template: { metadata: { labels: { a: 'b' } }, spec: { containers: [{ name: 'c', image: 'i' }] } },
    },
  });
  assert.equal(c.status, 201, c.text);
  const rv = c.json.metadata.resourceVersion;
  const r = await request(s.url, 'DELETE', `${DEP}/stale-dep`, { preconditions: { resourceVersion: '1' } });
  assert.equal(r.status, 409, r.text);
  assert.equal(
    r.json.message,
    `Operation cannot be fulfilled on Deployment.apps "stale-dep": the ResourceVersion in the precondition (1) does not match the ResourceVersion in record (${rv}). The object might have been modified`,
  );
  assert.deepEqual(r.json.details, { name: 'stale-dep', group: 'apps', kind: 'Deployment' });
  assert.equal((await request(s.url, 'GET', `${DEP}/stale-dep`)).status, 200);
});
