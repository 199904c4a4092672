/**
 * Webhook plugins without a server process: the dry-run side-effect rule (objects stored
 * before v1's validation may carry sideEffects Unknown/Some), rule matching (subresources,
 * scope, Equivalent versions), exempt configuration kinds, and a selector that did not compile.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { makeIdentity } from '../../src/api/identity.js';
import { Registry } from '../../src/registry/registry.js';
import { ReadCache } from '../../src/actors/read-cache.js';
import { WebhookSource } from '../../src/admission/webhook/source.js';
import { ValidatingWebhookPlugin } from '../../src/admission/webhook/dispatcher.js';
import type { AdmissionAttributes } from '../../src/admission/attributes.js';
import { StatusError } from '../../src/api/status.js';
import { attributes } from './helpers.js';

const KEY = 'admissionregistration.plat.io/validatingwebhookconfigurations';

function plugin(webhooks: unknown[]): ValidatingWebhookPlugin {
  const source = new WebhookSource(makeIdentity(), new Registry(makeIdentity()), new ReadCache());
  source.load([
    {
      typeKey: KEY,
      namespace: '',
      name: 'c',
      apiVersion: 'admissionregistration.plat.io/v1',
      json: JSON.stringify({ metadata: { name: 'c' }, webhooks }),
    },
  ]);
  return new ValidatingWebhookPlugin(source);
}

const attrs = (over: Partial<AdmissionAttributes> = {}): AdmissionAttributes =>
  attributes({ object: { metadata: { name: 'x' } }, ...over });

const hook = (extra: Record<string, unknown> = {}) => ({
  name: 'h.test.plat.io',
  clientConfig: { url: 'https://127.0.0.1:1/x' },
  admissionReviewVersions: ['v1'],
  failurePolicy: 'Fail',
  timeoutSeconds: 1,
  rules: [
    {
      operations: ['*'],
      apiGroups: ['*'],
      apiVersions: ['*'],
      resources: ['configmaps', 'pods/status', '*/scale'],
      scope: '*',
    },
  ],
  ...extra,
});

test('a dry run reaching a webhook with side effects is a 400; None/NoneOnDryRun are called', async () => {
  for (const sideEffects of ['Unknown', 'Some']) {
    const p = plugin([hook({ sideEffects })]);
    await assert.rejects(
      async () => p.validate(attrs({ dryRun: true })),
      (e: unknown) => {
        assert.ok(e instanceof StatusError);
        assert.equal(e.status.code, 400);
        assert.equal(e.status.message, 'admission webhook "h.test.plat.io" does not support dry run');
        return true;
      },
    );
  }
  const p = plugin([hook({ sideEffects: 'NoneOnDryRun' })]);
  await assert.rejects(
    async () => p.validate(attrs({ dryRun: true })),
    (e: unknown) => (e as StatusError).status.code === 500,
    'called (and unreachable)',
  );
});

test('rules: subresources, scope, Equivalent versions, exempt kinds; a broken selector selects nothing', () => {
  const p = plugin([hook({ sideEffects: 'None' })]);
  assert.ok(p.handles(attrs()));
  assert.ok(!p.handles(attrs({ resource: 'pods' })), 'pods without subresource');
  assert.ok(p.handles(attrs({ resource: 'pods', subresource: 'status' })));
  assert.ok(p.handles(attrs({ group: 'apps', resource: 'deployments', subresource: 'scale' })));
  assert.ok(!p.handles(attrs({ subresource: 'status' })), 'configmaps/status not listed');
  const scoped = plugin([
    hook({
      sideEffects: 'None',
      rules: [
        { operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['configmaps'], scope: 'Cluster' },
      ],
    }),
  ]);
  assert.ok(!scoped.handles(attrs({ namespaced: true })));
  assert.ok(!scoped.handles(attrs({ operation: 'DELETE' })));
  const v2 = {
    operations: ['CREATE'],
    apiGroups: ['autoscaling'],
    apiVersions: ['v2'],
    resources: ['horizontalpodautoscalers'],
  };
  const hpa = attrs({ group: 'autoscaling', version: 'v1', resource: 'horizontalpodautoscalers', namespaced: true });
  assert.ok(
    plugin([hook({ sideEffects: 'None', rules: [v2] })]).handles(hpa),
    'Equivalent (default) matches another version',
  );
  assert.ok(!plugin([hook({ sideEffects: 'None', rules: [v2], matchPolicy: 'Exact' })]).handles(hpa));
  const all = plugin([
    hook({
      sideEffects: 'None',
      rules: [{ operations: ['*'], apiGroups: ['*'], apiVersions: ['*'], resources: ['*'] }],
    }),
  ]);
  assert.ok(
    !all.handles(attrs({ group: 'admissionregistration.plat.io', resource: 'validatingwebhookconfigurations' })),
    'exempt',
  );
  const anySub = plugin([
    hook({
      sideEffects: 'None',
      rules: [{ operations: ['*'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods/*'] }],
    }),
  ]);
  assert.ok(
    anySub.handles(attrs({ resource: 'pods', subresource: 'status' })),
    'pods/* matches every subresource of pods',
  );
  assert.ok(anySub.handles(attrs({ resource: 'pods', subresource: 'ephemeralcontainers' })));
  assert.ok(anySub.handles(attrs({ resource: 'pods' })), "as upstream's matcher: a * subresource also matches none");
  assert.ok(!anySub.handles(attrs({ resource: 'services', subresource: 'status' })), 'nor another resource');
  const broken = plugin([
    hook({ sideEffects: 'None', objectSelector: { matchExpressions: [{ key: 'a', operator: 'Bogus' }] } }),
  ]);
  return broken.validate(attrs());
});
