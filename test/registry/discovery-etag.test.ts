/**
 * Aggregated discovery's cache validators (upstream ServeHTTPWithETag): an ETag that follows the
 * served resources, 304 for a matching If-None-Match, and a new ETag (and the new scope) once a
 * CRD is deleted and re-created cluster-scoped, as kubectl's HTTP cache relies on when it
 * revalidates /apis (upstream run_crd_deletion_recreation_tests does exactly this).
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, request, type TestServer } from '../helpers/server.js';
import { until } from '../helpers/poll.js';
import { waitEstablished } from './crd/fixtures.js';

const AGGREGATED = 'application/json;g=apidiscovery.plat.io;v=v2;as=APIGroupDiscoveryList';
const CRDS = '/apis/apiextensions.plat.io/v1/customresourcedefinitions';
const NAME = 'examples.test.com';

let s: TestServer;
before(async () => {
  s = await startServer();
});
after(() => s.stop());

function exampleCRD(scope: 'Namespaced' | 'Cluster'): unknown {
  return {
    apiVersion: 'apiextensions.plat.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: NAME },
    spec: {
      group: 'test.com',
      scope,
      names: { plural: 'examples', singular: 'example', kind: 'Example' },
      versions: [
        {
          name: 'v1',
          served: true,
          storage: true,
          schema: { openAPIV3Schema: { type: 'object', 'x-plat-preserve-unknown-fields': true } },
        },
      ],
    },
  };
}

/** GET /apis as aggregated discovery, revalidating with etag when given. */
function apis(etag?: string) {
  return request(s.url, 'GET', '/apis', undefined, { accept: AGGREGATED, ...(etag ? { 'if-none-match': etag } : {}) });
}

function exampleScope(doc: any): string | undefined {
  const g = doc.items.find((i: any) => i.metadata.name === 'test.com');
  return g?.versions[0].resources.find((r: any) => r.resource === 'examples')?.scope;
}

test('aggregated discovery carries an ETag, answers 304 to it, and changes it when a CRD changes scope', async () => {
  const first = await apis();
  assert.equal(first.status, 200);
  const etag = first.headers.get('etag') ?? '';
  assert.match(etag, /^"[0-9A-F]{128}"$/, 'quoted upper-case hex SHA-512');
  assert.equal(first.headers.get('cache-control'), 'public');
  assert.match(first.headers.get('vary') ?? '', /Accept/);
  const again = await apis(etag);
  assert.equal(again.status, 304);
  assert.equal(again.text, '');
  assert.equal(again.headers.get('etag'), etag);
  // /api is its own document with its own validator
  const core = await request(s.url, 'GET', '/api', undefined, { accept: AGGREGATED });
  assert.match(core.headers.get('etag') ?? '', /^"[0-9A-F]{128}"$/);
  assert.notEqual(core.headers.get('etag'), etag);

  assert.equal((await request(s.url, 'POST', CRDS, exampleCRD('Namespaced'))).status, 201);
  await waitEstablished(s.url, NAME);
  const added = await apis(etag);
  assert.equal(added.status, 200, 'the old ETag no longer matches');
  const namespacedEtag = added.headers.get('etag') ?? '';
  assert.notEqual(namespacedEtag, etag);
  assert.equal(exampleScope(added.json), 'Namespaced');

  assert.equal((await request(s.url, 'DELETE', `${CRDS}/${NAME}`)).status, 200);
  await until(
    async () => ((await request(s.url, 'GET', `${CRDS}/${NAME}`)).status === 404 ? true : undefined),
    'the CRD to be gone',
  );
  assert.equal((await request(s.url, 'POST', CRDS, exampleCRD('Cluster'))).status, 201);
  await waitEstablished(s.url, NAME);
  const recreated = await apis(namespacedEtag);
  assert.equal(recreated.status, 200, 'a re-created CRD of another scope is a new document');
  assert.notEqual(recreated.headers.get('etag'), namespacedEtag);
  assert.equal(exampleScope(recreated.json), 'Cluster');
  const legacy = await request(s.url, 'GET', '/apis/test.com/v1');
  assert.equal(legacy.json.resources.find((r: any) => r.name === 'examples')?.namespaced, false);
});
