/**
 * PATCH over HTTP: JSON patch, merge patch and strategic merge patch on real resources,
 * unknown patch types, field validation levels and dry run on every write verb.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, request, requestWithWarnings, configMap, type TestServer } from '../helpers/server.js';
import { openWatch } from '../helpers/watch.js';

let s: TestServer;
before(async () => {
  s = await startServer();
});
after(async () => {
  await s.stop();
  s.cleanup();
});

const CM = '/api/v1/namespaces/default/configmaps';
const DEP = '/apis/apps/v1/namespaces/default/deployments';
const JSON_PATCH = { 'content-type': 'application/json-patch+json' };
const MERGE = { 'content-type': 'application/merge-patch+json' };
const SMP = { 'content-type': 'application/strategic-merge-patch+json' };

async function create(path: string, body: unknown): Promise<any> {
  const r = await request(s.url, 'POST', path, body);
  assert.equal(r.status, 201, r.text);
  assert.match(r.json.metadata.resourceVersion, /^[1-9][0-9]*$/);
  return r.json;
}

/** A request that keeps every Warning header line (fetch joins repeated headers). */
const raw = (method: string, path: string, body: unknown, contentType?: string) =>
  requestWithWarnings(s.url, method, path, body, contentType);

const deployment = (name: string) => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name, finalizers: ['example.com/a', 'example.com/b'] },
  spec: {
    replicas: 1,
    selector: { matchLabels: { app: name } },
    strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: 1 } },
    template: {
      metadata: { labels: { app: name } },
      spec: {
        containers: [
          {
            name: 'a',
            image: 'nginx:1',
            ports: [{ containerPort: 80 }],
            env: [
              { name: 'X', value: '1' },
              { name: 'Y', value: '2' },
            ],
          },
          { name: 'b', image: 'busybox:1' },
        ],
      },
    },
  },
});

test('JSON patch: add, remove, replace, move, copy and test on a ConfigMap', async () => {
  await create(CM, configMap('jp-1', { l: 'x' }, { a: '1', b: '2', c: '3' }));
  const ops = [
    { op: 'test', path: '/data/a', value: '1' },
    { op: 'add', path: '/data/d', value: '4' },
    { op: 'remove', path: '/data/b' },
    { op: 'replace', path: '/data/a', value: 'one' },
    { op: 'move', from: '/data/c', path: '/data/moved' },
    { op: 'copy', from: '/data/d', path: '/metadata/labels/copied' },
  ];
  const r = await request(s.url, 'PATCH', `${CM}/jp-1`, ops, JSON_PATCH);
  assert.equal(r.status, 200, r.text);
  assert.deepEqual(r.json.data, { a: 'one', d: '4', moved: '3' });
  assert.deepEqual(r.json.metadata.labels, { l: 'x', copied: '4' });
});

// [name, operations]: each fails with 422 Invalid and changes nothing
const failing: [string, unknown[]][] = [
  [
    'a failed test',
    [
      { op: 'replace', path: '/data/a', value: 'x' },
      { op: 'test', path: '/data/a', value: 'nope' },
    ],
  ],
  ['a bad path', [{ op: 'add', path: '/nothing/here', value: 1 }]],
  ['removing a missing member', [{ op: 'remove', path: '/data/missing' }]],
];
for (const [name, ops] of failing) {
  test(`JSON patch: ${name} is 422 Invalid and changes nothing`, async () => {
    const name2 = `jp-fail-${failing.findIndex((f) => f[0] === name)}`;
    const created = await create(CM, configMap(name2, {}, { a: '1' }));
    const r = await request(s.url, 'PATCH', `${CM}/${name2}`, ops, JSON_PATCH);
    assert.equal(r.status, 422, r.text);
    assert.equal(r.json.reason, 'Invalid');
    const g = await request(s.url, 'GET', `${CM}/${name2}`);
    assert.equal(g.json.metadata.resourceVersion, created.metadata.resourceVersion);
    assert.deepEqual(g.json.data, { a: '1' });
  });
}

test('empty optional maps and lists and nulls are not stored (as a typed round trip drops them)', async () => {
  const c = await create(CM, {
    ...configMap('empty-1', {}, {}),
    binaryData: null,
    metadata: { name: 'empty-1', labels: {}, finalizers: [] },
  });
  assert.deepEqual(
    [c.metadata.labels, c.metadata.finalizers, c.data, c.binaryData],
    [undefined, undefined, undefined, undefined],
  );
  const p = await request(s.url, 'PATCH', `${CM}/empty-1`, { metadata: { labels: { a: 'b' } } }, MERGE);
  const un = await request(s.url, 'PATCH', `${CM}/empty-1`, { metadata: { labels: { a: null } } }, MERGE);
  assert.deepEqual([p.json.metadata.labels, un.json.metadata.labels], [{ a: 'b' }, undefined]);
  const lr = await create('/api/v1/namespaces/default/limitranges', {
    apiVersion: 'v1',
    kind: 'LimitRange',
    metadata: { name: 'empty-2' },
    spec: { limits: [] },
  });
  assert.deepEqual(lr.spec, { limits: [] }, 'a required list stays, even empty');
});

test('merge patch: null deletes, maps merge, lists are replaced', async () => {
  await create(CM, configMap('mp-1', { keep: 'y', drop: 'y' }, { a: '1', b: '2' }));
  const r = await request(
    s.url,
    'PATCH',
    `${CM}/mp-1`,
    { metadata: { labels: { drop: null, add: 'y' }, finalizers: ['x/y'] }, data: { a: null, c: '3' } },
    MERGE,
  );
  assert.equal(r.status, 200, r.text);
  assert.deepEqual(r.json.metadata.labels, { keep: 'y', add: 'y' });
  assert.deepEqual(r.json.data, { b: '2', c: '3' });
  const g = await request(s.url, 'GET', `${CM}/mp-1`);
  assert.deepEqual(g.json.data, { b: '2', c: '3' });
});

test('strategic merge patch on a Deployment: containers by name, ports by containerPort, env by name', async () => {
  await create(DEP, deployment('smp-1'));
  const patch = {
    spec: {
      template: {
        spec: {
          containers: [
            { name: 'a', image: 'nginx:2', ports: [{ containerPort: 8080 }], env: [{ name: 'X', value: '9' }] },
            { name: 'c', image: 'redis:7' },
          ],
        },
      },
    },
  };
  const r = await request(s.url, 'PATCH', `${DEP}/smp-1`, patch, SMP);
  assert.equal(r.status, 200, r.text);
  const [a, b, c] = r.json.spec.template.spec.containers;
  // upstream's container defaults are stored with every container, patched ones included
  const defaults = {
    imagePullPolicy: 'IfNotPresent',
    resources: {},
    terminationMessagePath: '/dev/termination-log',
    terminationMessagePolicy: 'File',
  };
  const tcp = (containerPort: number) => ({ containerPort, protocol: 'TCP' });
  assert.deepEqual(a, {
    name: 'a',
    image: 'nginx:2',
    ports: [tcp(80), tcp(8080)],
    env: [
      { name: 'X', value: '9' },
      { name: 'Y', value: '2' },
    ],
    ...defaults,
  });
  assert.deepEqual(b, { name: 'b', image: 'busybox:1', ...defaults });
  assert.deepEqual(c, { name: 'c', image: 'redis:7', ...defaults });
});

test('strategic merge patch directives on a Deployment', async () => {
  await create(DEP, deployment('smp-2'));
  const patch = {
    metadata: { '$deleteFromPrimitiveList/finalizers': ['example.com/a'] },
    spec: {
      strategy: { $retainKeys: ['type'], type: 'Recreate' },
      template: {
        spec: {
          '$setElementOrder/containers': [{ name: 'b' }, { name: 'a' }],
          containers: [{ name: 'a', env: [{ name: 'Y', $patch: 'delete' }] }],
        },
      },
    },
  };
  const r = await request(s.url, 'PATCH', `${DEP}/smp-2`, patch, SMP);
  assert.equal(r.status, 200, r.text);
  assert.deepEqual(r.json.metadata.finalizers, ['example.com/b']);
  assert.deepEqual(r.json.spec.strategy, { type: 'Recreate' });
  assert.deepEqual(
    r.json.spec.template.spec.containers.map((c: any) => c.name),
    ['b', 'a'],
  );
  assert.deepEqual(r.json.spec.template.spec.containers[1].env, [{ name: 'X', value: '1' }]);
  const del = await request(
    s.url,
    'PATCH',
    `${DEP}/smp-2`,
    { spec: { template: { spec: { containers: [{ name: 'b', $patch: 'delete' }] } } } },
    SMP,
  );
  assert.deepEqual(
    del.json.spec.template.spec.containers.map((c: any) => c.name),
    ['a'],
  );
  const rep = await request(
    s.url,
    'PATCH',
    `${DEP}/smp-2`,
    { spec: { template: { spec: { containers: [{ $patch: 'replace' }, { name: 'z', image: 'z:1' }] } } } },
    SMP,
  );
  assert.deepEqual(rep.json.spec.template.spec.containers, [
    {
      name: 'z',
      image: 'z:1',
      imagePullPolicy: 'IfNotPresent',
      resources: {},
      terminationMessagePath: '/dev/termination-log',
      terminationMessagePolicy: 'File',
    },
  ]);
  const map = await request(
    s.url,
    'PATCH',
    `${DEP}/smp-2`,
    { spec: { template: { metadata: { labels: { $patch: 'replace', app: 'smp-2', tier: 'web' } } } } },
    SMP,
  );
  assert.deepEqual(map.json.spec.template.metadata.labels, { app: 'smp-2', tier: 'web' });
});

test('strategic merge patch on a Pod merges containers by name', async () => {
  const pod = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'smp-pod' },
    spec: {
      containers: [
        { name: 'a', image: 'nginx:1' },
        { name: 'b', image: 'busybox:1' },
      ],
    },
  };
  await create('/api/v1/namespaces/default/pods', pod);
  const r = await request(
    s.url,
    'PATCH',
    '/api/v1/namespaces/default/pods/smp-pod',
    { spec: { containers: [{ name: 'b', image: 'busybox:2' }] } },
    SMP,
  );
  assert.equal(r.status, 200, r.text);
  assert.deepEqual(
    r.json.spec.containers.map((c: any) => `${c.name}=${c.image}`),
    ['a=nginx:1', 'b=busybox:2'],
  );
});

test('an unknown patch Content-Type is 415', async () => {
  await create(CM, configMap('ct-1'));
  const r = await request(
    s.url,
    'PATCH',
    `${CM}/ct-1`,
    { data: { a: 'b' } },
    { 'content-type': 'application/x-patch' },
  );
  assert.equal(r.status, 415);
  assert.equal(r.json.reason, 'UnsupportedMediaType');
});

test('fieldValidation=Strict: 400 listing every unknown field, on POST, PUT and PATCH', async () => {
  const body = { ...configMap('fv-strict'), bogus: 1, metadata: { name: 'fv-strict', alsoBogus: true } };
  const c = await request(s.url, 'POST', `${CM}?fieldValidation=Strict`, body);
  assert.equal(c.status, 400);
  assert.equal(c.json.reason, 'BadRequest');
  assert.match(c.json.message, /unknown field "bogus"/);
  assert.match(c.json.message, /unknown field "metadata.alsoBogus"/);
  const ok = await create(CM, configMap('fv-strict'));
  const u = await request(s.url, 'PUT', `${CM}/fv-strict?fieldValidation=Strict`, { ...ok, extra: 1 });
  assert.equal(u.status, 400);
  const p = await request(
    s.url,
    'PATCH',
    `${CM}/fv-strict?fieldValidation=Strict`,
    { extra: 1, data: { x: 'y' } },
    MERGE,
  );
  assert.equal(p.status, 400);
  assert.match(p.json.message, /unknown field "extra"/);
  const g = await request(s.url, 'GET', `${CM}/fv-strict`);
  assert.equal(g.json.metadata.resourceVersion, ok.metadata.resourceVersion);
});

test('fieldValidation=Warn (the default): one Warning header per unknown field, fields dropped', async () => {
  const body = { ...configMap('fv-warn'), bogus: 1, other: 2 };
  const c = await raw('POST', CM, body);
  assert.equal(c.status, 201);
  assert.deepEqual(c.warnings.sort(), ['299 - "unknown field \\"bogus\\""', '299 - "unknown field \\"other\\""']);
  const g = await request(s.url, 'GET', `${CM}/fv-warn`);
  assert.equal(g.json.bogus, undefined);
  assert.equal(g.json.other, undefined);
  const p = await raw('PATCH', `${CM}/fv-warn?fieldValidation=Warn`, { spec: 1 }, MERGE['content-type']);
  assert.equal(p.status, 200);
  assert.deepEqual(p.warnings, ['299 - "unknown field \\"spec\\""']);
});

test('fieldValidation=Ignore drops unknown fields silently', async () => {
  const c = await raw('POST', `${CM}?fieldValidation=Ignore`, { ...configMap('fv-ignore'), bogus: 1 });
  assert.equal(c.status, 201);
  assert.deepEqual(c.warnings, []);
  assert.equal(c.json.bogus, undefined);
});

test('a wrong type is 400 whatever the validation level', async () => {
  for (const level of ['Ignore', 'Warn', 'Strict']) {
    const dep = deployment(`fv-type-${level.toLowerCase()}`) as any;
    dep.spec.replicas = 'three';
    const r = await request(s.url, 'POST', `${DEP}?fieldValidation=${level}`, dep);
    assert.equal(r.status, 400, level);
    assert.equal(r.json.reason, 'BadRequest');
  }
  const a = await request(
    s.url,
    'PATCH',
    `${CM}/fv-type-apply?fieldManager=m`,
    { apiVersion: 'v1', kind: 'ConfigMap', data: { a: 1 } },
    { 'content-type': 'application/apply-patch+yaml' },
  );
  assert.equal(a.status, 400);
});

test('dryRun=All on POST, PUT, PATCH and DELETE returns the object and persists nothing', async () => {
  const dry = await request(s.url, 'POST', `${CM}?dryRun=All`, configMap('dry-1'));
  assert.equal(dry.status, 201);
  assert.equal(dry.json.metadata.name, 'dry-1');
  assert.equal((await request(s.url, 'GET', `${CM}/dry-1`)).status, 404);
  const live = await create(CM, configMap('dry-1', {}, { a: '1' }));
  const put = await request(s.url, 'PUT', `${CM}/dry-1?dryRun=All`, { ...live, data: { a: '2' } });
  assert.equal(put.status, 200);
  assert.deepEqual(put.json.data, { a: '2' });
  const patch = await request(s.url, 'PATCH', `${CM}/dry-1?dryRun=All`, { data: { b: '3' } }, MERGE);
  assert.equal(patch.status, 200);
  assert.deepEqual(patch.json.data, { a: '1', b: '3' });
  const applied = await request(
    s.url,
    'PATCH',
    `${CM}/dry-new?dryRun=All&fieldManager=m`,
    { apiVersion: 'v1', kind: 'ConfigMap', data: { z: '1' } },
    { 'content-type': 'application/apply-patch+yaml' },
  );
  assert.equal(applied.status, 201, applied.text);
  const del = await request(s.url, 'DELETE', `${CM}/dry-1?dryRun=All`);
  assert.equal(del.status, 200);
  const g = await request(s.url, 'GET', `${CM}/dry-1`);
  assert.equal(g.status, 200);
  assert.equal(g.json.metadata.resourceVersion, live.metadata.resourceVersion);
  assert.deepEqual(g.json.data, { a: '1' });
  assert.equal((await request(s.url, 'GET', `${CM}/dry-new`)).status, 404);
});

test('dryRun=All sends no watch event', async () => {
  const w = await openWatch(s.url, `${CM}?watch=1&fieldSelector=metadata.name%3Ddry-watch`);
  try {
    assert.equal(
      (await request(s.url, 'POST', `${CM}?dryRun=All`, configMap('dry-watch', {}, { a: 'dry' }))).status,
      201,
    );
    const real = await create(CM, configMap('dry-watch', {}, { a: 'real' }));
    assert.equal(
      (await request(s.url, 'PATCH', `${CM}/dry-watch?dryRun=All`, { data: { a: 'dry' } }, MERGE)).status,
      200,
    );
    assert.equal((await request(s.url, 'DELETE', `${CM}/dry-watch?dryRun=All`)).status, 200);
    assert.equal((await request(s.url, 'PATCH', `${CM}/dry-watch`, { data: { a: 'last' } }, MERGE)).status, 200);
    const events = await w.waitEvents(2);
    assert.deepEqual(
      events.map((e) => [e.type, e.object.data.a]),
      [
        ['ADDED', 'real'],
        ['MODIFIED', 'last'],
      ],
    );
    assert.equal(events[0]!.object.metadata.resourceVersion, real.metadata.resourceVersion);
  } finally {
    w.close();
  }
});

test('an invalid dryRun value is 400 on every write verb', async () => {
  await create(CM, configMap('dry-bad'));
  const cases: [string, string, unknown, Record<string, string>?][] = [
    ['POST', CM, configMap('dry-bad-2')],
    ['PUT', `${CM}/dry-bad`, configMap('dry-bad')],
    ['PATCH', `${CM}/dry-bad`, { data: {} }, MERGE],
    ['DELETE', `${CM}/dry-bad`, undefined],
  ];
  for (const [method, path, body, headers] of cases) {
    const r = await request(s.url, method, `${path}?dryRun=Yes`, body, headers);
    assert.equal(r.status, 400, method);
    assert.equal(r.json.reason, 'BadRequest');
  }
  assert.equal((await request(s.url, 'GET', `${CM}/dry-bad`)).status, 200);
});
