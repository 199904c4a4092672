/**
 * The bootstrap token controllers: --controllers selection, the TokenCleaner deleting expired
 * bootstrap token secrets (already expired, and at expiry), and the BootstrapSigner keeping
 * cluster-info signed, each signature verified independently with jose.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { compactVerify, decodeProtectedHeader } from 'jose';
import { controllerEnabled, parseControllers } from '../../src/controllers/selection.js';
import { detachedSignature } from '../../src/controllers/bootstrap-signer.js';
import { startServer, request, type TestServer } from '../helpers/server.js';

const SECRETS = '/api/v1/namespaces/plat-system/secrets';
const CLUSTER_INFO = '/api/v1/namespaces/plat-public/configmaps/cluster-info';
const b64 = (s: string) => Buffer.from(s).toString('base64');
const iso = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
const token = (id: string, secret: string, extra: Record<string, string> = {}) => ({
  metadata: { name: `bootstrap-token-${id}` },
  type: 'bootstrap.platform.io/token',
  data: Object.fromEntries(
    Object.entries({ 'token-id': id, 'token-secret': secret, ...extra }).map(([k, v]) => [k, b64(v)]),
  ),
});

/** polls (bounded in count and time) until check passes on the fetched value */
async function until<T>(fetch: () => Promise<T>, check: (t: T) => boolean, what: string, ms = 8_000): Promise<T> {
  const deadline = Date.now() + ms;
  let v = await fetch();
  for (let i = 0; i < 400 && !check(v) && Date.now() < deadline; i++) {
    await new Promise((done) => setTimeout(done, 50));
    v = await fetch();
  }
  assert.ok(check(v), what);
  return v;
}

/** An independent check of a detached signature: payload put back, HS256 with the full token. */
async function verifies(sig: string, content: string, id: string, secret: string): Promise<boolean> {
  const [h, empty, s] = sig.split('.');
  if (empty !== '') return false;
  const payload = Buffer.from(content).toString('base64url');
  try {
    const r = await compactVerify(`${h}.${payload}.${s}`, new TextEncoder().encode(`${id}.${secret}`));
    return new TextDecoder().decode(r.payload) === content;
  } catch {
    return false;
  }
}

test('--controllers: * keeps the bootstrap controllers off; naming turns them on; -name turns one off; unknown names refused', () => {
  assert.equal(controllerEnabled(['*'], 'tokencleaner'), false);
  assert.equal(controllerEnabled(['*'], 'namespace'), true);
  assert.equal(controllerEnabled(parseControllers('*,tokencleaner,bootstrapsigner'), 'bootstrapsigner'), true);
  assert.equal(controllerEnabled(parseControllers('*,-namespace'), 'namespace'), false);
  assert.throws(() => parseControllers('*,nope'), {
    message: '--controllers: "nope" is not in the list of known controllers',
  });
});

test('detached signature: header..signature with alg HS256 and kid', async () => {
  const sig = await detachedSignature('hello', 'abcdef', '0123456789abcdef');
  assert.match(sig, /^[A-Za-z0-9_-]+\.\.[A-Za-z0-9_-]+$/);
  assert.deepEqual(decodeProtectedHeader(sig.replace('..', '.e30.')), { alg: 'HS256', kid: 'abcdef' });
  assert.ok(await verifies(sig, 'hello', 'abcdef', '0123456789abcdef'));
  assert.ok(!(await verifies(sig, 'hello!', 'abcdef', '0123456789abcdef')));
  assert.ok(!(await verifies(sig, 'hello', 'abcdef', '0123456789abcdeX')));
});

let s: TestServer;
before(async () => {
  s = await startServer(['--controllers', '*,tokencleaner,bootstrapsigner']);
});
after(async () => {
  await s?.stop();
  s?.cleanup();
});

test('TokenCleaner: an expired token secret goes at once, another at its expiration; unexpired and other secrets stay', async () => {
  const create = async (body: object) => assert.equal((await request(s.url, 'POST', SECRETS, body)).status, 201);
  await create(token('aaaaaa', 'aaaaaaaaaaaaaaaa', { expiration: iso(Date.now() - 60_000) }));
  await create(token('bbbbbb', 'bbbbbbbbbbbbbbbb', { expiration: iso(Date.now() + 2_000) }));
  await create(token('cccccc', 'cccccccccccccccc', { expiration: iso(Date.now() + 3_600_000) }));
  await create(token('dddddd', 'dddddddddddddddd'));
  await create({ ...token('eeeeee', 'eeeeeeeeeeeeeeee', { expiration: iso(Date.now() - 60_000) }), type: 'Opaque' });
  const status = (id: string) => () => request(s.url, 'GET', `${SECRETS}/bootstrap-token-${id}`).then((r) => r.status);
  await until(status('aaaaaa'), (c) => c === 404, 'the expired token is deleted');
  assert.equal(await status('bbbbbb')(), 200, 'not yet expired');
  await until(status('bbbbbb'), (c) => c === 404, 'deleted once expired');
  for (const id of ['cccccc', 'dddddd', 'eeeeee']) assert.equal(await status(id)(), 200, id);
});

test('BootstrapSigner: cluster-info gets a verifiable jws-kubeconfig-<id> per signing token; re-signed on change; removed with the token', async () => {
  const kubeconfig =
    'apiVersion: v1\nkind: Config\nclusters:\n- name: ""\n  cluster:\n    server: https://10.0.0.1:6443\n';
  const signing = (id: string, secret: string, extra = {}) =>
    token(id, secret, { 'usage-bootstrap-signing': 'true', ...extra });
  for (const body of [
    signing('sign01', 'sign01sign01sign'),
    signing('sign02', 'sign02sign02sign', { expiration: iso(Date.now() + 3_600_000) }),
    token('nosign', 'nosignnosignnosi'),
    signing('expird', 'expirdexpirdexpi', { expiration: iso(Date.now() - 1_000) }),
  ]) {
    assert.equal((await request(s.url, 'POST', SECRETS, body)).status, 201);
  }
  assert.equal(
    (
      await request(s.url, 'POST', '/api/v1/namespaces/plat-public/configmaps', {
        metadata: { name: 'cluster-info' },
        data: { kubeconfig, 'jws-kubeconfig-stale00': 'x..y' },
      })
    ).status,
    201,
  );
  const get = () => request(s.url, 'GET', CLUSTER_INFO).then((r) => r.json);
  let cm = await until(
    get,
    (c) => !!c.data['jws-kubeconfig-sign01'] && !!c.data['jws-kubeconfig-sign02'] && !c.data['jws-kubeconfig-stale00'],
    'signed',
  );
  assert.deepEqual(
    Object.keys(cm.data).sort(),
    ['jws-kubeconfig-sign01', 'jws-kubeconfig-sign02', 'kubeconfig'],
    'no signature for non-signing, expired or unknown tokens',
  );
  assert.ok(await verifies(cm.data['jws-kubeconfig-sign01'], kubeconfig, 'sign01', 'sign01sign01sign'));
  assert.ok(await verifies(cm.data['jws-kubeconfig-sign02'], kubeconfig, 'sign02', 'sign02sign02sign'));
  assert.deepEqual(decodeProtectedHeader(cm.data['jws-kubeconfig-sign01'].replace('..', '.e30.')), {
    alg: 'HS256',
    kid: 'sign01',
  });

  const changed = kubeconfig.replace('10.0.0.1', '10.0.0.2');
  assert.equal(
    (await request(s.url, 'PUT', CLUSTER_INFO, { ...cm, data: { ...cm.data, kubeconfig: changed } })).status,
    200,
  );
  cm = await until(
    get,
    (c) => c.data.kubeconfig === changed && c.data['jws-kubeconfig-sign01'] !== cm.data['jws-kubeconfig-sign01'],
    're-signed',
  );
  assert.ok(await verifies(cm.data['jws-kubeconfig-sign01'], changed, 'sign01', 'sign01sign01sign'));

  assert.equal((await request(s.url, 'DELETE', `${SECRETS}/bootstrap-token-sign02`)).status, 200);
  cm = await until(get, (c) => !('jws-kubeconfig-sign02' in c.data), "the deleted token's signature goes");
  assert.ok(await verifies(cm.data['jws-kubeconfig-sign01'], changed, 'sign01', 'sign01sign01sign'));
});
