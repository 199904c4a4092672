import { test } from 'node:test';
import assert from 'node:assert/strict';
import { compileSchema, flowKey, orderSchemas } from '../../src/flowcontrol/matching.js';
import { apfDefaults } from '../../src/flowcontrol/defaults.js';
import { makeIdentity } from '../../src/api/identity.js';
import { parseRequestInfo } from '../../src/http/request-info.js';

const info = (method: string, path: string) => parseRequestInfo(method, path, new URLSearchParams());
const user = (username: string, ...groups: string[]) => ({ username, groups });
const schema = (name: string, precedence: number, rules: object[], distinguisher?: string) =>
  compileSchema({
    metadata: { name, uid: `uid-${name}` },
    spec: {
      matchingPrecedence: precedence,
      priorityLevelConfiguration: { name: 'pl' },
      rules,
      ...(distinguisher ? { distinguisherMethod: { type: distinguisher } } : {}),
    },
  });

test('subjects: User, Group, ServiceAccount (by name and "*"), "*" names', () => {
  const all = {
    resourceRules: [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'], clusterScope: true, namespaces: ['*'] }],
  };
  const cases: [object, ReturnType<typeof user>, boolean][] = [
    [{ kind: 'User', user: { name: 'alice' } }, user('alice'), true],
    [{ kind: 'User', user: { name: 'alice' } }, user('bob'), false],
    [{ kind: 'User', user: { name: '*' } }, user('bob'), true],
    [{ kind: 'Group', group: { name: 'devs' } }, user('bob', 'devs'), true],
    [{ kind: 'Group', group: { name: 'devs' } }, user('bob', 'ops'), false],
    [
      { kind: 'ServiceAccount', serviceAccount: { namespace: 'ns1', name: 'sa' } },
      user('system:serviceaccount:ns1:sa'),
      true,
    ],
    [
      { kind: 'ServiceAccount', serviceAccount: { namespace: 'ns1', name: 'sa' } },
      user('system:serviceaccount:ns2:sa'),
      false,
    ],
    [
      { kind: 'ServiceAccount', serviceAccount: { namespace: 'ns1', name: '*' } },
      user('system:serviceaccount:ns1:other'),
      true,
    ],
    [
      { kind: 'ServiceAccount', serviceAccount: { namespace: 'ns1', name: '*' } },
      user('system:serviceaccount:ns10:x'),
      false,
    ],
  ];
  for (const [subject, u, want] of cases) {
    const s = schema('s', 10, [{ subjects: [subject], ...all }]);
    assert.equal(s.matches(u, info('GET', '/api/v1/namespaces/default/pods')), want, JSON.stringify([subject, u]));
  }
});

test('resource rules: verbs, groups, resources with subresources, namespaces, clusterScope', () => {
  const subjects = [{ kind: 'Group', group: { name: 'system:authenticated' } }];
  const u = user('alice', 'system:authenticated');
  const s = schema('s', 10, [
    {
      subjects,
      resourceRules: [
        { verbs: ['get', 'list'], apiGroups: [''], resources: ['pods', 'pods/status'], namespaces: ['team-a'] },
        { verbs: ['*'], apiGroups: ['apps'], resources: ['*'], clusterScope: true },
      ],
    },
  ]);
  assert.equal(s.matches(u, info('GET', '/api/v1/namespaces/team-a/pods')), true);
  assert.equal(s.matches(u, info('GET', '/api/v1/namespaces/team-a/pods/p/status')), true);
  assert.equal(s.matches(u, info('GET', '/api/v1/namespaces/team-a/pods/p/log')), false);
  assert.equal(s.matches(u, info('POST', '/api/v1/namespaces/team-a/pods')), false, 'verb create not listed');
  assert.equal(s.matches(u, info('GET', '/api/v1/namespaces/team-b/pods')), false, 'other namespace');
  assert.equal(s.matches(u, info('GET', '/api/v1/pods')), false, 'all namespaces needs clusterScope');
  assert.equal(s.matches(u, info('GET', '/apis/apps/v1/deployments')), true, 'clusterScope rule');
  assert.equal(
    s.matches(u, info('GET', '/apis/apps/v1/namespaces/x/deployments')),
    false,
    'namespaced request needs namespaces',
  );
  assert.equal(s.matches(u, info('GET', '/healthz')), false, 'no non-resource rules');
});

test('non-resource rules: exact URLs, "/prefix/*" and "*"; verbs are lower-case methods', () => {
  const subjects = [{ kind: 'User', user: { name: '*' } }];
  const s = schema('s', 10, [
    { subjects, nonResourceRules: [{ verbs: ['get'], nonResourceURLs: ['/healthz', '/metrics/*'] }] },
  ]);
  const u = user('x');
  assert.equal(s.matches(u, info('GET', '/healthz')), true);
  assert.equal(s.matches(u, info('GET', '/healthz/etcd')), false);
  assert.equal(s.matches(u, info('GET', '/metrics')), true);
  assert.equal(s.matches(u, info('GET', '/metrics/slis')), true);
  assert.equal(s.matches(u, info('POST', '/healthz')), false);
  assert.equal(s.matches(u, info('GET', '/api/v1/namespaces')), false, 'resource request');
});

test('precedence order, ties by name; flows by user, by namespace, or one flow', () => {
  const any = [
    {
      subjects: [{ kind: 'User', user: { name: '*' } }],
      resourceRules: [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'], clusterScope: true, namespaces: ['*'] }],
    },
  ];
  const ordered = orderSchemas([schema('b', 500, any), schema('z', 100, any), schema('a', 500, any)]).map(
    (s) => s.name,
  );
  assert.deepEqual(ordered, ['z', 'a', 'b']);
  const i = info('GET', '/api/v1/namespaces/ns1/pods');
  assert.equal(flowKey(schema('u', 1, any, 'ByUser'), user('alice'), i), 'u\u0000alice');
  assert.equal(flowKey(schema('n', 1, any, 'ByNamespace'), user('alice'), i), 'n\u0000ns1');
  assert.equal(flowKey(schema('o', 1, any), user('alice'), i), 'o\u0000');
});

test('the default configuration classifies as upstream: masters exempt, probes exempt, nodes, service accounts, everyone else', () => {
  const d = apfDefaults(makeIdentity());
  const schemas = orderSchemas([...d.mandatory.flowSchemas, ...d.suggested.flowSchemas].map(compileSchema));
  const first = (u: ReturnType<typeof user>, method: string, path: string) =>
    schemas.find((s) => s.matches(u, info(method, path)))!.name;
  assert.equal(first(user('root', 'system:masters', 'system:authenticated'), 'GET', '/api/v1/pods'), 'exempt');
  assert.equal(first(user('system:anonymous', 'system:unauthenticated'), 'GET', '/readyz'), 'probes');
  assert.equal(
    first(user('system:node:n1', 'system:nodes', 'system:authenticated'), 'PUT', '/api/v1/nodes/n1/status'),
    'system-node-high',
  );
  assert.equal(
    first(user('system:node:n1', 'system:nodes', 'system:authenticated'), 'GET', '/api/v1/namespaces/a/secrets'),
    'system-nodes',
  );
  assert.equal(
    first(user('system:serviceaccount:a:b', 'system:serviceaccounts', 'system:authenticated'), 'GET', '/api/v1/pods'),
    'service-accounts',
  );
  assert.equal(
    first(
      user('system:serviceaccount:plat-system:x', 'system:serviceaccounts', 'system:authenticated'),
      'GET',
      '/api/v1/pods',
    ),
    'kube-system-service-accounts',
  );
  assert.equal(first(user('alice', 'system:authenticated'), 'GET', '/api/v1/pods'), 'global-default');
  assert.equal(d.apiVersion, 'flowcontrol.apiserver.plat.io/v1');
  assert.equal(d.mandatory.priorityLevels.length + d.suggested.priorityLevels.length, 8);
  assert.equal(d.mandatory.flowSchemas.length + d.suggested.flowSchemas.length, 13);
});
