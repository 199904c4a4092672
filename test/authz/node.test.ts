/**
 * The Node authorizer and NodeRestriction: pod references in the graph, the graph kept current
 * from change events, and two nodes isolated from each other in the real server (secrets,
 * config maps, claims, volumes, Node objects, pods, leases), with NodeRestriction's refusals.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import type { ChangeEvent } from '../../src/actors/protocol.js';
import { makeIdentity } from '../../src/api/identity.js';
import type { Attributes } from '../../src/auth/authz/attributes.js';
import { NodeGraph, podReferences } from '../../src/auth/authz/node-graph.js';
import { NodeAuthorizer, nodeIdentity } from '../../src/auth/authz/node.js';
import { parseArgs } from '../../src/server/options.js';
import { fieldRequirements, labelRequirements, reviewRequirements } from '../../src/auth/authz/selectors.js';
import { Pki, request, startAuthServer, type AuthServer, type TlsClient } from '../auth/helpers.js';
import { request as plain } from '../helpers/server.js';

const podSpec = (
  nodeName: string,
  refs: { secret?: string; configMap?: string; claim?: string; sa?: string } = {},
) => ({
  nodeName,
  ...(refs.sa ? { serviceAccountName: refs.sa } : {}),
  containers: [
    {
      name: 'c',
      image: 'nginx',
      env: refs.secret ? [{ name: 'S', valueFrom: { secretKeyRef: { name: refs.secret, key: 'k' } } }] : [],
      envFrom: refs.configMap ? [{ configMapRef: { name: refs.configMap } }] : [],
    },
  ],
  volumes: refs.claim ? [{ name: 'data', persistentVolumeClaim: { claimName: refs.claim } }] : [],
});
const podObj = (ns: string, name: string, spec: object) => ({ metadata: { name, namespace: ns }, spec });

let rv = 1;
function podEvent(type: ChangeEvent['type'], pod: any): ChangeEvent {
  return {
    typeKey: '/pods',
    type,
    rv: rv++,
    namespace: pod.metadata.namespace,
    name: pod.metadata.name,
    json: JSON.stringify(pod),
    labels: {},
    fields: {},
    apiVersion: 'v1',
    uid: 'u',
  };
}
const n1 = { username: 'system:node:n1', groups: ['system:nodes', 'system:authenticated'] };
const n2 = { username: 'system:node:n2', groups: ['system:nodes', 'system:authenticated'] };
const res = (
  user: typeof n1,
  verb: string,
  resource: string,
  namespace: string | undefined,
  name?: string,
  extra: Partial<Attributes> = {},
): Attributes => ({
  user,
  verb,
  resource,
  apiGroup: '',
  resourceRequest: true,
  path: '',
  ...(namespace ? { namespace } : {}),
  ...(name ? { name } : {}),
  ...extra,
});

test('pod references: env, envFrom, volumes (secret, configMap, projected, csi, claims, ephemeral), image pull secrets, service account', () => {
  const refs = podReferences({
    metadata: { name: 'p', namespace: 'ns' },
    spec: {
      serviceAccountName: 'sa',
      imagePullSecrets: [{ name: 'pull' }],
      initContainers: [{ envFrom: [{ secretRef: { name: 'init-s' } }] }],
      containers: [{ env: [{ valueFrom: { configMapKeyRef: { name: 'cm-env' } } }] }],
      volumes: [
        { name: 'a', secret: { secretName: 'vol-s' } },
        { name: 'b', configMap: { name: 'vol-cm' } },
        { name: 'c', projected: { sources: [{ secret: { name: 'proj-s' } }, { configMap: { name: 'proj-cm' } }] } },
        { name: 'd', csi: { nodePublishSecretRef: { name: 'csi-s' } } },
        { name: 'e', persistentVolumeClaim: { claimName: 'claim' } },
        { name: 'f', ephemeral: { volumeClaimTemplate: {} } },
      ],
    },
  });
  const by = (k: string) =>
    refs
      .filter(([kind]) => kind === k)
      .map(([, key]) => key)
      .sort();
  assert.deepEqual(by('secrets'), ['ns/csi-s', 'ns/init-s', 'ns/proj-s', 'ns/pull', 'ns/vol-s']);
  assert.deepEqual(by('configmaps'), ['ns/cm-env', 'ns/proj-cm', 'ns/vol-cm']);
  assert.deepEqual(by('persistentvolumeclaims'), ['ns/claim', 'ns/p-f']);
  assert.deepEqual(by('serviceaccounts'), ['ns/sa']);
  assert.deepEqual(by('pods'), ['ns/p']);
});

test('identity: system:node:<name> in system:nodes; a node user without a name is refused, others ignored', () => {
  assert.equal(nodeIdentity(n1), 'n1');
  assert.equal(nodeIdentity({ username: 'system:node:n1', groups: [] }), undefined);
  assert.equal(nodeIdentity({ username: 'kubelet', groups: ['system:nodes'] }), '');
  const z = new NodeAuthorizer(new NodeGraph(), makeIdentity());
  assert.deepEqual(z.authorize(res({ username: 'kubelet', groups: ['system:nodes'] }, 'get', 'secrets', 'ns', 's')), {
    decision: 'noOpinion',
    reason: 'unknown node for user "kubelet"',
  });
  assert.deepEqual(z.authorize(res({ username: 'bob', groups: [] }, 'get', 'services', 'ns')), {
    decision: 'noOpinion',
    reason: '',
  });
  assert.deepEqual(z.rulesFor(n1), {
    resourceRules: [],
    nonResourceRules: [],
    incomplete: true,
    errors: ['node authorizer does not support user rule resolution'],
  });
  assert.deepEqual(z.rulesFor({ username: 'bob', groups: [] }), {
    resourceRules: [],
    nonResourceRules: [],
    incomplete: false,
    errors: [],
  });
});

test('graph from change events: a reference counts while a pod bound to the node holds it; rebinding and deletion update it', () => {
  const g = new NodeGraph();
  const z = new NodeAuthorizer(g, makeIdentity());
  const can = (u: typeof n1, resource: string, name: string, verb = 'get') =>
    z.authorize(res(u, verb, resource, 'ns', name)).decision;
  const a = podObj('ns', 'a', podSpec('n1', { secret: 's', configMap: 'c', claim: 'pvc' }));
  const b = podObj('ns', 'b', podSpec('n1', { secret: 's' }));
  g.apply([podEvent('ADDED', a), podEvent('ADDED', b)]);
  g.apply([
    {
      ...podEvent('ADDED', { metadata: { name: 'pvc', namespace: 'ns' }, spec: { volumeName: 'pv1' } }),
      typeKey: '/persistentvolumeclaims',
    },
  ]);
  assert.equal(can(n1, 'secrets', 's'), 'allow');
  assert.equal(can(n1, 'secrets', 's', 'list'), 'allow', 'a list named by a field selector');
  assert.equal(can(n1, 'secrets', 's', 'update'), 'noOpinion');
  assert.equal(can(n2, 'secrets', 's'), 'noOpinion');
  assert.equal(
    z.authorize(res(n1, 'get', 'persistentvolumes', undefined, 'pv1')).decision,
    'allow',
    "the claim's volume",
  );
  assert.equal(z.authorize(res(n2, 'get', 'persistentvolumes', undefined, 'pv1')).decision, 'noOpinion');
  g.apply([podEvent('DELETED', a)]);
  assert.equal(can(n1, 'secrets', 's'), 'allow', 'still held by b');
  assert.equal(can(n1, 'configmaps', 'c'), 'noOpinion');
  assert.equal(z.authorize(res(n1, 'get', 'persistentvolumes', undefined, 'pv1')).decision, 'noOpinion');
  g.apply([podEvent('MODIFIED', podObj('ns', 'b', podSpec('n2', { secret: 's' })))]);
  assert.equal(can(n1, 'secrets', 's'), 'noOpinion', 'b moved');
  assert.equal(can(n2, 'secrets', 's'), 'allow');
  assert.deepEqual(z.authorize(res(n1, 'get', 'secrets', 'ns', 's')), {
    decision: 'noOpinion',
    reason: "no relationship found between node 'n1' and this object",
  });
  assert.deepEqual(z.authorize(res(n1, 'list', 'secrets', 'ns')), {
    decision: 'noOpinion',
    reason: 'No Object name found',
  });
  assert.deepEqual(z.authorize(res(n1, 'get', 'secrets', 'ns', 's', { subresource: 'x' })), {
    decision: 'noOpinion',
    reason: 'cannot read subresource',
  });
});

test('selectors (default on): own Node, pods by spec.nodeName; off: the static node rules', () => {
  const g = new NodeGraph();
  g.apply([podEvent('ADDED', podObj('ns', 'a', podSpec('n1')))]);
  const on = new NodeAuthorizer(g, makeIdentity());
  assert.equal(on.authorize(res(n1, 'get', 'nodes', undefined, 'n1')).decision, 'allow');
  assert.equal(on.authorize(res(n1, 'get', 'nodes', undefined, 'n2')).decision, 'noOpinion');
  assert.equal(on.authorize(res(n1, 'list', 'nodes', undefined)).decision, 'noOpinion');
  assert.equal(on.authorize(res(n1, 'patch', 'nodes', undefined, 'n1', { subresource: 'status' })).decision, 'allow');
  assert.equal(
    on.authorize(res(n1, 'patch', 'nodes', undefined, 'n2', { subresource: 'status' })).decision,
    'noOpinion',
  );
  assert.equal(
    on.authorize(
      res(n1, 'list', 'pods', undefined, undefined, { fieldSelector: fieldRequirements('spec.nodeName=n1') }),
    ).decision,
    'allow',
  );
  assert.equal(
    on.authorize(
      res(n1, 'watch', 'pods', undefined, undefined, { fieldSelector: fieldRequirements('spec.nodeName=n2') }),
    ).decision,
    'noOpinion',
  );
  assert.equal(on.authorize(res(n1, 'list', 'pods', undefined)).decision, 'noOpinion');
  assert.equal(on.authorize(res(n1, 'get', 'pods', 'ns', 'a')).decision, 'allow');
  assert.equal(on.authorize(res(n2, 'get', 'pods', 'ns', 'a')).decision, 'noOpinion');
  assert.equal(on.authorize(res(n2, 'update', 'pods', 'ns', 'a', { subresource: 'status' })).decision, 'noOpinion');
  assert.equal(on.authorize(res(n1, 'create', 'events', 'ns')).decision, 'allow', 'static rules');
  assert.equal(on.authorize(res(n1, 'list', 'services', undefined)).decision, 'allow');
  assert.equal(
    on.authorize(res(n1, 'create', 'leases', 'plat-node-lease', undefined, { apiGroup: 'coordination.plat.io' }))
      .decision,
    'allow',
  );
  assert.equal(
    on.authorize(res(n1, 'update', 'leases', 'plat-node-lease', 'n2', { apiGroup: 'coordination.plat.io' })).decision,
    'noOpinion',
  );
  assert.equal(
    on.authorize(res(n1, 'get', 'leases', 'default', 'n1', { apiGroup: 'coordination.plat.io' })).reason,
    'can only access leases in the "plat-node-lease" system namespace',
  );
  const off = new NodeAuthorizer(g, makeIdentity(), false);
  assert.equal(off.authorize(res(n1, 'list', 'nodes', undefined)).decision, 'allow');
  assert.equal(off.authorize(res(n1, 'list', 'pods', undefined)).decision, 'allow');
  assert.equal(
    parseArgs(['--feature-gates', 'AuthorizeNodeWithSelectors=false']).featureGates.AuthorizeNodeWithSelectors,
    false,
  );
});

test('selector requirements: field and label selectors as the review API writes them', () => {
  assert.deepEqual(fieldRequirements('spec.nodeName=n1,status.phase!=Running'), [
    { key: 'spec.nodeName', operator: 'In', values: ['n1'] },
    { key: 'status.phase', operator: 'NotIn', values: ['Running'] },
  ]);
  assert.deepEqual(labelRequirements('a=1,b in (x,y),!c,d,e notin (z)'), [
    { key: 'a', operator: 'In', values: ['1'] },
    { key: 'b', operator: 'In', values: ['x', 'y'] },
    { key: 'c', operator: 'DoesNotExist' },
    { key: 'd', operator: 'Exists' },
    { key: 'e', operator: 'NotIn', values: ['z'] },
  ]);
  assert.deepEqual(fieldRequirements('novalue'), [], 'unparsable: nothing (selectors only narrow)');
  assert.deepEqual(
    reviewRequirements(
      {
        requirements: [
          { key: 'k', operator: 'In', values: ['v'] },
          { key: 'x', operator: 'Weird' },
        ],
      },
      'field',
    ),
    [{ key: 'k', operator: 'In', values: ['v'] }],
    'unknown operators are ignored',
  );
  assert.deepEqual(reviewRequirements({ rawSelector: 'spec.nodeName=n1' }, 'field'), [
    { key: 'spec.nodeName', operator: 'In', values: ['n1'] },
  ]);
});

describeServer();

function describeServer(): void {
  let pki: Pki;
  let s: AuthServer;
  let tls: TlsClient;
  const NS = '/api/v1/namespaces/work';
  const as = (who: 'n1' | 'n2', method: string, path: string, body?: unknown) =>
    request(s.secureUrl, tls, method, path, body, { authorization: `Bearer ${who}-token` });
  const make = async (path: string, body: object) => {
    const r = await plain(s.url, 'POST', path, body);
    assert.equal(r.status, 201, `${path}: ${r.text}`);
    return r.json;
  };
  /** polls (bounded) until the request answers the status: the graph follows change events */
  const eventually = async (who: 'n1' | 'n2', path: string, status: number) => {
    const deadline = Date.now() + 5_000;
    let r = await as(who, 'GET', path);
    for (let i = 0; i < 100 && r.status !== status && Date.now() < deadline; i++) {
      await new Promise((done) => setTimeout(done, 50));
      r = await as(who, 'GET', path);
    }
    assert.equal(r.status, status, `${who} GET ${path}: ${r.text}`);
  };

  before(async () => {
    pki = new Pki();
    writeFileSync(
      pki.path('tokens.csv'),
      'n1-token,system:node:n1,uid-1,system:nodes\nn2-token,system:node:n2,uid-2,system:nodes\n',
    );
    s = await startAuthServer([
      '--token-auth-file',
      pki.path('tokens.csv'),
      '--authorization-mode',
      'Node,RBAC',
      '--enable-admission-plugins',
      'NodeRestriction',
    ]);
    tls = { ca: readFileSync(`${s.dataDir}/pki/ca.crt`) };
    await make('/api/v1/namespaces', { metadata: { name: 'work' } });
    for (const n of ['n1', 'n2']) {
      await make('/api/v1/nodes', { metadata: { name: n } });
      await make(`${NS}/secrets`, { metadata: { name: `s-${n}` }, data: {} });
      await make(`${NS}/configmaps`, { metadata: { name: `c-${n}` }, data: {} });
      await make('/api/v1/persistentvolumes', {
        metadata: { name: `pv-${n}` },
        spec: { capacity: { storage: '1Gi' }, accessModes: ['ReadWriteOnce'], hostPath: { path: '/tmp' } },
      });
      await make(`${NS}/persistentvolumeclaims`, {
        metadata: { name: `pvc-${n}` },
        spec: { volumeName: `pv-${n}`, accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } },
      });
      await make(`${NS}/pods`, {
        metadata: { name: `pod-${n}` },
        spec: podSpec(n, { secret: `s-${n}`, configMap: `c-${n}`, claim: `pvc-${n}` }),
      });
    }
  });
  after(async () => {
    await s?.stop();
    s?.cleanup();
    pki?.cleanup();
  });

  test('server: two nodes read only what their own pods reference', async () => {
    for (const [me, other] of [
      ['n1', 'n2'],
      ['n2', 'n1'],
    ] as const) {
      for (const [kind, prefix] of [
        ['secrets', 's'],
        ['configmaps', 'c'],
        ['persistentvolumeclaims', 'pvc'],
      ]) {
        assert.equal((await as(me, 'GET', `${NS}/${kind}/${prefix}-${me}`)).status, 200, `${me} ${kind}`);
        const denied = await as(me, 'GET', `${NS}/${kind}/${prefix}-${other}`);
        assert.equal(denied.status, 403, `${me} ${kind} of ${other}`);
        assert.equal(
          denied.json.message,
          `${kind} "${prefix}-${other}" is forbidden: User "system:node:${me}" cannot get resource "${kind}" in API group "" in the namespace "work": no relationship found between node '${me}' and this object`,
        );
      }
      assert.equal((await as(me, 'GET', `/api/v1/persistentvolumes/pv-${me}`)).status, 200);
      assert.equal((await as(me, 'GET', `/api/v1/persistentvolumes/pv-${other}`)).status, 403);
      assert.equal(
        (await as(me, 'GET', `${NS}/secrets?fieldSelector=metadata.name%3Ds-${me}`)).status,
        200,
        'a list of one related secret',
      );
      assert.equal((await as(me, 'GET', `${NS}/secrets`)).status, 403, 'not all secrets');
      assert.equal((await as(me, 'GET', `/api/v1/nodes/${me}`)).status, 200);
      assert.equal((await as(me, 'GET', `/api/v1/nodes/${other}`)).status, 403);
      assert.equal((await as(me, 'GET', `${NS}/pods/pod-${me}`)).status, 200);
      assert.equal((await as(me, 'GET', `${NS}/pods/pod-${other}`)).status, 403);
      const mine = await as(me, 'GET', `/api/v1/pods?fieldSelector=spec.nodeName%3D${me}`);
      assert.equal(mine.status, 200);
      assert.deepEqual(
        mine.json.items.map((p: any) => p.metadata.name),
        [`pod-${me}`],
      );
      assert.equal((await as(me, 'GET', '/api/v1/pods')).status, 403);
    }
  });

  test('server: access reviews carry selector requirements to the node authorizer', async () => {
    const sar = (resourceAttributes: object) =>
      plain(s.url, 'POST', '/apis/authorization.plat.io/v1/subjectaccessreviews', {
        kind: 'SubjectAccessReview',
        apiVersion: 'authorization.plat.io/v1',
        spec: {
          user: 'system:node:n1',
          groups: ['system:nodes'],
          resourceAttributes: { verb: 'list', resource: 'pods', ...resourceAttributes },
        },
      });
    const allowed = async (ra: object) => (await sar(ra)).json.status.allowed;
    assert.equal(
      await allowed({ fieldSelector: { requirements: [{ key: 'spec.nodeName', operator: 'In', values: ['n1'] }] } }),
      true,
    );
    assert.equal(await allowed({ fieldSelector: { rawSelector: 'spec.nodeName=n1' } }), true);
    assert.equal(
      await allowed({ fieldSelector: { requirements: [{ key: 'spec.nodeName', operator: 'In', values: ['n2'] }] } }),
      false,
    );
    assert.equal(await allowed({}), false);
    const refused: [object, string][] = [
      [
        { fieldSelector: { rawSelector: 'a=b', requirements: [{ key: 'a', operator: 'In', values: ['b'] }] } },
        'spec.resourceAttributes.fieldSelector.rawSelector: Invalid value: "a=b": may not specified at the same time as requirements',
      ],
      [
        { fieldSelector: {} },
        'spec.resourceAttributes.fieldSelector.requirements: Required value: when spec.resourceAttributes.fieldSelector is specified, requirements or rawSelector is required',
      ],
      [
        { fieldSelector: { requirements: [{ key: '', operator: 'In', values: ['x'] }] } },
        'spec.resourceAttributes.fieldSelector.requirements[0].key: Required value: must be specified',
      ],
      [
        { fieldSelector: { requirements: [{ key: 'k', operator: 'In', values: [] }] } },
        "spec.resourceAttributes.fieldSelector.requirements[0].values: Required value: must be specified when `operator` is 'In' or 'NotIn'",
      ],
      [
        { labelSelector: { requirements: [{ key: 'k', operator: 'Exists', values: ['v'] }] } },
        "spec.resourceAttributes.labelSelector.requirements[0].values: Forbidden: may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
      ],
      [
        { labelSelector: { requirements: [{ key: '', operator: 'Exists' }] } },
        'spec.resourceAttributes.labelSelector.requirements[0].key: Invalid value: "": name part must be non-empty',
      ],
    ];
    for (const [ra, message] of refused) {
      const r = await sar(ra);
      assert.equal(r.status, 422, JSON.stringify(ra));
      assert.ok(r.json.message.includes(message), `${r.json.message}\n want ${message}`);
    }
    assert.equal(
      (await sar({ fieldSelector: { requirements: [{ key: 'k', operator: 'Newer', values: ['v'] }] } })).status,
      201,
      'unknown operators are accepted',
    );
  });

  test('server: writes of its own Node status and pod status; events; its lease', async () => {
    const patch = (who: 'n1' | 'n2', path: string, body: object) =>
      request(s.secureUrl, tls, 'PATCH', path, body, {
        authorization: `Bearer ${who}-token`,
        'content-type': 'application/merge-patch+json',
      });
    assert.equal((await patch('n1', '/api/v1/nodes/n1/status', { status: { phase: 'Running' } })).status, 200);
    assert.equal((await patch('n1', '/api/v1/nodes/n2/status', { status: { phase: 'Running' } })).status, 403);
    assert.equal((await patch('n1', `${NS}/pods/pod-n1/status`, { status: { phase: 'Running' } })).status, 200);
    assert.equal((await patch('n1', `${NS}/pods/pod-n2/status`, { status: { phase: 'Running' } })).status, 403);
    const ev = await as('n1', 'POST', `${NS}/events`, {
      metadata: { name: 'e1' },
      involvedObject: { kind: 'Node', name: 'n1' },
      reason: 'Started',
      message: 'x',
    });
    assert.equal(ev.status, 201, ev.text);
    const LEASES = '/apis/coordination.plat.io/v1/namespaces/plat-node-lease/leases';
    assert.equal(
      (await as('n1', 'POST', LEASES, { metadata: { name: 'n1' }, spec: { holderIdentity: 'n1' } })).status,
      201,
    );
    const other = await as('n1', 'POST', LEASES, { metadata: { name: 'n2' }, spec: { holderIdentity: 'n1' } });
    assert.equal(other.status, 403);
    assert.equal(
      other.json.message,
      'leases.coordination.plat.io "n2" is forbidden: can only access node lease with the same name as the requesting node',
    );
    assert.equal((await as('n1', 'GET', `${LEASES}/n1`)).status, 200);
    assert.equal((await as('n2', 'GET', `${LEASES}/n1`)).status, 403);
  });

  test('server: NodeRestriction: mirror pods bound to itself only, its own pods deleted, its own Node created', async () => {
    const plainPod = await as('n1', 'POST', `${NS}/pods`, { metadata: { name: 'm0' }, spec: podSpec('n1') });
    assert.equal(plainPod.status, 403);
    assert.equal(
      plainPod.json.message,
      'pods "m0" is forbidden: pod does not have "platform.io/config.mirror" annotation, node "n1" can only create mirror pods',
    );
    const mirror = (name: string, nodeName: string, refs = {}) => ({
      metadata: { name, annotations: { 'platform.io/config.mirror': 'x' } },
      spec: podSpec(nodeName, refs),
    });
    assert.equal((await as('n1', 'POST', `${NS}/pods`, mirror('m1', 'n1'))).status, 201);
    assert.match(
      (await as('n1', 'POST', `${NS}/pods`, mirror('m2', 'n2'))).json.message,
      /node "n1" can only create pods with spec.nodeName set to itself/,
    );
    assert.match(
      (await as('n1', 'POST', `${NS}/pods`, mirror('m3', 'n1', { secret: 's-n1' }))).json.message,
      /can not create pods that reference secrets/,
    );
    const del = await as('n1', 'DELETE', `${NS}/pods/pod-n2`);
    assert.equal(del.status, 403);
    assert.equal(
      del.json.message,
      'pods "pod-n2" is forbidden: node "n1" can only delete pods with spec.nodeName set to itself',
    );
    assert.equal((await as('n1', 'DELETE', `${NS}/pods/m1`)).status, 200);
    const node = await as('n1', 'POST', '/api/v1/nodes', { metadata: { name: 'n3' } });
    assert.equal(node.status, 403);
    assert.equal(node.json.message, 'nodes "n3" is forbidden: node "n1" is not allowed to modify node "n3"');
    const labelled = await as('n1', 'POST', '/api/v1/nodes', {
      metadata: { name: 'n1', labels: { 'node-restriction.platform.io/pool': 'gpu', 'platform.io/hostname': 'n1' } },
    });
    assert.equal(
      labelled.json.message,
      'nodes "n1" is forbidden: node "n1" is not allowed to set the following labels: node-restriction.platform.io/pool',
    );
  });

  test("server: NodeRestriction on its own Node: no taint changes, no labels of the product domains but the kubelet's", async () => {
    const patch = (body: object) =>
      request(s.secureUrl, tls, 'PATCH', '/api/v1/nodes/n1', body, {
        authorization: 'Bearer n1-token',
        'content-type': 'application/merge-patch+json',
      });
    assert.equal(
      (
        await patch({
          metadata: { labels: { 'platform.io/hostname': 'n1', 'node.platform.io/pool': 'a', 'example.com/team': 'x' } },
        })
      ).status,
      200,
      'kubelet labels and other domains',
    );
    const restricted = await patch({
      metadata: { labels: { 'node-restriction.platform.io/pool': 'gpu', 'x.plat.io/y': 'z' } },
    });
    assert.equal(restricted.status, 403);
    assert.equal(
      restricted.json.message,
      'nodes "n1" is forbidden: is not allowed to modify labels: node-restriction.platform.io/pool, x.plat.io/y',
    );
    const taint = await patch({ spec: { taints: [{ key: 'k', effect: 'NoSchedule' }] } });
    assert.equal(taint.status, 403);
    assert.equal(taint.json.message, 'nodes "n1" is forbidden: node "n1" is not allowed to modify taints');
    assert.equal((await plain(s.url, 'GET', '/api/v1/nodes/n1')).json.spec?.taints, undefined, 'nothing was written');
  });

  test('server: the graph follows pods: a new pod grants, a deleted one takes back', async () => {
    await make(`${NS}/pods`, { metadata: { name: 'late' }, spec: podSpec('n2', { secret: 's-n1' }) });
    await eventually('n2', `${NS}/secrets/s-n1`, 200);
    assert.equal((await plain(s.url, 'DELETE', `${NS}/pods/late?gracePeriodSeconds=0`)).status, 200);
    await eventually('n2', `${NS}/secrets/s-n1`, 403);
    assert.equal((await plain(s.url, 'DELETE', `${NS}/pods/pod-n1?gracePeriodSeconds=0`)).status, 200);
    await eventually('n1', `${NS}/secrets/s-n1`, 403);
    await eventually('n1', `${NS}/configmaps/c-n1`, 403);
  });
}
