/**
 * CustomResourceDefinitions end to end over HTTP: the CRD's own validation and conditions,
 * then its custom resources: defaults, schema validation (422 with field paths), pruning,
 * two versions, status and scale subresources, printer columns, patch types, encodings,
 * discovery, watch, selectors, chunked lists, restart, and deletion of the CRD.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, request, type TestServer } from '../../helpers/server.js';
import { GROUP, cronTab, cronTabCRD, waitEstablished, waitStatus } from './fixtures.js';

let s: TestServer;
const CRDS = '/apis/apiextensions.plat.io/v1/customresourcedefinitions';
const CTS = `/apis/${GROUP}/v1/namespaces/default/crontabs`;

/** Each test creates the custom resources it reads: any one of them may run alone. */
async function created(name: string, spec: Record<string, unknown> = {}): Promise<any> {
  const r = await request(s.url, 'POST', CTS, cronTab(name, { cronSpec: '* * * * *', ...spec }));
  assert.equal(r.status, 201, r.text);
  return r.json;
}

/** A custom resource with status replicas 2 and selector app=x, set through /status. */
async function withStatus(name: string, spec: Record<string, unknown> = {}): Promise<any> {
  await created(name, spec);
  const st = await request(
    s.url,
    'PATCH',
    `${CTS}/${name}/status`,
    { status: { replicas: 2, labelSelector: 'app=x' } },
    { 'content-type': 'application/merge-patch+json' },
  );
  assert.equal(st.status, 200, st.text);
  return st.json;
}

before(async () => {
  s = await startServer();
  const r = await request(s.url, 'POST', CRDS, cronTabCRD());
  assert.equal(r.status, 201, r.text);
  await waitEstablished(s.url, `crontabs.${GROUP}`);
});
after(async () => {
  await s.stop();
  s.cleanup();
});

test('the CRD gets accepted names, NamesAccepted and Established, and its stored version', async () => {
  const crd = (await request(s.url, 'GET', `${CRDS}/crontabs.${GROUP}`)).json;
  assert.deepEqual(crd.status.storedVersions, ['v1']);
  assert.equal(crd.status.acceptedNames.kind, 'CronTab');
  assert.equal(crd.status.acceptedNames.listKind, 'CronTabList');
  assert.deepEqual(crd.status.acceptedNames.shortNames, ['ct']);
  const conds = Object.fromEntries(crd.status.conditions.map((c: any) => [c.type, [c.status, c.reason]]));
  assert.deepEqual(conds.NamesAccepted, ['True', 'NoConflicts']);
  assert.deepEqual(conds.Established, ['True', 'InitialNamesAccepted']);
  assert.equal(crd.spec.conversion.strategy, 'None');
});

test('an invalid CRD is 422 with upstream field paths', async () => {
  const bad = cronTabCRD();
  bad.metadata.name = 'foos.example';
  bad.spec.group = 'example';
  delete bad.spec.scope;
  bad.spec.names = { plural: 'foos', kind: 'Foo' };
  bad.spec.preserveUnknownFields = true;
  bad.spec.versions[1].storage = true;
  delete bad.spec.versions[1].schema;
  bad.spec.versions[0].schema.openAPIV3Schema.properties.spec.properties.loose = {
    properties: { a: { type: 'string' } },
  };
  const r = await request(s.url, 'POST', CRDS, bad);
  assert.equal(r.status, 422, r.text);
  const fields = r.json.details.causes.map((c: any) => `${c.field}: ${c.message.split(':')[0]}`);
  for (const want of [
    'spec.group: Invalid value',
    'spec.scope: Required value',
    'spec.versions[1].schema.openAPIV3Schema: Required value',
    'spec.versions[0].schema.openAPIV3Schema.properties[spec].properties[loose].type: Required value',
    'spec.versions: Invalid value',
    'spec.preserveUnknownFields: Invalid value',
  ])
    assert.ok(fields.includes(want), `${want} in ${fields.join('; ')}`);
  const dup = cronTabCRD();
  dup.spec.versions[1].name = 'v1';
  const d = await request(s.url, 'POST', CRDS, dup);
  assert.equal(d.status, 422);
  assert.ok(
    d.json.details.causes.some((c: any) => c.field === 'spec.versions[1].name' && c.reason === 'FieldValueDuplicate'),
  );
});

test('a second CRD whose plural is taken in the group: NamesAccepted False, not served', async () => {
  const other = cronTabCRD();
  other.metadata.name = `crontabs2.${GROUP}`;
  other.spec.names = { plural: 'crontabs2', kind: 'CronTab2', shortNames: ['ct'] };
  assert.equal((await request(s.url, 'POST', CRDS, other)).status, 201);
  const deadline = Date.now() + 10_000;
  let cond: any;
  for (let i = 0; i < 200 && Date.now() < deadline && !cond; i++) {
    const crd = (await request(s.url, 'GET', `${CRDS}/crontabs2.${GROUP}`)).json;
    cond = crd.status?.conditions?.find((c: any) => c.type === 'NamesAccepted');
    if (!cond) await new Promise((res) => setTimeout(res, 50));
  }
  assert.deepEqual([cond.status, cond.reason], ['False', 'ShortNamesConflict']);
  assert.equal((await request(s.url, 'GET', `/apis/${GROUP}/v1/crontabs2`)).status, 404);
  assert.equal((await request(s.url, 'DELETE', `${CRDS}/crontabs2.${GROUP}`)).status, 200);
});

test('create: defaults applied, unknown fields pruned with warnings, preserved where marked', async () => {
  const r = await request(
    s.url,
    'POST',
    CTS,
    cronTab('defaults', { cronSpec: '* * * * */5', junk: 1, free: { any: { thing: true } } }, 'v1', { extra: 2 }),
  );
  assert.equal(r.status, 201, r.text);
  assert.deepEqual(r.json.spec, {
    cronSpec: '* * * * */5',
    free: { any: { thing: true } },
    image: 'busybox',
    replicas: 1,
  });
  assert.equal(r.json.extra, undefined);
  assert.match(r.headers.get('warning') ?? '', /unknown field \\"spec.junk\\"/);
  const strict = await request(
    s.url,
    'POST',
    `${CTS}?fieldValidation=Strict`,
    cronTab('strict', { cronSpec: '* * * * *', junk: 1 }),
  );
  assert.equal(strict.status, 400);
  assert.match(strict.json.message, /strict decoding error: unknown field "spec.junk"/);
});

test('schema violations are 422 with field paths and upstream reasons', async () => {
  const r = await request(
    s.url,
    'POST',
    CTS,
    cronTab('bad', {
      cronSpec: 'bad',
      replicas: 11,
      mode: 'c',
      image: 'x'.repeat(21),
      port: 1.5,
      email: 'nope',
      tags: ['a', 'b', 'c'],
      ports: [{ port: 1 }],
      template: { metadata: {} },
    }),
  );
  assert.equal(r.status, 422, r.text);
  assert.equal(r.json.reason, 'Invalid');
  const causes = new Map(r.json.details.causes.map((c: any) => [c.field, c]));
  const expect: [string, string, RegExp][] = [
    ['spec.cronSpec', 'FieldValueInvalid', /^Invalid value: "bad": spec.cronSpec in body should match/],
    [
      'spec.replicas',
      'FieldValueInvalid',
      /^Invalid value: 11: spec.replicas in body should be less than or equal to 10$/,
    ],
    ['spec.mode', 'FieldValueNotSupported', /^Unsupported value: "c": supported values: "a", "b"$/],
    ['spec.image', 'FieldValueTooLong', /^Too long: may not be more than 20 bytes$/],
    ['spec.port', 'FieldValueTypeInvalid', /must be of type integer,string/],
    ['spec.email', 'FieldValueInvalid', /spec.email in body must be of type email/],
    ['spec.tags', 'FieldValueTooMany', /^Too many: 3: must have at most 2 items$/],
    ['spec.ports[0].name', 'FieldValueRequired', /^Required value$/],
    ['spec.template.apiVersion', 'FieldValueRequired', /^Required value/],
  ];
  for (const [field, reason, message] of expect) {
    const c: any = causes.get(field);
    assert.ok(c, `no cause for ${field}: ${r.text}`);
    assert.equal(c.reason, reason, field);
    assert.match(c.message, message, field);
  }
  const typed = await request(s.url, 'POST', CTS, cronTab('typed', { cronSpec: '* * * * *', replicas: 'three' }));
  assert.equal(typed.status, 422);
  assert.equal(
    typed.json.details.causes[0].message,
    'Invalid value: "string": spec.replicas in body must be of type integer: "three"',
  );
  const missing = await request(s.url, 'POST', CTS, cronTab('missing', {}));
  assert.equal(missing.status, 422);
  assert.deepEqual(
    missing.json.details.causes.map((c: any) => c.field),
    ['spec.cronSpec'],
  );
});

test('two versions: objects stored once, read through either version', async () => {
  const r = await request(
    s.url,
    'POST',
    `/apis/${GROUP}/v2/namespaces/default/crontabs`,
    cronTab('via-v2', { cronSpec: '* * * * *', anything: 'kept' }, 'v2'),
  );
  assert.equal(r.status, 201, r.text);
  assert.equal(r.json.apiVersion, `${GROUP}/v2`);
  const v1 = await request(s.url, 'GET', `${CTS}/via-v2`);
  assert.equal(v1.json.apiVersion, `${GROUP}/v1`);
  await created('via-v1');
  const v2 = await request(s.url, 'GET', `/apis/${GROUP}/v2/namespaces/default/crontabs/via-v1`);
  assert.equal(v2.json.apiVersion, `${GROUP}/v2`);
  assert.equal(v2.json.spec.image, 'busybox');
});

test('status subresource: the main resource ignores status, /status changes only status', async () => {
  const c = await request(
    s.url,
    'POST',
    CTS,
    cronTab('st', { cronSpec: '* * * * *' }, 'v1', { status: { replicas: 9 } }),
  );
  assert.equal(c.json.status, undefined);
  const st = await request(
    s.url,
    'PATCH',
    `${CTS}/st/status`,
    { status: { replicas: 2, labelSelector: 'app=x' }, spec: { replicas: 5 } },
    { 'content-type': 'application/merge-patch+json' },
  );
  assert.equal(st.status, 200, st.text);
  assert.deepEqual([st.json.status.replicas, st.json.spec.replicas], [2, 1]);
  const bad = await request(
    s.url,
    'PATCH',
    `${CTS}/st/status`,
    { status: { replicas: 'x' } },
    { 'content-type': 'application/merge-patch+json' },
  );
  assert.equal(bad.status, 422);
  assert.equal(bad.json.details.causes[0].field, 'status.replicas');
  const main = await request(s.url, 'PUT', `${CTS}/st`, { ...st.json, status: { replicas: 7 } });
  assert.equal(main.json.status.replicas, 2);
});

test('scale subresource over the CRD paths', async () => {
  await withStatus('sc');
  const scale = await request(s.url, 'GET', `${CTS}/sc/scale`);
  assert.equal(scale.status, 200);
  assert.deepEqual(
    [
      scale.json.kind,
      scale.json.apiVersion,
      scale.json.spec.replicas,
      scale.json.status.replicas,
      scale.json.status.selector,
    ],
    ['Scale', 'autoscaling/v1', 1, 2, 'app=x'],
  );
  const up = await request(
    s.url,
    'PATCH',
    `${CTS}/sc/scale`,
    { spec: { replicas: 4 } },
    { 'content-type': 'application/merge-patch+json' },
  );
  assert.equal(up.json.spec.replicas, 4);
  assert.equal((await request(s.url, 'GET', `${CTS}/sc`)).json.spec.replicas, 4);
  const neg = await request(s.url, 'PUT', `${CTS}/sc/scale`, { ...up.json, spec: { replicas: -1 } });
  assert.equal(neg.status, 422);
});

test('additionalPrinterColumns drive the Table', async () => {
  await created('pc', { replicas: 4 });
  const r = await request(s.url, 'GET', `${CTS}?includeObject=None`, undefined, {
    accept: 'application/json;as=Table;g=meta.plat.io;v=v1',
  });
  assert.equal(r.json.kind, 'Table');
  assert.deepEqual(
    r.json.columnDefinitions.map((c: any) => [c.name, c.type]),
    [
      ['Name', 'string'],
      ['Spec', 'string'],
      ['Replicas', 'integer'],
      ['Age', 'date'],
    ],
  );
  const row = r.json.rows.find((x: any) => x.cells[0] === 'pc');
  assert.deepEqual(row.cells.slice(0, 3), ['pc', '* * * * *', 4]);
  assert.match(row.cells[3], /^\d+s$/);
});

test('patches: merge and JSON patch work, strategic merge is 415; Protobuf is 406 and falls back to JSON', async () => {
  await created('patched');
  const m = await request(
    s.url,
    'PATCH',
    `${CTS}/patched`,
    { spec: { mode: 'a' } },
    { 'content-type': 'application/merge-patch+json' },
  );
  assert.equal(m.json.spec.mode, 'a');
  const j = await request(s.url, 'PATCH', `${CTS}/patched`, [{ op: 'replace', path: '/spec/mode', value: 'b' }], {
    'content-type': 'application/json-patch+json',
  });
  assert.equal(j.json.spec.mode, 'b');
  const smp = await request(
    s.url,
    'PATCH',
    `${CTS}/patched`,
    { spec: { mode: 'a' } },
    { 'content-type': 'application/strategic-merge-patch+json' },
  );
  assert.equal(smp.status, 415);
  assert.equal(smp.json.reason, 'UnsupportedMediaType');
  const pb = await request(s.url, 'GET', `${CTS}/patched`, undefined, { accept: 'application/vnd.platform.protobuf' });
  assert.equal(pb.status, 406);
  const fallback = await request(s.url, 'GET', `${CTS}/patched`, undefined, {
    accept: 'application/vnd.platform.protobuf, application/json',
  });
  assert.equal(fallback.status, 200);
  assert.match(fallback.headers.get('content-type') ?? '', /^application\/json/);
});

test('a Protobuf body is 415; deleting a namespace deletes its custom resources', async () => {
  const pb = await request(s.url, 'POST', CTS, new Uint8Array([0x6b, 0x38, 0x73, 0x00]), {
    'content-type': 'application/vnd.platform.protobuf',
  });
  assert.equal(pb.status, 415);
  assert.equal(pb.json.reason, 'UnsupportedMediaType');
  assert.equal(
    (
      await request(s.url, 'POST', '/api/v1/namespaces', {
        apiVersion: 'v1',
        kind: 'Namespace',
        metadata: { name: 'doomed' },
      })
    ).status,
    201,
  );
  const inNs = `/apis/${GROUP}/v1/namespaces/doomed/crontabs`;
  assert.equal((await request(s.url, 'POST', inNs, cronTab('victim', { cronSpec: '* * * * *' }))).status, 201);
  assert.equal((await request(s.url, 'DELETE', '/api/v1/namespaces/doomed')).status, 200);
  await waitStatus(s.url, '/api/v1/namespaces/doomed', 404);
  assert.equal((await request(s.url, 'GET', `${inNs}/victim`)).status, 404);
});

test('server-side apply: list-map items merge by key; other lists are atomic', async () => {
  const apply = (manager: string, spec: any) =>
    request(s.url, 'PATCH', `${CTS}/applied?fieldManager=${manager}`, cronTab('applied', spec), {
      'content-type': 'application/apply-patch+yaml',
    });
  assert.equal(
    (await apply('one', { cronSpec: '* * * * *', ports: [{ name: 'a', port: 1 }], tags: ['x'] })).status,
    201,
  );
  const r = await apply('two', { cronSpec: '* * * * *', ports: [{ name: 'b', port: 2 }] });
  assert.equal(r.status, 200, r.text);
  assert.deepEqual(r.json.spec.ports.map((p: any) => p.name).sort(), ['a', 'b']);
  assert.deepEqual(r.json.spec.tags, ['x']);
});

test('discovery: group, resource list with shortNames and categories, aggregated', async () => {
  const groups = (await request(s.url, 'GET', '/apis')).json.groups.map((g: any) => g.name);
  assert.ok(groups.includes(GROUP));
  const list = (await request(s.url, 'GET', `/apis/${GROUP}/v1`)).json;
  const ct = list.resources.find((r: any) => r.name === 'crontabs');
  assert.deepEqual([ct.kind, ct.shortNames, ct.categories, ct.namespaced], ['CronTab', ['ct'], ['all'], true]);
  assert.deepEqual(
    list.resources.map((r: any) => r.name),
    ['crontabs', 'crontabs/scale', 'crontabs/status'],
  );
  const agg = (
    await request(s.url, 'GET', '/apis', undefined, {
      accept: 'application/json;g=apidiscovery.plat.io;v=v2;as=APIGroupDiscoveryList',
    })
  ).json;
  const item = agg.items.find((i: any) => i.metadata.name === GROUP);
  assert.deepEqual(
    item.versions.map((v: any) => v.version),
    ['v2', 'v1'],
  );
  assert.ok(item.versions[1].resources[0].subresources.some((x: any) => x.subresource === 'scale'));
});

test('apiserver_storage_objects counts the custom resources', async () => {
  await created('counted');
  const metrics = (await request(s.url, 'GET', '/metrics')).text;
  assert.match(
    metrics,
    new RegExp(`apiserver_storage_objects\\{resource="crontabs\\.${GROUP.replaceAll('.', '\\.')}"\\} [1-9]`),
  );
});

test('OpenAPI v2 and v3 carry the custom resource schema', async () => {
  const v2 = (await request(s.url, 'GET', '/openapi/v2')).json;
  const def = v2.definitions['com.example.stable.v1.CronTab'];
  assert.ok(def, 'definition present');
  assert.deepEqual(def['x-kubernetes-group-version-kind'], [{ group: GROUP, version: 'v1', kind: 'CronTab' }]);
  assert.ok(v2.paths[`/apis/${GROUP}/v1/namespaces/{namespace}/crontabs/{name}`]);
  const index = (await request(s.url, 'GET', '/openapi/v3')).json;
  assert.ok(index.paths[`apis/${GROUP}/v1`]);
  const doc = (await request(s.url, 'GET', `/openapi/v3/apis/${GROUP}/v1`)).json;
  assert.ok(doc.components.schemas['com.example.stable.v1.CronTab'].properties.spec);
});

test('watch, field and label selectors, chunked lists', async () => {
  for (const n of ['sel-a', 'sel-b', 'sel-c']) {
    const body = cronTab(n, { cronSpec: '* * * * *' });
    body.metadata.labels = { tier: n === 'sel-b' ? 'back' : 'front' };
    assert.equal((await request(s.url, 'POST', CTS, body)).status, 201);
  }
  const byField = (await request(s.url, 'GET', `/apis/${GROUP}/v1/crontabs?fieldSelector=metadata.name%3Dsel-b`)).json;
  assert.deepEqual(
    byField.items.map((i: any) => i.metadata.name),
    ['sel-b'],
  );
  const byNs = (await request(s.url, 'GET', `/apis/${GROUP}/v1/crontabs?fieldSelector=metadata.namespace%3Dother`))
    .json;
  assert.equal(byNs.items.length, 0);
  const byLabel = (await request(s.url, 'GET', `${CTS}?labelSelector=tier%3Dfront`)).json;
  assert.deepEqual(
    byLabel.items.map((i: any) => i.metadata.name),
    ['sel-a', 'sel-c'],
  );
  const page1 = (await request(s.url, 'GET', `${CTS}?limit=2`)).json;
  assert.equal(page1.items.length, 2);
  assert.ok(page1.metadata.continue);
  const page2 = (await request(s.url, 'GET', `${CTS}?limit=100&continue=${page1.metadata.continue}`)).json;
  assert.ok(page2.items.length >= 1);
  const rv = page1.metadata.resourceVersion;
  const ctl = new AbortController();
  const timer = setTimeout(() => ctl.abort(), 5000);
  const res = await fetch(`${s.url}${CTS}?watch=1&resourceVersion=${rv}&labelSelector=tier%3Dback`, {
    signal: ctl.signal,
  });
  const reader = res.body!.getReader();
  await request(
    s.url,
    'PATCH',
    `${CTS}/sel-b`,
    { spec: { mode: 'a' } },
    { 'content-type': 'application/merge-patch+json' },
  );
  let text = '';
  for (let i = 0; i < 50 && !text.includes('\n'); i++) {
    const { value, done } = await reader.read();
    if (done) break;
    text += Buffer.from(value!).toString();
  }
  ctl.abort();
  clearTimeout(timer);
  const ev = JSON.parse(text.split('\n')[0]!);
  assert.deepEqual([ev.type, ev.object.metadata.name, ev.object.spec.mode], ['MODIFIED', 'sel-b', 'a']);
});

test('a cluster-scoped CRD; a schema change applies to later writes', async () => {
  const crd: any = {
    apiVersion: 'apiextensions.plat.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `gadgets.${GROUP}` },
    spec: {
      group: GROUP,
      scope: 'Cluster',
      names: { plural: 'gadgets', kind: 'Gadget' },
      versions: [
        {
          name: 'v1',
          served: true,
          storage: true,
          schema: {
            openAPIV3Schema: {
              type: 'object',
              properties: { spec: { type: 'object', properties: { a: { type: 'string' } } } },
            },
          },
        },
      ],
    },
  };
  assert.equal((await request(s.url, 'POST', CRDS, crd)).status, 201);
  await waitEstablished(s.url, `gadgets.${GROUP}`);
  const path = `/apis/${GROUP}/v1/gadgets`;
  const one = await request(s.url, 'POST', path, {
    apiVersion: `${GROUP}/v1`,
    kind: 'Gadget',
    metadata: { name: 'one' },
    spec: { a: 'x', b: 'pruned' },
  });
  assert.equal(one.status, 201, one.text);
  assert.deepEqual([one.json.metadata.namespace, one.json.spec], [undefined, { a: 'x' }]);
  assert.equal((await request(s.url, 'GET', `/apis/${GROUP}/v1/namespaces/default/gadgets/one`)).status, 404);
  const stored = (await request(s.url, 'GET', `${CRDS}/gadgets.${GROUP}`)).json;
  stored.spec.versions[0].schema.openAPIV3Schema.properties.spec.properties.b = { type: 'string', default: 'dflt' };
  const bad = structuredClone(stored);
  bad.spec.scope = 'Namespaced';
  bad.spec.versions[0].schema.openAPIV3Schema.properties.spec.properties.a.pattern = '(';
  const refused = await request(s.url, 'PUT', `${CRDS}/gadgets.${GROUP}`, bad);
  assert.equal(refused.status, 422);
  assert.deepEqual(refused.json.details.causes.map((c: any) => c.field).sort(), [
    'spec.scope',
    'spec.validation.openAPIV3Schema.properties[spec].properties[a].pattern',
  ]);
  assert.equal((await request(s.url, 'PUT', `${CRDS}/gadgets.${GROUP}`, stored)).status, 200);
  const deadline = Date.now() + 10_000;
  let two: any;
  for (let i = 0; i < 200 && Date.now() < deadline; i++) {
    two = await request(s.url, 'POST', path, {
      apiVersion: `${GROUP}/v1`,
      kind: 'Gadget',
      metadata: { generateName: 'two-' },
      spec: { a: 'y' },
    });
    if (two.json?.spec?.b === 'dflt') break;
    await new Promise((res) => setTimeout(res, 50));
  }
  assert.deepEqual(two.json.spec, { a: 'y', b: 'dflt' });
  assert.equal((await request(s.url, 'DELETE', `${CRDS}/gadgets.${GROUP}`)).status, 200);
  await waitStatus(s.url, path, 404);
});

test('served custom resources survive a restart; deleting the CRD deletes them first', async () => {
  await created('survivor');
  await s.stop();
  s = await startServer([], s.dataDir);
  const got = await request(s.url, 'GET', `${CTS}/survivor`);
  assert.equal(got.status, 200, got.text);
  assert.equal(got.json.spec.image, 'busybox');
  // a custom resource held by a finalizer keeps the CRD until the finalizer goes
  const held = cronTab('held', { cronSpec: '* * * * *' });
  held.metadata.finalizers = ['example.com/hold'];
  assert.equal((await request(s.url, 'POST', CTS, held)).status, 201);
  const ctl = new AbortController();
  const timer = setTimeout(() => ctl.abort(), 15_000);
  const watch = await fetch(`${s.url}${CTS}?watch=1`, { signal: ctl.signal });
  const del = await request(s.url, 'DELETE', `${CRDS}/crontabs.${GROUP}`);
  assert.equal(del.status, 200);
  assert.ok(del.json.metadata.deletionTimestamp);
  assert.ok(del.json.metadata.finalizers.includes('customresourcecleanup.apiextensions.plat.io'));
  assert.ok(del.json.status.conditions.some((c: any) => c.type === 'Terminating' && c.status === 'True'));
  const deadline = Date.now() + 10_000;
  let left: any[] = [];
  for (let i = 0; i < 200 && Date.now() < deadline; i++) {
    left = (await request(s.url, 'GET', CTS)).json.items;
    if (left.length === 1) break;
    await new Promise((res) => setTimeout(res, 50));
  }
  assert.deepEqual(
    left.map((o) => o.metadata.name),
    ['held'],
  );
  const refused = await request(s.url, 'POST', CTS, cronTab('late', { cronSpec: '* * * * *' }));
  assert.equal(refused.status, 405);
  assert.equal(refused.json.message, `create is not supported on resources of kind "crontabs.${GROUP}"`);
  assert.equal((await request(s.url, 'GET', `${CRDS}/crontabs.${GROUP}`)).status, 200);
  await request(
    s.url,
    'PATCH',
    `${CTS}/held`,
    { metadata: { finalizers: null } },
    { 'content-type': 'application/merge-patch+json' },
  );
  await waitStatus(s.url, `${CRDS}/crontabs.${GROUP}`, 404);
  await waitStatus(s.url, CTS, 404);
  // the watch of the type ends once it is no longer served
  const reader = watch.body!.getReader();
  let ended = false;
  for (let i = 0; i < 1000 && !ended; i++) ended = (await reader.read()).done;
  clearTimeout(timer);
  assert.ok(ended);
  // a new CRD of the same name starts empty
  assert.equal((await request(s.url, 'POST', CRDS, cronTabCRD())).status, 201);
  await waitEstablished(s.url, `crontabs.${GROUP}`);
  assert.deepEqual((await request(s.url, 'GET', CTS)).json.items, []);
});
