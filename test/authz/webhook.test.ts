/**
 * The webhook authorizer against a loopback HTTPS webhook: the review sent (v1 and v1beta1),
 * allowed / denied / no opinion, the cache and its two TTLs, timeout, failing and malformed
 * answers under both failure policies, matchConditions, the kubeconfig loader, and the mode
 * in the real server (flags), where a deny short-circuits RBAC.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import type { Attributes } from '../../src/auth/authz/attributes.js';
import type { AuthorizerResult } from '../../src/auth/authz/authorizer.js';
import { loadKubeconfig } from '../../src/auth/authz/kubeconfig.js';
import { MatchConditions } from '../../src/auth/authz/match-conditions.js';
import { WebhookAuthorizer, reviewSpec, type WebhookSettings } from '../../src/auth/authz/webhook.js';
import { fieldRequirements, labelRequirements } from '../../src/auth/authz/selectors.js';
import { request, startAuthServer } from '../auth/helpers.js';
import { webhookPerFile } from './webhook-helpers.js';

const w = webhookPerFile();

const alice = { username: 'alice', uid: 'u1', groups: ['dev', 'system:authenticated'], extra: { scopes: ['a', 'b'] } };
const get = (name = 'x', user = alice): Attributes => ({
  user,
  verb: 'get',
  apiGroup: 'apps',
  apiVersion: 'v1',
  resource: 'deployments',
  subresource: 'scale',
  namespace: 'ns',
  name,
  resourceRequest: true,
  path: '/apis/apps/v1/namespaces/ns/deployments/x/scale',
});
const nonResource = (): Attributes => ({
  user: alice,
  verb: 'get',
  apiGroup: '',
  resource: '',
  resourceRequest: false,
  path: '/healthz',
});

function authorizer(over: Partial<WebhookSettings> = {}): WebhookAuthorizer {
  return new WebhookAuthorizer({
    name: 'hook',
    client: loadKubeconfig(w.kubeconfig),
    reviewGroup: 'authorization.plat.io',
    subjectAccessReviewVersion: 'v1',
    authorizedTtlMs: 300_000,
    unauthorizedTtlMs: 30_000,
    timeoutMs: 5_000,
    failurePolicy: 'NoOpinion',
    retryBackoffMs: 10,
    ...over,
  });
}
const ask = async (z: WebhookAuthorizer, a: Attributes): Promise<AuthorizerResult> => z.authorize(a);

test('the review sent: v1 with groups, v1beta1 with group; resource and non-resource attributes; the kubeconfig token', async () => {
  w.hook.reviews.length = 0;
  w.hook.answer = () => ({ status: { allowed: true } });
  const v1 = authorizer();
  await ask(v1, get());
  await ask(v1, nonResource());
  await ask(authorizer({ subjectAccessReviewVersion: 'v1beta1' }), get());
  v1.close();
  assert.deepEqual(w.hook.reviews[0], {
    kind: 'SubjectAccessReview',
    apiVersion: 'authorization.plat.io/v1',
    metadata: { creationTimestamp: null },
    spec: {
      resourceAttributes: {
        namespace: 'ns',
        verb: 'get',
        group: 'apps',
        version: 'v1',
        resource: 'deployments',
        subresource: 'scale',
        name: 'x',
      },
      user: 'alice',
      groups: ['dev', 'system:authenticated'],
      extra: { scopes: ['a', 'b'] },
      uid: 'u1',
    },
    status: { allowed: false },
  });
  assert.deepEqual(w.hook.reviews[1].spec.nonResourceAttributes, { path: '/healthz', verb: 'get' });
  assert.deepEqual(
    reviewSpec({
      ...get(),
      verb: 'list',
      name: undefined,
      subresource: undefined,
      fieldSelector: fieldRequirements('spec.nodeName=n1'),
      labelSelector: labelRequirements('app'),
    }).resourceAttributes,
    {
      namespace: 'ns',
      verb: 'list',
      group: 'apps',
      version: 'v1',
      resource: 'deployments',
      fieldSelector: { requirements: [{ key: 'spec.nodeName', operator: 'In', values: ['n1'] }] },
      labelSelector: { requirements: [{ key: 'app', operator: 'Exists' }] },
    },
    'selectors are sent as parsed requirements',
  );
  assert.equal(w.hook.reviews[2].apiVersion, 'authorization.plat.io/v1beta1');
  assert.deepEqual(w.hook.reviews[2].spec.group, ['dev', 'system:authenticated']);
  assert.equal(w.hook.reviews[2].spec.groups, undefined);
});

test('allowed allows, denied denies, neither is no opinion; the reason is kept; allowed and denied together is a deny with an error', async () => {
  const z = authorizer();
  const rows: [Record<string, unknown>, AuthorizerResult][] = [
    [
      { allowed: true, reason: 'ok' },
      { decision: 'allow', reason: 'ok' },
    ],
    [
      { allowed: false, denied: true, reason: 'no way' },
      { decision: 'deny', reason: 'no way' },
    ],
    [
      { allowed: false, reason: 'not mine' },
      { decision: 'noOpinion', reason: 'not mine' },
    ],
    [
      { allowed: true, denied: true },
      { decision: 'deny', reason: '', error: 'webhook subject access review returned both allow and deny response' },
    ],
  ];
  let i = 0;
  for (const [status, want] of rows) {
    w.hook.answer = () => ({ status });
    assert.deepEqual(await ask(z, get(`r${i++}`)), want, JSON.stringify(status));
  }
  z.close();
});

test('cache: allowed answers last authorizedTTL, the others unauthorizedTTL; a hit is synchronous; keyed by the whole spec', async () => {
  let now = 1_000_000;
  const z = authorizer({ now: () => now, authorizedTtlMs: 60_000, unauthorizedTtlMs: 5_000 });
  w.hook.answer = (r) => ({ status: { allowed: r.spec.resourceAttributes?.name === 'yes' } });
  assert.equal((await ask(z, get('yes'))).decision, 'allow');
  assert.equal((await ask(z, get('no'))).decision, 'noOpinion');
  assert.equal(z.calls, 2);
  const hit = z.authorize(get('yes'));
  assert.ok(!(hit instanceof Promise), 'a cached answer is synchronous');
  assert.equal(z.authorize(get('no')) instanceof Promise, false);
  assert.equal(z.calls, 2);
  now += 6_000;
  assert.equal((await ask(z, get('no'))).decision, 'noOpinion');
  assert.equal(z.calls, 3, 'the non-allow answer expired after unauthorizedTTL');
  assert.equal(z.authorize(get('yes')) instanceof Promise, false, 'the allow is still cached');
  now += 60_000;
  await ask(z, get('yes'));
  assert.equal(z.calls, 4, 'and expires after authorizedTTL');
  await ask(z, get('yes', { ...alice, groups: ['other'] }));
  assert.equal(z.calls, 5, 'another user is another key');
  z.close();
});

test('failures: timeout, non-2xx, malformed body and a closed port answer the failure policy with the error; errors are not cached', async () => {
  for (const failurePolicy of ['NoOpinion', 'Deny'] as const) {
    const decision = failurePolicy === 'Deny' ? 'deny' : 'noOpinion';
    // the webhook would allow, 60 s later: an answer with the timeout's error can only be the timeout's
    const t = authorizer({ failurePolicy, timeoutMs: 300 });
    w.hook.answer = () => ({ status: { allowed: true }, delayMs: 60_000 });
    const slow = await ask(t, get('t'));
    assert.equal(slow.decision, decision);
    assert.match(slow.error!, /^Post "https:\/\/127\.0\.0\.1:\d+\/authorize": context deadline exceeded$/);
    t.close();
    // the other failures with the default 5 s timeout: on a loaded machine a retried call can
    // take longer than 300 ms, which would turn the answers below into timeouts
    const z = authorizer({ failurePolicy });
    w.hook.answer = () => ({ code: 500, raw: 'boom' });
    let before = z.calls;
    assert.match((await ask(z, get('t'))).error!, /status code 500/);
    assert.equal(z.calls - before, 5, 'a 500 is retried: 5 attempts in all');
    let n = 0;
    w.hook.answer = () => (++n < 3 ? { code: 429, raw: 'slow down' } : { status: { allowed: true } });
    before = z.calls;
    assert.equal((await ask(z, get('retry'))).decision, 'allow', 'a 429 then success');
    assert.equal(z.calls - before, 3);
    w.hook.answer = () => ({ code: 403, raw: 'no' });
    before = z.calls;
    assert.match((await ask(z, get('t'))).error!, /status code 403/);
    assert.equal(z.calls - before, 1, 'other statuses are not retried');
    w.hook.answer = () => ({ raw: '{"status":{"allowed":"yes"}}' });
    const bad = await ask(z, get('t'));
    assert.equal(bad.decision, decision);
    assert.match(bad.error!, /malformed SubjectAccessReview response: status.allowed is not a boolean/);
    w.hook.answer = () => ({ status: { allowed: true } });
    assert.equal((await ask(z, get('t'))).decision, 'allow', 'failures were not cached');
    z.close();
  }
  const closed = new WebhookAuthorizer({
    name: 'x',
    client: { ...loadKubeconfig(w.kubeconfig), server: 'https://127.0.0.1:1/authorize' },
    reviewGroup: 'authorization.plat.io',
    subjectAccessReviewVersion: 'v1',
    authorizedTtlMs: 1,
    unauthorizedTtlMs: 1,
    timeoutMs: 2_000,
    failurePolicy: 'Deny',
  });
  const r = await ask(closed, get());
  assert.equal(r.decision, 'deny');
  assert.match(r.error!, /ECONNREFUSED/);
  closed.close();
});

test('matchConditions: any false skips the webhook, all true calls it, an error (none false) answers the failure policy', async () => {
  w.hook.answer = () => ({ status: { allowed: true } });
  const conditions = new MatchConditions([
    'has(request.resourceAttributes)',
    "request.resourceAttributes.namespace == 'ns'",
    "'dev' in request.groups",
  ]);
  const z = authorizer({ matchConditions: conditions });
  const calls = z.calls;
  assert.deepEqual(z.authorize(nonResource()), { decision: 'noOpinion', reason: '' }, 'false: skipped without a call');
  assert.deepEqual(z.authorize({ ...get(), namespace: 'other' }), { decision: 'noOpinion', reason: '' });
  assert.equal(z.calls, calls);
  assert.equal((await ask(z, get())).decision, 'allow', 'all true: called');
  assert.equal(z.calls, calls + 1);
  const erring = authorizer({
    matchConditions: new MatchConditions(['request.nonResourceAttributes.path == "/x"', 'request.user == "alice"']),
    failurePolicy: 'Deny',
  });
  const e = erring.authorize(get());
  assert.ok(!(e instanceof Promise));
  assert.equal(e.decision, 'deny');
  assert.match(e.error!, /^expression 'request.nonResourceAttributes.path == "\/x"' resulted in error: /);
  const falseWins = authorizer({
    matchConditions: new MatchConditions(['request.nonResourceAttributes.path == "/x"', 'request.user == "bob"']),
    failurePolicy: 'Deny',
  });
  assert.deepEqual(falseWins.authorize(get()), { decision: 'noOpinion', reason: '' }, 'a false beats an error');
  assert.throws(() => new MatchConditions(['request.user ==']), /found/);
  for (const x of [z, erring, falseWins]) x.close();
});

test('kubeconfig: current context, CA file relative to the file, inline data, https only, missing parts named', () => {
  const c = loadKubeconfig(w.kubeconfig);
  assert.equal(c.server, w.hook.url);
  assert.deepEqual(c.ca, w.pki.read('webhook-ca.crt'));
  assert.equal(c.token, 'apiserver-token');
  const write = (text: string) => {
    writeFileSync(w.pki.path('k.yaml'), text);
    return w.pki.path('k.yaml');
  };
  const inline = write(
    JSON.stringify({
      clusters: [
        {
          name: 'c',
          cluster: { server: 'https://h:1/x', 'certificate-authority-data': Buffer.from('CA').toString('base64') },
        },
      ],
      users: [
        {
          name: 'u',
          user: {
            'client-certificate-data': Buffer.from('C').toString('base64'),
            'client-key-data': Buffer.from('K').toString('base64'),
          },
        },
      ],
      contexts: [{ name: 'x', context: { cluster: 'c', user: 'u' } }],
      'current-context': 'x',
    }),
  );
  const ci = loadKubeconfig(inline);
  assert.deepEqual([ci.ca?.toString(), ci.cert?.toString(), ci.key?.toString()], ['CA', 'C', 'K']);
  assert.throws(() => loadKubeconfig(write('clusters: []\n')), /no current context is set/);
  assert.throws(
    () => loadKubeconfig(write('current-context: a\ncontexts: []\n')),
    /context was not found for specified context: a/,
  );
  assert.throws(
    () =>
      loadKubeconfig(
        write(
          'current-context: a\ncontexts: [{name: a, context: {cluster: c}}]\nclusters: [{name: c, cluster: {server: "http://h/"}}]\n',
        ),
      ),
    /must be an https:\/\/ URL/,
  );
  assert.throws(() => loadKubeconfig(w.pki.path('none.yaml')), /ENOENT/);
});

test('server: --authorization-mode Webhook,RBAC: allow, a deny short-circuits RBAC, no opinion falls through; a failing webhook is a 500 unless RBAC allows', async () => {
  writeFileSync(w.pki.path('tokens.csv'), 'bob-token,bob,uid-b\n');
  const s = await startAuthServer([
    '--token-auth-file',
    w.pki.path('tokens.csv'),
    '--authorization-mode',
    'Webhook,RBAC',
    '--authorization-webhook-config-file',
    w.kubeconfig,
    '--authorization-webhook-version',
    'v1',
    '--authorization-webhook-cache-unauthorized-ttl',
    '0s',
  ]);
  try {
    const tls = { ca: readFileSync(`${s.dataDir}/pki/ca.crt`) };
    const as = (method: string, p: string, body?: unknown) =>
      request(s.secureUrl, tls, method, p, body, { authorization: 'Bearer bob-token' });
    w.hook.answer = (r) => {
      const ra = r.spec.resourceAttributes;
      if (ra?.resource === 'configmaps') return { status: { allowed: true, reason: 'hook says yes' } };
      if (r.spec.nonResourceAttributes?.path === '/apis')
        return { status: { allowed: false, denied: true, reason: 'hook says no' } };
      return { status: { allowed: false } };
    };
    assert.equal((await as('GET', '/api/v1/namespaces/default/configmaps')).status, 200, 'the webhook allows');
    const created = await as('POST', '/api/v1/namespaces/default/configmaps', {
      metadata: { name: 'c' },
      data: { k: 'v'.repeat(10_000) },
    });
    assert.equal(created.status, 201, 'a write with a body waits for the webhook: the body is kept');
    const denied = await as('GET', '/apis');
    assert.equal(denied.status, 403, 'denied short-circuits although RBAC (system:discovery) allows');
    assert.equal(denied.json.message, 'forbidden: User "bob" cannot get path "/apis": hook says no');
    assert.equal((await as('GET', '/api')).status, 200, 'no opinion: RBAC decides');
    assert.equal((await as('GET', '/api/v1/namespaces/default/pods')).status, 403, 'no opinion from both');
    const ssar = await as('POST', '/apis/authorization.plat.io/v1/selfsubjectaccessreviews', {
      kind: 'SelfSubjectAccessReview',
      apiVersion: 'authorization.plat.io/v1',
      spec: { resourceAttributes: { namespace: 'default', verb: 'delete', resource: 'configmaps' } },
    });
    assert.equal(ssar.status, 201, ssar.text);
    assert.deepEqual(
      ssar.json.status,
      { allowed: true, reason: 'hook says yes' },
      'an access review asks the webhook too',
    );
    const sar = await as('POST', '/apis/authorization.plat.io/v1/selfsubjectaccessreviews', {
      kind: 'SelfSubjectAccessReview',
      apiVersion: 'authorization.plat.io/v1',
      spec: { nonResourceAttributes: { path: '/apis', verb: 'get' } },
    });
    assert.deepEqual(sar.json.status, { allowed: false, denied: true, reason: 'hook says no' });
    const reviews = w.hook.reviews.length;
    await as('GET', '/api/v1/namespaces/default/configmaps');
    assert.equal(w.hook.reviews.length, reviews, 'an allow is cached');
    await w.hook.close();
    const down = await as('GET', '/api/v1/namespaces/default/pods');
    assert.equal(down.status, 500, 'the webhook fails (no opinion) and nobody allows: upstream answers the error');
    assert.equal(down.json.reason, 'InternalError');
    assert.match(
      down.json.message,
      /^Internal Server Error: "\/api\/v1\/namespaces\/default\/pods": Post "https:\/\/127\.0\.0\.1:\d+\/authorize": /,
    );
    assert.equal((await as('GET', '/api')).status, 200, 'RBAC still allows when the webhook is down');
    assert.equal(
      (await as('GET', '/api/v1/namespaces/default/configmaps')).status,
      200,
      'the cached allow still holds',
    );
  } finally {
    await s.stop();
    s.cleanup();
    await w.restart();
  }
});
