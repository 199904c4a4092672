/**
 * Admission webhooks end to end: a loopback HTTPS webhook (its own CA in caBundle) seen to
 * mutate (JSONPatch, reinvocation), deny (its Status, prefixed), time out and be ignored per
 * failurePolicy, filtered by namespaceSelector, objectSelector and matchConditions, with
 * warnings passed through and the dry-run side-effect rule.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, request, type TestServer } from '../helpers/server.js';
import { Pki } from '../auth/helpers.js';
import { startAdmissionWebhook, webhook, type AdmissionWebhook } from './helpers.js';

const AR = '/apis/admissionregistration.plat.io/v1';
let s: TestServer;
let pki: Pki;
let wh: AdmissionWebhook;

before(async () => {
  pki = new Pki();
  wh = await startAdmissionWebhook(pki, ['hook.wh-on.svc']);
  s = await startServer();
  for (const [name, labels] of [
    ['wh-on', { admission: 'on' }],
    ['wh-off', {}],
  ] as const) {
    assert.equal((await request(s.url, 'POST', '/api/v1/namespaces', { metadata: { name, labels } })).status, 201);
  }
});
after(async () => {
  await s.stop();
  s.cleanup();
  await wh.close();
  pki.cleanup();
});

async function configure(
  kind: 'mutating' | 'validating',
  name: string,
  webhooks: unknown[],
): Promise<() => Promise<void>> {
  const plural = `${kind}webhookconfigurations`;
  const r = await request(s.url, 'POST', `${AR}/${plural}`, { metadata: { name }, webhooks });
  assert.equal(r.status, 201, r.text);
  return async () => {
    assert.equal((await request(s.url, 'DELETE', `${AR}/${plural}/${name}`)).status, 200);
  };
}

const cm = (name: string, extra: Record<string, unknown> = {}) => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, ...extra },
  data: { k: 'v' },
});

test('mutating webhook: JSONPatch applied on create and update, the review as upstream, warnings passed on', async () => {
  wh.answers.set('/mutate', (review) => ({
    patch:
      review.request.operation === 'CREATE'
        ? [{ op: 'add', path: '/metadata/labels', value: { mutated: 'yes' } }]
        : [{ op: 'add', path: '/data/updated', value: 'yes' }],
    response: { warnings: ['mutated by test'], auditAnnotations: { seen: 'true' } },
  }));
  const done = await configure('mutating', 'mutate', [
    webhook('mutate.test.plat.io', `${wh.base}/mutate`, wh.caBundle, {
      namespaceSelector: { matchLabels: { admission: 'on' } },
    }),
  ]);
  try {
    const created = await request(s.url, 'POST', '/api/v1/namespaces/wh-on/configmaps', cm('m1'));
    assert.equal(created.status, 201, created.text);
    assert.deepEqual(created.json.metadata.labels, { mutated: 'yes' });
    assert.match(created.headers.get('warning') ?? '', /299 - "mutated by test"/);
    const review = wh.reviews.at(-1)!.review;
    assert.equal(review.apiVersion, 'admission.plat.io/v1');
    assert.equal(review.kind, 'AdmissionReview');
    assert.equal(review.request.operation, 'CREATE');
    assert.deepEqual(review.request.kind, { group: '', version: 'v1', kind: 'ConfigMap' });
    assert.deepEqual(review.request.resource, { group: '', version: 'v1', resource: 'configmaps' });
    assert.equal(review.request.namespace, 'wh-on');
    assert.equal(review.request.userInfo.username, 'system:unsecured');
    assert.equal(review.request.object.data.k, 'v');
    assert.equal(review.request.oldObject, null);
    assert.equal(review.request.dryRun, false);
    assert.equal(
      (await request(s.url, 'GET', '/api/v1/namespaces/wh-on/configmaps/m1')).json.metadata.labels.mutated,
      'yes',
      'stored mutated',
    );

    const patched = await request(
      s.url,
      'PATCH',
      '/api/v1/namespaces/wh-on/configmaps/m1',
      { data: { k: 'v2' } },
      { 'content-type': 'application/merge-patch+json' },
    );
    assert.equal(patched.status, 200, patched.text);
    assert.deepEqual(patched.json.data, { k: 'v2', updated: 'yes' });
    const upd = wh.reviews.at(-1)!.review.request;
    assert.equal(upd.operation, 'UPDATE');
    assert.equal(upd.oldObject.data.k, 'v', 'the stored object');
    assert.equal(upd.object.data.k, 'v2', 'the patched object');
    assert.deepEqual(upd.options, { kind: 'PatchOptions', apiVersion: 'meta.plat.io/v1' });

    const before = wh.reviews.length;
    const off = await request(s.url, 'POST', '/api/v1/namespaces/wh-off/configmaps', cm('m2'));
    assert.equal(off.status, 201);
    assert.equal(off.json.metadata.labels, undefined, 'namespaceSelector does not match');
    assert.equal(wh.reviews.length, before, 'not called');
  } finally {
    await done();
  }
});

test("validating webhook: denial with the webhook's code and message; objectSelector and matchConditions skip it", async () => {
  wh.answers.set('/deny', (review) =>
    review.request.object?.data?.bad
      ? { response: { allowed: false, status: { code: 403, reason: 'Forbidden', message: 'bad data' } } }
      : {},
  );
  const done = await configure('validating', 'deny', [
    webhook('deny.test.plat.io', `${wh.base}/deny`, wh.caBundle, {
      objectSelector: { matchExpressions: [{ key: 'skip', operator: 'DoesNotExist' }] },
      matchConditions: [{ name: 'not-exempt', expression: 'object.metadata.name != "exempt"' }],
    }),
  ]);
  try {
    const bad = { ...cm('v1'), data: { bad: 'yes' } };
    const denied = await request(s.url, 'POST', '/api/v1/namespaces/wh-off/configmaps', bad);
    assert.equal(denied.status, 403);
    assert.equal(denied.json.reason, 'Forbidden');
    assert.equal(denied.json.message, 'admission webhook "deny.test.plat.io" denied the request: bad data');
    assert.equal(
      (await request(s.url, 'GET', '/api/v1/namespaces/wh-off/configmaps/v1')).status,
      404,
      'nothing stored',
    );
    const dry = await request(s.url, 'POST', '/api/v1/namespaces/wh-off/configmaps?dryRun=All', bad);
    assert.equal(dry.status, 403, 'dry runs are admitted too');
    assert.equal(wh.reviews.at(-1)!.review.request.dryRun, true);
    const skipped = await request(s.url, 'POST', '/api/v1/namespaces/wh-off/configmaps', {
      ...bad,
      metadata: { name: 'v2', labels: { skip: 'y' } },
    });
    assert.equal(skipped.status, 201, 'objectSelector');
    const exempt = await request(s.url, 'POST', '/api/v1/namespaces/wh-off/configmaps', {
      ...bad,
      metadata: { name: 'exempt' },
    });
    assert.equal(exempt.status, 201, 'matchCondition false');
    const ok = await request(s.url, 'POST', '/api/v1/namespaces/wh-off/configmaps', cm('v3'));
    assert.equal(ok.status, 201);
    wh.answers.set('/deny', () => ({ response: { allowed: false } }));
    const bare = await request(s.url, 'DELETE', '/api/v1/namespaces/wh-off/configmaps/v3');
    assert.equal(bare.status, 200, 'DELETE is not in the rules');
    const upd = await request(s.url, 'PUT', '/api/v1/namespaces/wh-off/configmaps/v2', {
      ...cm('v2'),
      metadata: { name: 'v2' },
    });
    assert.equal(upd.status, 400, 'no status: 400 without explanation');
    assert.equal(upd.json.message, 'admission webhook "deny.test.plat.io" denied the request without explanation');
  } finally {
    await done();
  }
});

test('validating webhook on DELETE: the review names the operation, the stored object as oldObject, no object, DeleteOptions; a denial keeps the object', async () => {
  wh.answers.set('/del', (review) =>
    review.request.oldObject?.data?.keep
      ? { response: { allowed: false, status: { code: 403, reason: 'Forbidden', message: 'kept' } } }
      : {},
  );
  const rules = [{ operations: ['DELETE'], apiGroups: [''], apiVersions: ['v1'], resources: ['configmaps'] }];
  const done = await configure('validating', 'del', [
    webhook('del.test.plat.io', `${wh.base}/del`, wh.caBundle, { rules }),
  ]);
  const reviews = () => wh.reviews.filter((r) => r.path === '/del').map((r) => r.review.request);
  try {
    const CMS = '/api/v1/namespaces/wh-off/configmaps';
    assert.equal((await request(s.url, 'POST', CMS, { ...cm('del-1'), data: { keep: 'y' } })).status, 201);
    assert.equal((await request(s.url, 'POST', CMS, cm('del-2'))).status, 201);
    assert.equal(reviews().length, 0, 'CREATE is not in the rules');
    const denied = await request(s.url, 'DELETE', `${CMS}/del-1`);
    assert.equal(denied.status, 403, denied.text);
    assert.equal(denied.json.message, 'admission webhook "del.test.plat.io" denied the request: kept');
    assert.equal((await request(s.url, 'GET', `${CMS}/del-1`)).status, 200, 'the object stays');
    const review = reviews().at(-1)!;
    assert.equal(review.operation, 'DELETE');
    assert.equal(review.name, 'del-1');
    assert.equal(review.namespace, 'wh-off');
    assert.equal(review.object, null);
    assert.equal(review.oldObject.metadata.name, 'del-1');
    assert.deepEqual(review.oldObject.data, { keep: 'y' });
    assert.deepEqual(review.options, { kind: 'DeleteOptions', apiVersion: 'meta.plat.io/v1' });
    assert.equal(review.dryRun, false);
    const deleted = await request(s.url, 'DELETE', `${CMS}/del-2`);
    assert.equal(deleted.status, 200, deleted.text);
    assert.equal(reviews().at(-1)!.oldObject.metadata.name, 'del-2');
    assert.equal(reviews().length, 2);
  } finally {
    await done();
  }
});

test('an answer without `allowed` is a denial; a non-boolean `allowed` fails the call (Fail: 500, Ignore: skipped)', async () => {
  // the whole body as the webhook sends it: the helper adds nothing (no default allowed: true)
  let answer: (uid: string) => Record<string, unknown> = (uid) => ({ uid });
  wh.answers.set('/raw', (review) => ({
    body: { apiVersion: review.apiVersion, kind: 'AdmissionReview', response: answer(review.request.uid) },
  }));
  const raw = (name: string, failurePolicy: string) =>
    webhook(name, `${wh.base}/raw`, wh.caBundle, {
      failurePolicy,
      namespaceSelector: { matchLabels: { admission: 'on' } },
    });
  const cms = '/api/v1/namespaces/wh-on/configmaps';
  let done = await configure('validating', 'raw', [raw('raw.test.plat.io', 'Fail')]);
  try {
    const missing = await request(s.url, 'POST', cms, cm('raw1'));
    assert.equal(missing.status, 400, missing.text);
    assert.equal(missing.json.message, 'admission webhook "raw.test.plat.io" denied the request without explanation');
    answer = (uid) => ({ uid, allowed: null });
    assert.equal((await request(s.url, 'POST', cms, cm('raw1'))).status, 400, 'null decodes as false');
    for (const [allowed, kind] of [
      ['true', 'string'],
      [1, 'number'],
      [{}, 'object'],
      [[true], 'array'],
    ] as const) {
      answer = (uid) => ({ uid, allowed });
      const bad = await request(s.url, 'POST', cms, cm('raw1'));
      assert.equal(bad.status, 500, bad.text);
      assert.equal(bad.json.reason, 'InternalError');
      assert.equal(
        bad.json.message,
        `Internal error occurred: failed calling webhook "raw.test.plat.io": failed to call webhook: json: cannot unmarshal ${kind} into Go struct field AdmissionResponse.response.allowed of type bool`,
      );
    }
    assert.equal((await request(s.url, 'GET', `${cms}/raw1`)).status, 404, 'nothing stored');
    answer = (uid) => ({ uid, allowed: true });
    assert.equal(
      (await request(s.url, 'POST', cms, cm('raw1'))).status,
      201,
      'the same webhook allows with allowed: true',
    );
  } finally {
    await done();
  }
  done = await configure('validating', 'raw-ignore', [raw('raw.test.plat.io', 'Ignore')]);
  try {
    answer = (uid) => ({ uid, allowed: 'true' });
    assert.equal((await request(s.url, 'POST', cms, cm('raw2'))).status, 201, 'a failed call under Ignore is skipped');
    answer = (uid) => ({ uid });
    const missing = await request(s.url, 'POST', cms, cm('raw3'));
    assert.equal(
      missing.status,
      400,
      'a missing allowed is an answer (a denial), not a failed call: Ignore does not apply',
    );
  } finally {
    await done();
  }
});

test('failurePolicy: a timed-out webhook fails the request (Fail) or is skipped (Ignore); an unreachable one too', async () => {
  // the webhook would answer long after the test ends: a reply can only come from the timeout
  wh.answers.set('/slow', () => ({ delayMs: 120_000 }));
  const slow = (name: string, failurePolicy: string) =>
    webhook(name, `${wh.base}/slow`, wh.caBundle, {
      failurePolicy,
      timeoutSeconds: 1,
      namespaceSelector: { matchLabels: { admission: 'on' } },
    });
  let done = await configure('validating', 'slow', [slow('slow.test.plat.io', 'Fail')]);
  try {
    const failed = await request(s.url, 'POST', '/api/v1/namespaces/wh-on/configmaps', cm('t1'));
    assert.equal(failed.status, 500, failed.text);
    assert.equal(failed.json.reason, 'InternalError');
    assert.match(
      failed.json.message,
      /^Internal error occurred: failed calling webhook "slow\.test\.plat\.io": failed to call webhook: Post "https:\/\/127\.0\.0\.1:\d+\/slow\?timeout=1s": context deadline exceeded$/,
    );
  } finally {
    await done();
  }
  done = await configure('validating', 'slow-ignore', [
    slow('slow.test.plat.io', 'Ignore'),
    webhook('gone.test.plat.io', 'https://127.0.0.1:1/gone', wh.caBundle, { failurePolicy: 'Ignore' }),
  ]);
  try {
    const ignored = await request(s.url, 'POST', '/api/v1/namespaces/wh-on/configmaps', cm('t2'));
    assert.equal(ignored.status, 201, ignored.text);
  } finally {
    await done();
  }
  done = await configure('validating', 'gone', [webhook('gone.test.plat.io', 'https://127.0.0.1:1/gone', wh.caBundle)]);
  try {
    const failed = await request(s.url, 'POST', '/api/v1/namespaces/wh-on/configmaps', cm('t3'));
    assert.equal(failed.status, 500);
    assert.match(
      failed.json.message,
      /failed calling webhook "gone\.test\.plat\.io": failed to call webhook: Post "https:\/\/127\.0\.0\.1:1\/gone\?timeout=10s": connect ECONNREFUSED/,
    );
  } finally {
    await done();
  }
});

test('reinvocation IfNeeded, v1beta1 reviews, and a webhook without the right CA', async () => {
  wh.answers.set('/first', (review) => ({
    patch: review.request.object.metadata.labels?.second
      ? [{ op: 'add', path: '/metadata/annotations', value: { first: 'again' } }]
      : [],
  }));
  wh.answers.set('/second', () => ({ patch: [{ op: 'add', path: '/metadata/labels', value: { second: 'yes' } }] }));
  const done = await configure('mutating', 'reinvoke', [
    webhook('first.test.plat.io', `${wh.base}/first`, wh.caBundle, {
      reinvocationPolicy: 'IfNeeded',
      admissionReviewVersions: ['v1beta1'],
    }),
    webhook('second.test.plat.io', `${wh.base}/second`, wh.caBundle),
  ]);
  try {
    const from = wh.reviews.length;
    const r = await request(s.url, 'POST', '/api/v1/namespaces/wh-off/configmaps', cm('r1'));
    assert.equal(r.status, 201, r.text);
    assert.deepEqual(r.json.metadata.labels, { second: 'yes' });
    assert.deepEqual(r.json.metadata.annotations, { first: 'again' });
    assert.deepEqual(
      wh.reviews.slice(from).map((x) => x.path),
      ['/first', '/second', '/first'],
    );
    assert.equal(wh.reviews[from]!.review.apiVersion, 'admission.plat.io/v1beta1');
  } finally {
    await done();
  }
  const untrusted = await configure('validating', 'untrusted', [
    webhook('untrusted.test.plat.io', `${wh.base}/x`, Buffer.from('not a pem').toString('base64')),
  ]);
  try {
    const r = await request(s.url, 'POST', '/api/v1/namespaces/wh-off/configmaps', cm('r2'));
    assert.equal(r.status, 500);
    assert.match(
      r.json.message,
      /^Internal error occurred: failed calling webhook "untrusted\.test\.plat\.io": failed to call webhook: Post/,
    );
  } finally {
    await untrusted();
  }
});

test('clientConfig.service: resolved through the Service and its Endpoints, TLS name <service>.<namespace>.svc', async () => {
  const port = Number(new URL(wh.base).port);
  assert.equal(
    (
      await request(s.url, 'POST', '/api/v1/namespaces/wh-on/services', {
        metadata: { name: 'hook' },
        spec: { ports: [{ port: 443, targetPort: port }] },
      })
    ).status,
    201,
  );
  wh.answers.set('/svc', () => ({ patch: [{ op: 'add', path: '/data/via', value: 'service' }] }));
  const config = (name: string) =>
    webhook(name, '', wh.caBundle, {
      clientConfig: { service: { namespace: 'wh-on', name: 'hook', path: '/svc' }, caBundle: wh.caBundle },
    });
  const done = await configure('mutating', 'svc', [config('svc.test.plat.io')]);
  try {
    const missing = await request(s.url, 'POST', '/api/v1/namespaces/wh-on/configmaps', cm('s1'));
    assert.equal(missing.status, 500, 'no endpoints yet');
    assert.match(
      missing.json.message,
      /failed calling webhook "svc\.test\.plat\.io": endpoints for service\/hook in "wh-on" have no addresses/,
    );
    assert.equal(
      (
        await request(s.url, 'POST', '/api/v1/namespaces/wh-on/endpoints', {
          metadata: { name: 'hook' },
          subsets: [{ addresses: [{ ip: '127.0.0.1' }], ports: [{ port }] }],
        })
      ).status,
      201,
    );
    const r = await request(s.url, 'POST', '/api/v1/namespaces/wh-on/configmaps', cm('s2'));
    assert.equal(r.status, 201, r.text);
    assert.equal(r.json.data.via, 'service');
  } finally {
    await done();
  }
});

test('matchPolicy Equivalent: a v2 rule sees a v1 request converted to v2; the patch comes back to v1; Exact skips it', async () => {
  wh.answers.set('/hpa', () => ({ patch: [{ op: 'add', path: '/spec/maxReplicas', value: 9 }] }));
  const rules = [
    {
      operations: ['CREATE'],
      apiGroups: ['autoscaling'],
      apiVersions: ['v2'],
      resources: ['horizontalpodautoscalers'],
    },
  ];
  const done = await configure('mutating', 'hpa', [
    webhook('hpa.test.plat.io', `${wh.base}/hpa`, wh.caBundle, { rules }),
    webhook('exact.test.plat.io', `${wh.base}/exact`, wh.caBundle, { rules, matchPolicy: 'Exact' }),
  ]);
  try {
    const from = wh.reviews.length;
    const hpa = {
      apiVersion: 'autoscaling/v1',
      kind: 'HorizontalPodAutoscaler',
      metadata: { name: 'h1' },
      spec: {
        scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' },
        maxReplicas: 3,
        targetCPUUtilizationPercentage: 60,
      },
    };
    const r = await request(s.url, 'POST', '/apis/autoscaling/v1/namespaces/wh-off/horizontalpodautoscalers', hpa);
    assert.equal(r.status, 201, r.text);
    assert.equal(r.json.apiVersion, 'autoscaling/v1');
    assert.equal(r.json.spec.maxReplicas, 9, 'the v2 patch applied to the v1 object');
    assert.equal(r.json.spec.targetCPUUtilizationPercentage, 60);
    const calls = wh.reviews.slice(from);
    assert.deepEqual(
      calls.map((c) => c.path),
      ['/hpa'],
      'Exact does not match v1',
    );
    const req = calls[0]!.review.request;
    assert.deepEqual(req.kind, { group: 'autoscaling', version: 'v2', kind: 'HorizontalPodAutoscaler' });
    assert.deepEqual(req.requestKind, { group: 'autoscaling', version: 'v1', kind: 'HorizontalPodAutoscaler' });
    assert.deepEqual(req.resource.version, 'v2');
    assert.equal(req.object.apiVersion, 'autoscaling/v2');
    assert.equal(req.object.spec.metrics[0].resource.target.averageUtilization, 60);
  } finally {
    await done();
  }
});
