/** Audit policy: upstream's rule matching as a scenario table, and validation messages. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { evaluate, parsePolicy, type AuditAttributes, type Policy } from '../../src/audit/policy.js';

const fail = (p: string): never => {
  throw new Error(p);
};
const policy = (doc: object): Policy =>
  parsePolicy({ apiVersion: 'audit.plat.io/v1', kind: 'Policy', ...doc }, 'plat.io', fail);
const req = (over: Partial<AuditAttributes>): AuditAttributes => ({
  user: { username: 'alice', groups: ['dev', 'system:authenticated'] },
  verb: 'get',
  isResourceRequest: true,
  path: '/api/v1/namespaces/ns/pods/p',
  apiGroup: '',
  namespace: 'ns',
  resource: 'pods',
  subresource: '',
  name: 'p',
  ...over,
});
const nonResource = (path: string): Partial<AuditAttributes> => ({
  isResourceRequest: false,
  path,
  resource: '',
  namespace: '',
  name: '',
  apiGroup: '',
});

test('rules match as upstream: first match wins, None when nothing matches', () => {
  const cases: [string, object, Partial<AuditAttributes>, string][] = [
    ['users', { users: ['alice'] }, {}, 'Metadata'],
    ['users other', { users: ['bob'] }, {}, 'None'],
    ['userGroups any', { userGroups: ['ops', 'dev'] }, {}, 'Metadata'],
    ['verbs', { verbs: ['list', 'watch'] }, {}, 'None'],
    ['group and resource', { resources: [{ group: '', resources: ['pods'] }] }, {}, 'Metadata'],
    ['other group', { resources: [{ group: 'apps', resources: ['pods'] }] }, {}, 'None'],
    ['group without resources: all of it', { resources: [{ group: '' }] }, {}, 'Metadata'],
    [
      'subresource needs its own entry',
      { resources: [{ group: '', resources: ['pods'] }] },
      { subresource: 'log' },
      'None',
    ],
    [
      'resource/subresource',
      { resources: [{ group: '', resources: ['pods/log'] }] },
      { subresource: 'log' },
      'Metadata',
    ],
    [
      '*/subresource',
      { resources: [{ group: '', resources: ['*/status'] }] },
      { resource: 'nodes', subresource: 'status' },
      'Metadata',
    ],
    ['resource/*', { resources: [{ group: '', resources: ['pods/*'] }] }, { subresource: 'exec' }, 'Metadata'],
    ['*', { resources: [{ group: '', resources: ['*'] }] }, { resource: 'secrets' }, 'Metadata'],
    ['resourceNames', { resources: [{ group: '', resources: ['pods'], resourceNames: ['q'] }] }, {}, 'None'],
    ['resourceNames match', { resources: [{ group: '', resources: ['pods'], resourceNames: ['p'] }] }, {}, 'Metadata'],
    ['namespaces', { namespaces: ['ns'] }, {}, 'Metadata'],
    ['namespaces: "" is cluster scope', { namespaces: [''] }, { namespace: '' }, 'Metadata'],
    ['namespaces other', { namespaces: ['kube'] }, {}, 'None'],
    ['resource rule never matches a non-resource request', { namespaces: ['ns'] }, nonResource('/healthz'), 'None'],
    ['nonResourceURLs exact', { nonResourceURLs: ['/healthz'] }, nonResource('/healthz'), 'Metadata'],
    ['nonResourceURLs prefix*', { nonResourceURLs: ['/healthz*'] }, nonResource('/healthz/etcd'), 'Metadata'],
    ['nonResourceURLs on a resource request', { nonResourceURLs: ['*'] }, {}, 'None'],
    ['empty rule matches everything', {}, nonResource('/version'), 'Metadata'],
  ];
  for (const [name, rule, attrs, want] of cases) {
    const p = policy({ rules: [{ level: 'Metadata', ...rule }] });
    assert.equal(evaluate(p, req(attrs)).level, want, name);
  }
  const ordered = policy({ rules: [{ level: 'None', users: ['alice'] }, { level: 'RequestResponse' }] });
  assert.equal(evaluate(ordered, req({})).level, 'None');
  assert.equal(evaluate(ordered, req({ user: { username: 'bob', groups: [] } })).level, 'RequestResponse');
});

test("omitStages: the policy's and the rule's together; omitManagedFields: the rule overrides the policy", () => {
  const p = policy({
    omitStages: ['RequestReceived'],
    omitManagedFields: true,
    rules: [
      { level: 'Request', verbs: ['get'], omitStages: ['ResponseStarted'], omitManagedFields: false },
      { level: 'Request' },
    ],
  });
  const get = evaluate(p, req({}));
  assert.deepEqual([...get.omitStages].sort(), ['RequestReceived', 'ResponseStarted']);
  assert.equal(get.omitManagedFields, false);
  const list = evaluate(p, req({ verb: 'list' }));
  assert.deepEqual([...list.omitStages], ['RequestReceived']);
  assert.equal(list.omitManagedFields, true);
});

test('invalid policies are refused with field paths', () => {
  assert.throws(() => policy({ rules: [{ users: ['a'] }] }), { message: 'rules[0].level: Required value' });
  assert.throws(() => policy({ rules: [{ level: 'Everything' }] }), {
    message:
      'rules[0].level: Unsupported value: "Everything": supported values: "None", "Metadata", "Request", "RequestResponse"',
  });
  assert.throws(() => policy({ omitStages: ['Later'], rules: [] }), /omitStages\[0\]: Unsupported value: "Later"/);
  assert.throws(
    () => policy({ rules: [{ level: 'None', resources: [{ group: '' }], nonResourceURLs: ['/x'] }] }),
    /rules cannot apply to both regular resources and non-resource URLs/,
  );
  assert.throws(
    () => policy({ rules: [{ level: 'None', nonResourceURLs: ['healthz'] }] }),
    /non-resource URL rules must begin with a '\/' character/,
  );
  assert.throws(
    () => parsePolicy({ apiVersion: 'audit.k8s.io/v1', kind: 'Policy' }, 'plat.io', fail),
    /apiVersion must be audit\.plat\.io\/v1 and kind Policy/,
  );
});
