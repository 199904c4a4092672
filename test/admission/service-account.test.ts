/**
 * Built-in admission: the ServiceAccount plugin (default account, token volume, refusal of an
 * unknown account, opt-outs), the default-account controller, NamespaceLifecycle, and the
 * plugin flags (upstream's default set, --disable-admission-plugins, unknown names).
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, request, type TestServer } from '../helpers/server.js';
import { parseArgs } from '../../src/server/options.js';
import { DEFAULT_ON_ADMISSION_PLUGINS } from '../../src/admission/options.js';
import { readFileSync } from 'node:fs';
import { startAuthServer } from '../auth/helpers.js';

let s: TestServer;
before(async () => {
  s = await startServer();
});
after(async () => {
  await s.stop();
  s.cleanup();
});

const pod = (name: string, spec: Record<string, unknown> = {}) => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name },
  spec: { containers: [{ name: 'c', image: 'busybox' }], initContainers: [{ name: 'i', image: 'busybox' }], ...spec },
});
const MOUNT = '/var/run/secrets/platform.io/serviceaccount';

async function until<T>(what: string, f: () => Promise<T | undefined>, ms = 5000): Promise<T> {
  const deadline = Date.now() + ms;
  for (let i = 0; i < 500 && Date.now() < deadline; i++) {
    const v = await f();
    if (v !== undefined) return v;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`timed out waiting for ${what}`);
}

test('every namespace gets a default ServiceAccount, recreated when deleted', async () => {
  assert.equal((await request(s.url, 'POST', '/api/v1/namespaces', { metadata: { name: 'sa1' } })).status, 201);
  const get = async () => {
    const r = await request(s.url, 'GET', '/api/v1/namespaces/sa1/serviceaccounts/default');
    return r.status === 200 ? r.json : undefined;
  };
  const first = await until('the default account', get);
  assert.equal((await request(s.url, 'DELETE', '/api/v1/namespaces/sa1/serviceaccounts/default')).status, 200);
  const again = await until('the account recreated', async () => {
    const a = await get();
    return a && a.metadata.uid !== first.metadata.uid ? a : undefined;
  });
  assert.equal(again.metadata.name, 'default');
  assert.equal(
    (await request(s.url, 'GET', '/api/v1/namespaces/default/serviceaccounts/default')).status,
    200,
    'bootstrap namespaces too',
  );
});

test('a pod gets the default account and the projected token volume in every container', async () => {
  // created right after its namespace: the plugin waits for the default account (upstream retries)
  assert.equal((await request(s.url, 'POST', '/api/v1/namespaces', { metadata: { name: 'sa2' } })).status, 201);
  const r = await request(s.url, 'POST', '/api/v1/namespaces/sa2/pods', pod('p1'));
  assert.equal(r.status, 201, r.text);
  const spec = r.json.spec;
  assert.equal(spec.serviceAccountName, 'default');
  assert.equal(spec.serviceAccount, 'default');
  assert.equal(spec.volumes.length, 1);
  const v = spec.volumes[0];
  assert.match(v.name, /^plat-api-access-[a-z0-9]{5}$/);
  assert.deepEqual(v.projected, {
    defaultMode: 420,
    sources: [
      { serviceAccountToken: { expirationSeconds: 3607, path: 'token' } },
      { configMap: { name: 'plat-root-ca.crt', items: [{ key: 'ca.crt', path: 'ca.crt' }] } },
      {
        downwardAPI: {
          items: [{ path: 'namespace', fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.namespace' } }],
        },
      },
    ],
  });
  for (const c of [...spec.containers, ...spec.initContainers])
    assert.deepEqual(c.volumeMounts, [{ name: v.name, readOnly: true, mountPath: MOUNT }]);
  const dry = await request(s.url, 'POST', '/api/v1/namespaces/sa2/pods?dryRun=All', pod('p-dry'));
  assert.equal(dry.status, 201);
  assert.equal(dry.json.spec.volumes.length, 1, 'dry runs are admitted');
  assert.equal((await request(s.url, 'GET', '/api/v1/namespaces/sa2/pods/p-dry')).status, 404);
});

test("a server-side apply that creates a pod is admitted as a CREATE: account and token volume, managedFields the apply's", async () => {
  // upstream patcher.applyAdmission: no current object = admission.Create with CreateOptions
  assert.equal((await request(s.url, 'POST', '/api/v1/namespaces', { metadata: { name: 'sa-apply' } })).status, 201);
  const path = '/api/v1/namespaces/sa-apply/pods/applied?fieldManager=tester';
  const r = await request(s.url, 'PATCH', path, JSON.stringify(pod('applied')), {
    'content-type': 'application/apply-patch+yaml',
  });
  assert.equal(r.status, 201, r.text);
  assert.equal(r.json.spec.serviceAccountName, 'default');
  assert.equal(r.json.spec.volumes?.length, 1, JSON.stringify(r.json.spec.volumes));
  assert.match(r.json.spec.volumes[0].name, /^plat-api-access-[a-z0-9]{5}$/);
  assert.deepEqual(
    r.json.metadata.managedFields.map((e: { manager: string; operation: string }) => [e.manager, e.operation]),
    [['tester', 'Apply']],
    "the mutation is nobody's: no Update entry beside the Apply",
  );
  const stored = await request(s.url, 'GET', '/api/v1/namespaces/sa-apply/pods/applied');
  assert.deepEqual(stored.json.spec.volumes, r.json.spec.volumes);
  // applied again (now an UPDATE): the fields the plugin set stay, no conflict, nothing written
  const again = await request(s.url, 'PATCH', path, JSON.stringify(pod('applied')), {
    'content-type': 'application/apply-patch+yaml',
  });
  assert.equal(again.status, 200, again.text);
  assert.deepEqual(again.json.spec.volumes, r.json.spec.volumes);
  assert.equal(again.json.metadata.resourceVersion, r.json.metadata.resourceVersion);
});

test("opt-outs: the pod's or the account's automountServiceAccountToken false, an existing mount; an unknown account is refused", async () => {
  assert.equal(
    (
      await request(s.url, 'POST', '/api/v1/namespaces/default/serviceaccounts', {
        metadata: { name: 'quiet' },
        automountServiceAccountToken: false,
      })
    ).status,
    201,
  );
  const off = await request(
    s.url,
    'POST',
    '/api/v1/namespaces/default/pods',
    pod('o1', { automountServiceAccountToken: false }),
  );
  assert.equal(off.status, 201, off.text);
  assert.equal(off.json.spec.volumes, undefined);
  assert.equal(off.json.spec.serviceAccountName, 'default', 'an opted-out pod still gets its account');
  const quiet = await request(
    s.url,
    'POST',
    '/api/v1/namespaces/default/pods',
    pod('o2', { serviceAccountName: 'quiet' }),
  );
  assert.equal(quiet.status, 201);
  assert.equal(quiet.json.spec.volumes, undefined);
  const own = await request(s.url, 'POST', '/api/v1/namespaces/default/pods', {
    ...pod('o3'),
    spec: {
      containers: [{ name: 'c', image: 'x', volumeMounts: [{ name: 'mine', mountPath: MOUNT }] }],
      volumes: [{ name: 'mine', emptyDir: {} }],
    },
  });
  assert.equal(own.status, 201, own.text);
  assert.deepEqual(
    own.json.spec.volumes.map((v: any) => v.name),
    ['mine'],
  );
  assert.equal(own.json.spec.serviceAccountName, 'default', 'a pod mounting the path itself still gets its account');
  assert.equal(own.json.spec.serviceAccount, 'default');
  const none = await request(s.url, 'POST', '/api/v1/namespaces/default/pods', { ...pod('o5'), spec: {} });
  assert.equal(none.status, 422, 'a pod without containers is refused by validation, not broken by the plugin');
  assert.equal(none.json.reason, 'Invalid');
  const missing = await request(
    s.url,
    'POST',
    '/api/v1/namespaces/default/pods',
    pod('o4', { serviceAccountName: 'nobody' }),
  );
  assert.equal(missing.status, 403);
  assert.equal(missing.json.reason, 'Forbidden');
  assert.equal(
    missing.json.message,
    'pods "o4" is forbidden: error looking up service account default/nobody: serviceaccount "nobody" not found',
  );
});

test("flags: upstream's default set, enable/disable, unknown names and overlaps refused", async () => {
  const d = parseArgs(['--port', '0']).admissionPlugins;
  assert.deepEqual([...d].sort(), [...DEFAULT_ON_ADMISSION_PLUGINS].sort());
  assert.ok(!d.has('NodeRestriction'));
  const o = parseArgs([
    '--enable-admission-plugins',
    'NodeRestriction,AlwaysPullImages',
    '--disable-admission-plugins=ServiceAccount,MutatingAdmissionWebhook',
  ]).admissionPlugins;
  assert.ok(
    o.has('NodeRestriction') &&
      o.has('NamespaceLifecycle') &&
      !o.has('ServiceAccount') &&
      !o.has('MutatingAdmissionWebhook'),
  );
  assert.throws(() => parseArgs(['--enable-admission-plugins', 'Nope']), {
    message: 'enable-admission-plugins plugin "Nope" is unknown',
  });
  assert.throws(() => parseArgs(['--disable-admission-plugins', 'Nope']), {
    message: 'disable-admission-plugins plugin "Nope" is unknown',
  });
  assert.throws(
    () =>
      parseArgs([
        '--enable-admission-plugins',
        'ServiceAccount,LimitRanger',
        '--disable-admission-plugins',
        'LimitRanger,ServiceAccount',
      ]),
    { message: '[LimitRanger ServiceAccount] in enable-admission-plugins and disable-admission-plugins overlapped' },
  );
});

test('--disable-admission-plugins ServiceAccount,NamespaceLifecycle: pods untouched, creates in a missing namespace allowed', async () => {
  const t = await startServer(['--disable-admission-plugins', 'ServiceAccount,NamespaceLifecycle']);
  try {
    const r = await request(
      t.url,
      'POST',
      '/api/v1/namespaces/default/pods',
      pod('x', { serviceAccountName: 'nobody' }),
    );
    assert.equal(r.status, 201, r.text);
    assert.equal(r.json.spec.volumes, undefined);
    const ghost = await request(t.url, 'POST', '/api/v1/namespaces/ghost/configmaps', { metadata: { name: 'c' } });
    assert.equal(ghost.status, 201, ghost.text);
  } finally {
    await t.stop();
    t.cleanup();
  }
  const missing = await request(s.url, 'POST', '/api/v1/namespaces/ghost/configmaps', { metadata: { name: 'c' } });
  assert.equal(missing.status, 404, 'NamespaceLifecycle on by default');
});

test('root CA publisher: with the generated cluster CA, every namespace gets <short>-root-ca.crt, recreated when deleted', async () => {
  const t = await startAuthServer([]);
  try {
    const ca = readFileSync(`${t.dataDir}/pki/ca.crt`, 'utf8');
    const get = async (ns: string) => {
      const r = await request(t.url, 'GET', `/api/v1/namespaces/${ns}/configmaps/plat-root-ca.crt`);
      return r.status === 200 ? r.json : undefined;
    };
    assert.equal((await until("the default namespace's CA", () => get('default'))).data['ca.crt'], ca);
    assert.equal((await request(t.url, 'POST', '/api/v1/namespaces', { metadata: { name: 'rc1' } })).status, 201);
    const first = await until("the new namespace's CA", () => get('rc1'));
    assert.equal((await request(t.url, 'DELETE', '/api/v1/namespaces/rc1/configmaps/plat-root-ca.crt')).status, 200);
    await until('recreated', async () => {
      const c = await get('rc1');
      return c && c.metadata.uid !== first.metadata.uid ? c : undefined;
    });
  } finally {
    await t.stop();
    t.cleanup();
  }
});
