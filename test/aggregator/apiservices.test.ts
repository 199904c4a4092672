/**
 * The aggregation layer end to end: an extension API server on loopback (HTTPS, its serving
 * certificate for `api.wardle.svc`, requiring the proxy client certificate) registered through
 * an APIService whose service resolves through Endpoints; the Available condition, discovery
 * (legacy and aggregated), the proxied requests with the authenticating-proxy headers, the 406
 * for Protobuf, kubectl v1.32 (`--api-domain k8s.io`), local APIServices, and the health
 * tracking when the extension server goes away.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startServer, request, type TestServer } from '../helpers/server.js';
import type { Pki } from '../auth/helpers.js';
import { extensionServerPki } from './helpers.js';
import { kubectlRunner } from '../helpers/kubectl.js';

const GROUP = 'wardle.example.com';
const GV = `/apis/${GROUP}/v1alpha1`;
const AR = '/apis/apiregistration.k8s.io/v1/apiservices';
let s: TestServer;
let pki: Pki;
let ext: Server;
let extPort: number;
let home: string;
const seen: { path: string; headers: Record<string, unknown>; clientCN: string | undefined }[] = [];
const { ok } = kubectlRunner(
  () => s.url,
  () => home,
  30_000,
);

const flunder = (name: string) => ({
  apiVersion: `${GROUP}/v1alpha1`,
  kind: 'Flunder',
  metadata: { name, namespace: 'default', creationTimestamp: '2026-01-01T00:00:00Z' },
});
const RESOURCES = {
  kind: 'APIResourceList',
  apiVersion: 'v1',
  groupVersion: `${GROUP}/v1alpha1`,
  resources: [
    {
      name: 'flunders',
      singularName: 'flunder',
      namespaced: true,
      kind: 'Flunder',
      verbs: ['get', 'list'],
      shortNames: ['fl'],
    },
  ],
};

function answer(path: string, accept: string): { code: number; body: unknown } {
  if (path === GV) return { code: 200, body: RESOURCES };
  if (path === `${GV}/namespaces/default/flunders`) {
    if (accept.includes('as=Table')) {
      return {
        code: 200,
        body: {
          kind: 'Table',
          apiVersion: 'meta.k8s.io/v1',
          metadata: {},
          columnDefinitions: [
            { name: 'Name', type: 'string', format: 'name' },
            { name: 'Color', type: 'string' },
          ],
          rows: [
            {
              cells: ['alpha', 'red'],
              object: { kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: { name: 'alpha' } },
            },
          ],
        },
      };
    }
    return {
      code: 200,
      body: { kind: 'FlunderList', apiVersion: `${GROUP}/v1alpha1`, metadata: {}, items: [flunder('alpha')] },
    };
  }
  if (path === `${GV}/namespaces/default/flunders/alpha`) return { code: 200, body: flunder('alpha') };
  return {
    code: 404,
    body: {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      reason: 'NotFound',
      code: 404,
      message: 'not here',
    },
  };
}

before(async () => {
  pki = extensionServerPki();
  ext = createServer(
    {
      cert: pki.read('ext.crt'),
      key: pki.read('ext.key'),
      ca: pki.read('proxy-ca.crt'),
      requestCert: true,
      rejectUnauthorized: true,
    },
    (req, res) => {
      const path = (req.url ?? '').split('?')[0]!;
      const cert = (req.socket as TLSSocket).getPeerCertificate();
      seen.push({ path, headers: { ...req.headers }, clientCN: cert?.subject?.CN as string | undefined });
      const a = answer(path, String(req.headers.accept ?? ''));
      res.writeHead(a.code, { 'content-type': 'application/json' });
      res.end(JSON.stringify(a.body));
    },
  );
  await new Promise<void>((done) => ext.listen(0, '127.0.0.1', done));
  extPort = (ext.address() as AddressInfo).port;
  home = mkdtempSync(join(tmpdir(), 'plat-aggregator-'));
  s = await startServer([
    '--api-domain',
    'k8s.io',
    '--proxy-client-cert-file',
    pki.path('proxy-client.crt'),
    '--proxy-client-key-file',
    pki.path('proxy-client.key'),
  ]);
  assert.equal((await request(s.url, 'POST', '/api/v1/namespaces', { metadata: { name: 'wardle' } })).status, 201);
  assert.equal(
    (
      await request(s.url, 'POST', '/api/v1/namespaces/wardle/services', {
        metadata: { name: 'api' },
        spec: { ports: [{ port: 443, targetPort: extPort }] },
      })
    ).status,
    201,
  );
  assert.equal(
    (
      await request(s.url, 'POST', '/api/v1/namespaces/wardle/endpoints', {
        metadata: { name: 'api' },
        subsets: [{ addresses: [{ ip: '127.0.0.1' }], ports: [{ port: extPort }] }],
      })
    ).status,
    201,
  );
});

after(async () => {
  await s.stop();
  s.cleanup();
  ext.closeAllConnections();
  await new Promise<void>((done) => ext.close(() => done()));
  pki.cleanup();
  rmSync(home, { recursive: true, force: true });
});

async function condition(name: string, want: (c: any) => boolean, ms = 10_000): Promise<any> {
  const deadline = Date.now() + ms;
  let last: any;
  for (let i = 0; i < 1000 && Date.now() < deadline; i++) {
    const r = await request(s.url, 'GET', `${AR}/${name}`);
    last = r.json?.status?.conditions?.find((c: any) => c.type === 'Available');
    if (last && want(last)) return last;
    await new Promise((done) => setTimeout(done, 25));
  }
  throw new Error(`condition not reached: ${JSON.stringify(last)}`);
}

test('local APIServices exist for the built-in group-versions, always available', async () => {
  const apps = await request(s.url, 'GET', `${AR}/v1.apps`);
  assert.equal(apps.status, 200);
  assert.deepEqual(
    [apps.json.spec.group, apps.json.spec.version, apps.json.spec.groupPriorityMinimum, apps.json.spec.versionPriority],
    ['apps', 'v1', 17800, 15],
  );
  const c = await condition('v1.apps', () => true);
  assert.deepEqual([c.status, c.reason, c.message], ['True', 'Local', 'Local APIServices are always available']);
  assert.equal((await request(s.url, 'GET', `${AR}/v1.`)).json.spec.group, undefined, 'the core group');
});

/** Registers the extension server's APIService (the tests that use it make it: each runs alone too). */
const registerRemote = () =>
  request(s.url, 'POST', AR, {
    metadata: { name: `v1alpha1.${GROUP}` },
    spec: {
      group: GROUP,
      version: 'v1alpha1',
      service: { namespace: 'wardle', name: 'api' },
      caBundle: pki.read('ext-ca.crt').toString('base64'),
      groupPriorityMinimum: 1000,
      versionPriority: 15,
    },
  });

test('a remote APIService: Available through its service, discovery, proxied requests, kubectl', async () => {
  const created = await registerRemote();
  assert.equal(created.status, 201, created.text);
  const c = await condition(`v1alpha1.${GROUP}`, (x) => x.status === 'True');
  assert.deepEqual([c.reason, c.message], ['Passed', 'all checks passed']);

  const groups = await request(s.url, 'GET', '/apis');
  assert.ok(
    groups.json.groups.some((g: any) => g.name === GROUP && g.preferredVersion.groupVersion === `${GROUP}/v1alpha1`),
  );
  assert.equal((await request(s.url, 'GET', `/apis/${GROUP}`)).json.kind, 'APIGroup');
  const agg = await request(s.url, 'GET', '/apis', undefined, {
    accept: 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList',
  });
  const item = agg.json.items.find((i: any) => i.metadata.name === GROUP);
  assert.equal(item.versions[0].resources[0].resource, 'flunders');
  assert.equal(item.versions[0].freshness, 'Current');
  assert.equal(
    (await request(s.url, 'GET', GV)).json.groupVersion,
    `${GROUP}/v1alpha1`,
    'version discovery is proxied',
  );

  seen.length = 0;
  const got = await request(s.url, 'GET', `${GV}/namespaces/default/flunders/alpha`, undefined, {
    authorization: 'Bearer secret',
  });
  assert.equal(got.status, 200);
  assert.equal(got.json.metadata.name, 'alpha');
  const h = seen.at(-1)!;
  assert.equal(h.clientCN, 'front-proxy-client', 'the proxy client certificate');
  assert.equal(h.headers['x-remote-user'], 'system:unsecured');
  assert.match(String(h.headers['x-remote-group']), /system:masters/);
  assert.equal(h.headers.authorization, undefined, 'credentials are not forwarded');
  const missing = await request(s.url, 'GET', `${GV}/namespaces/default/flunders/nope`);
  assert.equal(missing.status, 404, "the extension server's answer passes through");

  const pb = await request(s.url, 'GET', `${GV}/namespaces/default/flunders`, undefined, {
    accept: 'application/vnd.kubernetes.protobuf',
  });
  assert.equal(pb.status, 406);
  assert.equal(pb.json.reason, 'NotAcceptable');
  const mixed = await request(s.url, 'GET', `${GV}/namespaces/default/flunders`, undefined, {
    accept: 'application/vnd.kubernetes.protobuf, application/json',
  });
  assert.equal(mixed.status, 200);
  assert.equal(seen.at(-1)!.headers.accept, 'application/json');

  const out = await ok('get', 'flunders', '-n', 'default');
  assert.match(out, /NAME\s+COLOR/);
  assert.match(out, /alpha\s+red/);
  assert.match(
    await ok('api-resources', `--api-group=${GROUP}`),
    /flunders\s+fl\s+wardle\.example\.com\/v1alpha1\s+true\s+Flunder/,
  );
});

test('health: the extension server going away makes the APIService unavailable and requests 503', async () => {
  const registered = await registerRemote();
  assert.ok([201, 409].includes(registered.status), registered.text); // 409: the test before registered it
  await condition(`v1alpha1.${GROUP}`, (x) => x.status === 'True');
  // the endpoints now point at a closed port
  const ep = await request(s.url, 'GET', '/api/v1/namespaces/wardle/endpoints/api');
  ep.json.subsets[0].ports[0].port = 1;
  assert.equal((await request(s.url, 'PUT', '/api/v1/namespaces/wardle/endpoints/api', ep.json)).status, 200);
  const c = await condition(`v1alpha1.${GROUP}`, (x) => x.status === 'False');
  assert.equal(c.reason, 'FailedDiscoveryCheck');
  assert.match(
    c.message,
    /^failing or missing response from https:\/\/127\.0\.0\.1:1\/apis\/wardle\.example\.com\/v1alpha1: /,
  );
  const r = await request(s.url, 'GET', `${GV}/namespaces/default/flunders`);
  assert.equal(r.status, 503);
  assert.equal(r.json.reason, 'ServiceUnavailable');
  assert.equal((await request(s.url, 'DELETE', '/api/v1/namespaces/wardle/endpoints/api')).status, 200);
  const gone = await condition(`v1alpha1.${GROUP}`, (x) => x.reason === 'MissingEndpoints');
  assert.equal(gone.message, 'endpoints for service/api in "wardle" have no addresses with port name ""');
});
