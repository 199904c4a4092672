/** ValidatingAdmissionPolicy (CEL, no params): Deny, Warn and Audit actions, messages, selectors, failurePolicy. */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, request, type TestServer } from '../helpers/server.js';

const AR = '/apis/admissionregistration.plat.io/v1';
let s: TestServer;
before(async () => {
  s = await startServer(['--disable-admission-plugins', 'ServiceAccount']);
});
after(async () => {
  await s.stop();
  s.cleanup();
});

async function create(path: string, body: unknown): Promise<void> {
  const r = await request(s.url, 'POST', path, body);
  assert.equal(r.status, 201, r.text);
}

const deployment = (name: string, replicas: number, labels: Record<string, string> = {}) => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name, labels },
  spec: {
    replicas,
    selector: { matchLabels: { app: name } },
    template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'c', image: 'x' }] } },
  },
});

test('Deny with message, messageExpression and reason; objectSelector, matchConditions; Warn; failurePolicy', async () => {
  await create(`${AR}/validatingadmissionpolicies`, {
    metadata: { name: 'replicas' },
    spec: {
      failurePolicy: 'Fail',
      matchConstraints: {
        resourceRules: [
          { apiGroups: ['apps'], apiVersions: ['v1'], operations: ['CREATE', 'UPDATE'], resources: ['deployments'] },
        ],
      },
      matchConditions: [
        { name: 'not-exempt', expression: '!has(object.metadata.labels) || !("exempt" in object.metadata.labels)' },
      ],
      variables: [{ name: 'limit', expression: '5' }],
      validations: [
        {
          expression: 'object.spec.replicas <= variables.limit',
          messageExpression: '"replicas must be at most 5, got " + string(object.spec.replicas)',
          reason: 'Forbidden',
        },
        { expression: 'object.metadata.name != "forbidden-name"' },
      ],
    },
  });
  await create(`${AR}/validatingadmissionpolicybindings`, {
    metadata: { name: 'replicas-deny' },
    spec: { policyName: 'replicas', validationActions: ['Deny'] },
  });
  const D = '/apis/apps/v1/namespaces/default/deployments';
  const many = await request(s.url, 'POST', D, deployment('d1', 7));
  assert.equal(many.status, 403);
  assert.equal(many.json.reason, 'Forbidden');
  assert.equal(
    many.json.message,
    "ValidatingAdmissionPolicy 'replicas' with binding 'replicas-deny' denied request: replicas must be at most 5, got 7",
  );
  const named = await request(s.url, 'POST', D, deployment('forbidden-name', 1));
  assert.equal(named.status, 422);
  assert.equal(named.json.reason, 'Invalid');
  assert.equal(
    named.json.message,
    "ValidatingAdmissionPolicy 'replicas' with binding 'replicas-deny' denied request: failed expression: object.metadata.name != \"forbidden-name\"",
  );
  assert.equal(
    (await request(s.url, 'POST', D, deployment('d2', 7, { exempt: 'yes' }))).status,
    201,
    'matchCondition false',
  );
  assert.equal((await request(s.url, 'POST', D, deployment('d3', 3))).status, 201);
  const scale = await request(
    s.url,
    'PATCH',
    `${D}/d3`,
    { spec: { replicas: 9 } },
    { 'content-type': 'application/merge-patch+json' },
  );
  assert.equal(scale.status, 403, 'updates too');

  await create(`${AR}/validatingadmissionpolicies`, {
    metadata: { name: 'labels' },
    spec: {
      matchConstraints: {
        resourceRules: [{ apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE'], resources: ['configmaps'] }],
      },
      validations: [{ expression: 'has(object.metadata.labels)', message: 'labels are required' }],
    },
  });
  await create(`${AR}/validatingadmissionpolicybindings`, {
    metadata: { name: 'labels-warn' },
    spec: { policyName: 'labels', validationActions: ['Warn', 'Audit'] },
  });
  const warned = await request(s.url, 'POST', '/api/v1/namespaces/default/configmaps', {
    metadata: { name: 'vap-c1' },
  });
  assert.equal(warned.status, 201);
  assert.match(
    warned.headers.get('warning') ?? '',
    /Validation failed for ValidatingAdmissionPolicy 'labels' with binding 'labels-warn': labels are required/,
  );

  await create(`${AR}/validatingadmissionpolicies`, {
    metadata: { name: 'broken' },
    spec: {
      failurePolicy: 'Ignore',
      matchConstraints: {
        resourceRules: [{ apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE'], resources: ['secrets'] }],
      },
      validations: [{ expression: 'object.nope.deeper == 1' }],
    },
  });
  await create(`${AR}/validatingadmissionpolicybindings`, {
    metadata: { name: 'broken' },
    spec: { policyName: 'broken', validationActions: ['Deny'] },
  });
  assert.equal(
    (await request(s.url, 'POST', '/api/v1/namespaces/default/secrets', { metadata: { name: 'vap-s1' } })).status,
    201,
    'Ignore',
  );
  assert.equal(
    (
      await request(
        s.url,
        'PATCH',
        `${AR}/validatingadmissionpolicies/broken`,
        { spec: { failurePolicy: 'Fail' } },
        { 'content-type': 'application/merge-patch+json' },
      )
    ).status,
    200,
  );
  const failed = await request(s.url, 'POST', '/api/v1/namespaces/default/secrets', { metadata: { name: 'vap-s2' } });
  assert.equal(failed.status, 422);
  assert.match(
    failed.json.message,
    /^ValidatingAdmissionPolicy 'broken' with binding 'broken' denied request: expression 'object\.nope\.deeper == 1' resulted in error: /,
  );
});
