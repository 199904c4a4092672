/**
 * The RBAC authorizer over an index fed like the server feeds it (start objects, then change
 * events): rule matching, subjects, role references, aggregation, reasons, rules per namespace.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { makeIdentity } from '../../src/api/identity.js';
import { RbacIndex } from '../../src/auth/authz/rbac-index.js';
import { RbacAuthorizer } from '../../src/auth/authz/rbac.js';
import { ruleAllows, type PolicyRule } from '../../src/auth/authz/rbac-rules.js';
import type { Attributes } from '../../src/auth/authz/attributes.js';
import type { UserInfo } from '../../src/api/user.js';
import { bindingTo, event, role } from './helpers.js';

const G = 'rbac.authorization.plat.io';
const user = (name: string) => ({ kind: 'User', apiGroup: G, name });
const group = (name: string) => ({ kind: 'Group', apiGroup: G, name });

function setup() {
  const index = new RbacIndex(makeIdentity());
  index.load([]);
  const rbac = new RbacAuthorizer(index);
  const put = (resource: string, obj: any) => index.apply([event('ADDED', resource, obj)]);
  const del = (resource: string, obj: any) => index.apply([event('DELETED', resource, obj)]);
  return { index, rbac, put, del };
}

function res(u: UserInfo, verb: string, resource: string, o: Partial<Attributes> = {}): Attributes {
  return { user: u, verb, apiGroup: '', resource, resourceRequest: true, path: '', ...o };
}
const bob: UserInfo = { username: 'bob', groups: ['dev', 'system:authenticated'] };

test('rule matching: verbs, groups, resources with subresources and *, names, URLs with a trailing *', () => {
  const a = (o: Partial<Attributes>) => res(bob, 'get', 'pods', o);
  const r = (o: PolicyRule) => o;
  assert.ok(ruleAllows(a({}), r({ verbs: ['get'], apiGroups: [''], resources: ['pods'] })));
  assert.ok(!ruleAllows(a({ verb: 'list' }), r({ verbs: ['get'], apiGroups: [''], resources: ['pods'] })));
  assert.ok(ruleAllows(a({ verb: 'list' }), r({ verbs: ['*'], apiGroups: [''], resources: ['pods'] })));
  assert.ok(!ruleAllows(a({ apiGroup: 'apps' }), r({ verbs: ['get'], apiGroups: [''], resources: ['pods'] })));
  assert.ok(ruleAllows(a({ apiGroup: 'apps' }), r({ verbs: ['get'], apiGroups: ['*'], resources: ['pods'] })));
  assert.ok(
    !ruleAllows(a({ subresource: 'log' }), r({ verbs: ['get'], apiGroups: [''], resources: ['pods'] })),
    'a resource does not grant its subresources',
  );
  assert.ok(ruleAllows(a({ subresource: 'log' }), r({ verbs: ['get'], apiGroups: [''], resources: ['pods/log'] })));
  assert.ok(ruleAllows(a({ subresource: 'status' }), r({ verbs: ['get'], apiGroups: [''], resources: ['*/status'] })));
  assert.ok(!ruleAllows(a({}), r({ verbs: ['get'], apiGroups: [''], resources: ['*/status'] })));
  assert.ok(ruleAllows(a({ subresource: 'log' }), r({ verbs: ['get'], apiGroups: [''], resources: ['*'] })));
  assert.ok(
    ruleAllows(a({ name: 'p1' }), r({ verbs: ['get'], apiGroups: [''], resources: ['pods'], resourceNames: ['p1'] })),
  );
  assert.ok(
    !ruleAllows(a({ name: 'p2' }), r({ verbs: ['get'], apiGroups: [''], resources: ['pods'], resourceNames: ['p1'] })),
  );
  assert.ok(
    !ruleAllows(
      a({ verb: 'list' }),
      r({ verbs: ['list'], apiGroups: [''], resources: ['pods'], resourceNames: ['p1'] }),
    ),
    'a list has no name',
  );
  const url = (path: string, verb = 'get') => ({
    user: bob,
    verb,
    path,
    resourceRequest: false,
    apiGroup: '',
    resource: '',
  });
  assert.ok(ruleAllows(url('/healthz'), r({ verbs: ['get'], nonResourceURLs: ['/healthz'] })));
  assert.ok(!ruleAllows(url('/healthz/etcd'), r({ verbs: ['get'], nonResourceURLs: ['/healthz'] })));
  assert.ok(ruleAllows(url('/healthz/etcd'), r({ verbs: ['get'], nonResourceURLs: ['/healthz/*'] })));
  assert.ok(ruleAllows(url('/apis/apps/v1'), r({ verbs: ['get'], nonResourceURLs: ['/apis*'] })));
  assert.ok(ruleAllows(url('/anything', 'post'), r({ verbs: ['*'], nonResourceURLs: ['*'] })));
  assert.ok(!ruleAllows(url('/healthz', 'post'), r({ verbs: ['get'], nonResourceURLs: ['*'] })));
  assert.ok(!ruleAllows(a({}), r({ verbs: ['get'], nonResourceURLs: ['*'] })), 'URL rules never grant resources');
  assert.ok(
    !ruleAllows(url('/api'), r({ verbs: ['get'], apiGroups: ['*'], resources: ['*'] })),
    'resource rules never grant URLs',
  );
});

test('subjects: users, groups, service accounts with namespace defaulting in RoleBindings', () => {
  const { rbac, put } = setup();
  put('clusterroles', role('reader', [{ verbs: ['get'], apiGroups: [''], resources: ['pods'] }]));
  put('rolebindings', bindingTo('b1', 'ClusterRole', 'reader', [{ kind: 'ServiceAccount', name: 'bot' }], 'ns1'));
  put('rolebindings', bindingTo('b2', 'ClusterRole', 'reader', [group('dev')], 'ns2'));
  put(
    'clusterrolebindings',
    bindingTo('c1', 'ClusterRole', 'reader', [{ kind: 'ServiceAccount', name: 'bot', namespace: 'ns3' }]),
  );
  put('clusterrolebindings', bindingTo('c2', 'ClusterRole', 'reader', [{ kind: 'ServiceAccount', name: 'nons' }]));
  const sa = (ns: string, name: string): UserInfo => ({
    username: `system:serviceaccount:${ns}:${name}`,
    groups: ['system:serviceaccounts'],
  });
  const can = (u: UserInfo, ns: string) => rbac.authorize(res(u, 'get', 'pods', { namespace: ns })).decision;
  assert.equal(can(sa('ns1', 'bot'), 'ns1'), 'allow', 'SA subject without namespace is in the binding namespace');
  assert.equal(can(sa('ns2', 'bot'), 'ns1'), 'noOpinion');
  assert.equal(can(bob, 'ns2'), 'allow', 'group subject');
  assert.equal(can({ username: 'dev', groups: [] }, 'ns2'), 'noOpinion', 'a group name is not a user name');
  assert.equal(can(sa('ns3', 'bot'), 'anywhere'), 'allow', 'ClusterRoleBinding grants in every namespace');
  assert.equal(can(sa('ns3', 'bot'), ''), 'allow', 'and at the cluster scope');
  assert.equal(
    can(sa('', 'nons'), 'x'),
    'noOpinion',
    'a ClusterRoleBinding SA subject without namespace matches nobody',
  );
  put('clusterrolebindings', bindingTo('c3', 'ClusterRole', 'reader', [user('Bob')]));
  assert.equal(can(bob, 'ns9'), 'noOpinion', 'names are case-sensitive');
});

test('role references: Roles only in their namespace, ClusterRoles via RoleBindings only there; missing roles are the reason', () => {
  const { rbac, put, del } = setup();
  put('roles', role('r', [{ verbs: ['list'], apiGroups: [''], resources: ['configmaps'] }], 'ns1'));
  put('rolebindings', bindingTo('b', 'Role', 'r', [user('bob')], 'ns1'));
  put('rolebindings', bindingTo('b', 'Role', 'r', [user('bob')], 'ns2'));
  const list = (ns: string) => rbac.authorize(res(bob, 'list', 'configmaps', { namespace: ns }));
  assert.deepEqual(list('ns1'), {
    decision: 'allow',
    reason: 'RBAC: allowed by RoleBinding "b/ns1" of Role "r" to User "bob"',
  });
  assert.deepEqual(list('ns2'), { decision: 'noOpinion', reason: `RBAC: role.${G} "r" not found` });
  assert.deepEqual(
    rbac.authorize(res(bob, 'list', 'configmaps')),
    { decision: 'noOpinion', reason: '' },
    'RoleBindings never grant at the cluster scope',
  );
  put('clusterrolebindings', bindingTo('gone', 'ClusterRole', 'nope', [group('system:authenticated')]));
  assert.equal(list('ns3').reason, `RBAC: clusterrole.${G} "nope" not found`);
  assert.equal(list('ns2').reason, `RBAC: [clusterrole.${G} "nope" not found, role.${G} "r" not found]`);
  del('roles', role('r', [], 'ns1'));
  assert.equal(list('ns1').decision, 'noOpinion', 'a deleted role stops granting at once');
});

test('aggregation: a ClusterRole with aggregationRule has the rules of the roles its selectors match, now', () => {
  const { rbac, put, del } = setup();
  const agg = (to: string) => ({
    aggregationRule: { clusterRoleSelectors: [{ matchLabels: { [`${G}/aggregate-to-${to}`]: 'true' } }] },
  });
  const labels = (to: string) => ({ [`${G}/aggregate-to-${to}`]: 'true' });
  put(
    'clusterroles',
    role('view', [{ verbs: ['delete'], apiGroups: ['*'], resources: ['*'] }], undefined, agg('view')),
  );
  put('clusterroles', {
    ...role('edit', [], undefined, agg('edit')),
    metadata: { name: 'edit', labels: labels('admin') },
  });
  put('clusterroles', {
    metadata: { name: 'to-view', labels: labels('view') },
    rules: [{ verbs: ['get'], apiGroups: [''], resources: ['pods'] }],
  });
  put('rolebindings', bindingTo('b', 'ClusterRole', 'view', [user('bob')], 'ns1'));
  put('rolebindings', bindingTo('e', 'ClusterRole', 'edit', [user('bob')], 'ns2'));
  const can = (verb: string, resource: string, ns: string) =>
    rbac.authorize(res(bob, verb, resource, { namespace: ns })).decision;
  assert.equal(can('get', 'pods', 'ns1'), 'allow');
  assert.equal(
    can('delete', 'pods', 'ns1'),
    'noOpinion',
    "the aggregated role's own rules are replaced by the aggregation",
  );
  assert.equal(can('get', 'pods', 'ns2'), 'noOpinion');
  put('clusterroles', { metadata: { name: 'view', labels: labels('edit') }, ...agg('view') });
  assert.equal(can('get', 'pods', 'ns2'), 'allow', 'edit aggregates view, which aggregates to-view');
  put('clusterroles', {
    metadata: { name: 'more', labels: labels('view') },
    rules: [{ verbs: ['list'], apiGroups: ['apps'], resources: ['deployments'] }],
  });
  assert.equal(
    rbac.authorize(res(bob, 'list', 'deployments', { namespace: 'ns1', apiGroup: 'apps' })).decision,
    'allow',
    'a new matching role adds its rules',
  );
  assert.equal(
    rbac.authorize(res(bob, 'list', 'deployments', { namespace: 'ns2', apiGroup: 'apps' })).decision,
    'allow',
    'also through edit',
  );
  del('clusterroles', { metadata: { name: 'more' } });
  assert.equal(
    rbac.authorize(res(bob, 'list', 'deployments', { namespace: 'ns1', apiGroup: 'apps' })).decision,
    'noOpinion',
    'and loses them when it goes',
  );
  put('clusterroles', { metadata: { name: 'x', labels: labels('y') }, ...agg('x') });
  put('clusterroles', { metadata: { name: 'y', labels: { ...labels('x'), ...labels('view') } }, ...agg('y') });
  assert.equal(can('get', 'pods', 'ns1'), 'allow', 'a cycle of aggregations (view > y > x > y) terminates');
});

test('rulesFor: cluster-wide and namespace rules split into resource and non-resource rules', () => {
  const { rbac, put } = setup();
  put('clusterroles', role('urls', [{ verbs: ['get'], nonResourceURLs: ['/healthz'] }]));
  put('clusterroles', role('pods', [{ verbs: ['get', 'list'], apiGroups: [''], resources: ['pods'] }]));
  put('clusterrolebindings', bindingTo('u', 'ClusterRole', 'urls', [group('system:authenticated')]));
  put('rolebindings', bindingTo('p', 'ClusterRole', 'pods', [user('bob')], 'ns1'));
  const ns1 = rbac.rulesFor(bob, 'ns1');
  assert.deepEqual(ns1.resourceRules, [{ verbs: ['get', 'list'], apiGroups: [''], resources: ['pods'] }]);
  assert.deepEqual(ns1.nonResourceRules, [{ verbs: ['get'], nonResourceURLs: ['/healthz'] }]);
  assert.equal(ns1.incomplete, false);
  assert.deepEqual(rbac.rulesFor(bob, 'ns2').resourceRules, []);
});

test('the same user object is answered from a cache that any RBAC change invalidates', () => {
  const { index, rbac, put } = setup();
  const get = () => rbac.authorize(res(bob, 'get', 'secrets', { namespace: 'a' })).decision;
  assert.equal(get(), 'noOpinion');
  const gen = index.generation;
  index.apply([{ ...event('ADDED', 'x', { metadata: { name: 'n' } }), typeKey: '/configmaps' }]);
  assert.equal(index.generation, gen, 'other types do not invalidate');
  put('clusterroles', role('s', [{ verbs: ['get'], apiGroups: [''], resources: ['secrets'] }]));
  put('clusterrolebindings', bindingTo('s', 'ClusterRole', 's', [user('bob')]));
  assert.equal(get(), 'allow');
});
