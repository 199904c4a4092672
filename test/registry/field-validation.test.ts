/**
 * Field validation over HTTP: repeated keys in JSON and YAML bodies (dropped under Ignore, the
 * last value kept; one Warning each under Warn; in the single 400 under Strict, in upstream's
 * wording and order) and required fields missing on create, update, patch and apply (422, one
 * cause per field, none reported twice).
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, request, requestWithWarnings, type TestServer, type WarningsReply } from '../helpers/server.js';

let s: TestServer;
before(async () => {
  s = await startServer();
});
after(async () => {
  await s.stop();
  s.cleanup();
});

const DEP = '/apis/apps/v1/namespaces/default/deployments';
const CM = '/api/v1/namespaces/default/configmaps';
const APPLY = 'application/apply-patch+yaml';
const MERGE = 'application/merge-patch+json';
const SMP = 'application/strategic-merge-patch+json';
const JSON_PATCH = 'application/json-patch+json';

/** A request keeping every Warning header line (fetch joins repeated headers), texts unquoted. */
async function send(
  method: string,
  path: string,
  body: string,
  contentType = 'application/json',
): Promise<WarningsReply> {
  const r = await requestWithWarnings(s.url, method, path, body, contentType);
  return { ...r, warnings: r.warnings.map((w) => JSON.parse(w.replace(/^299 - /, ''))) };
}

/** Upstream's integration-test body: repeats and unknown fields at several depths. */
const invalidJson = (name: string) => `{
  "apiVersion": "apps/v1",
  "kind": "Deployment",
  "metadata": {
    "name": "dupename",
    "name": "${name}",
    "labels": {"app": "nginx"},
    "unknownMeta": "metaVal"
  },
  "spec": {
    "unknown1": "val1",
    "unknownDupe": "valDupe",
    "unknownDupe": "valDupe2",
    "paused": true,
    "paused": false,
    "selector": {"matchLabels": {"app": "nginx"}},
    "template": {
      "metadata": {"labels": {"app": "nginx"}},
      "spec": {"containers": [{
        "name": "nginx",
        "image": "nginx:latest",
        "unknownNested": "val1",
        "imagePullPolicy": "Always",
        "imagePullPolicy": "Never"
      }]}
    }
  }
}`;

const TYPED_FINDINGS = [
  'duplicate field "metadata.name"',
  'unknown field "metadata.unknownMeta"',
  'unknown field "spec.unknown1"',
  'unknown field "spec.unknownDupe"',
  'duplicate field "spec.paused"',
  'unknown field "spec.template.spec.containers[0].unknownNested"',
  'duplicate field "spec.template.spec.containers[0].imagePullPolicy"',
];

test('JSON create with repeated keys: Warn lists them in document order, the last value wins', async () => {
  const r = await send('POST', DEP, invalidJson('fv-dup-warn'));
  assert.equal(r.status, 201, JSON.stringify(r.json));
  assert.deepEqual(r.warnings, TYPED_FINDINGS);
  assert.equal(r.json.metadata.name, 'fv-dup-warn');
  assert.equal(r.json.spec.paused, false);
  assert.equal(r.json.spec.template.spec.containers[0].imagePullPolicy, 'Never');
});

test('JSON create with repeated keys: Strict is one 400 listing repeats and unknown fields; Ignore says nothing', async () => {
  const strict = await send('POST', `${DEP}?fieldValidation=Strict`, invalidJson('fv-dup-strict'));
  assert.equal(strict.status, 400);
  assert.equal(strict.json.reason, 'BadRequest');
  assert.equal(strict.json.message, `strict decoding error: ${TYPED_FINDINGS.join(', ')}`);
  assert.equal((await request(s.url, 'GET', `${DEP}/fv-dup-strict`)).status, 404);
  const ignore = await send('POST', `${DEP}?fieldValidation=Ignore`, invalidJson('fv-dup-ignore'));
  assert.equal(ignore.status, 201);
  assert.deepEqual(ignore.warnings, []);
  assert.equal(ignore.json.spec.paused, false);
});

test('PUT with repeated keys warns the same way', async () => {
  const created = await send('POST', DEP, invalidJson('fv-dup-put'));
  assert.equal(created.status, 201);
  const body = invalidJson('fv-dup-put').replace(
    '"name": "dupename",',
    `"name": "dupename", "resourceVersion": "${created.json.metadata.resourceVersion}",`,
  );
  const r = await send('PUT', `${DEP}/fv-dup-put`, body);
  assert.equal(r.status, 200, JSON.stringify(r.json));
  assert.deepEqual(r.warnings, TYPED_FINDINGS);
});

test('YAML create: repeats as `line N: key "k" already set in map`, then unknown fields sorted', async () => {
  const yaml = [
    'apiVersion: v1',
    'kind: ConfigMap',
    'metadata:',
    '  name: dupename',
    '  name: fv-dup-yaml',
    '  zzz: 1',
    'data:',
    '  a: "1"',
    '  a: "2"',
    'bogus: true',
    '',
  ].join('\n');
  const warn = await send('POST', CM, yaml, 'application/yaml');
  assert.equal(warn.status, 201, JSON.stringify(warn.json));
  assert.deepEqual(warn.warnings, [
    'line 5: key "name" already set in map',
    'line 9: key "a" already set in map',
    'unknown field "bogus"',
    'unknown field "metadata.zzz"',
  ]);
  assert.deepEqual([warn.json.metadata.name, warn.json.data], ['fv-dup-yaml', { a: '2' }]);
  const strict = await send(
    'POST',
    `${CM}?fieldValidation=Strict`,
    yaml.replace('fv-dup-yaml', 'fv-dup-yaml2'),
    'application/yaml',
  );
  assert.equal(strict.status, 400);
  assert.equal(
    strict.json.message,
    'strict decoding error: yaml: unmarshal errors:\n  line 5: key "name" already set in map\n  line 9: key "a" already set in map, unknown field "bogus", unknown field "metadata.zzz"',
  );
});

test("merge and strategic patches: the patch's repeats first, then unknown fields sorted", async () => {
  assert.equal((await send('POST', DEP, invalidJson('fv-dup-patch'))).status, 201);
  const patch =
    '{"spec": {"unknown1": 1, "paused": true, "paused": false, "template": {"spec": {"containers": [{"name": "nginx", "image": "nginx:latest", "imagePullPolicy": "Always", "imagePullPolicy": "Never"}]}}}}';
  const expected = [
    'duplicate field "spec.paused"',
    'duplicate field "spec.template.spec.containers[0].imagePullPolicy"',
    'unknown field "spec.unknown1"',
  ];
  for (const type of [MERGE, SMP]) {
    const warn = await send('PATCH', `${DEP}/fv-dup-patch`, patch, type);
    assert.equal(warn.status, 200, `${type}: ${JSON.stringify(warn.json)}`);
    assert.deepEqual(warn.warnings, expected, type);
    const strict = await send('PATCH', `${DEP}/fv-dup-patch?fieldValidation=Strict`, patch, type);
    assert.equal(strict.status, 400, type);
    assert.equal(strict.json.message, `strict decoding error: ${expected.join(', ')}`);
  }
});

test("JSON patch: a repeated key in an operation is reported, with the operation's index", async () => {
  await send(
    'POST',
    CM,
    '{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "fv-dup-jp"}, "data": {"a": "1"}}',
  );
  const ops = '[{"op": "add", "path": "/data/x", "path": "/data/b", "value": "2"}]';
  const warn = await send('PATCH', `${CM}/fv-dup-jp`, ops, JSON_PATCH);
  assert.equal(warn.status, 200);
  assert.deepEqual(warn.warnings, ['json patch duplicate field "[0].path"']);
  assert.deepEqual(warn.json.data, { a: '1', b: '2' });
  const strict = await send('PATCH', `${CM}/fv-dup-jp?fieldValidation=Strict`, ops, JSON_PATCH);
  assert.equal(strict.status, 400);
  assert.equal(strict.json.message, 'strict decoding error: json patch duplicate field "[0].path"');
});

test('apply (JSON or YAML text): repeats worded as YAML lines; Strict fails at decoding', async () => {
  const body = '{\n  "apiVersion": "v1",\n  "kind": "ConfigMap",\n  "data": {\n    "a": "1",\n    "a": "2"\n  }\n}';
  const warn = await send('PATCH', `${CM}/fv-dup-apply?fieldManager=m`, body, APPLY);
  assert.equal(warn.status, 201, JSON.stringify(warn.json));
  assert.deepEqual(warn.warnings, ['line 6: key "a" already set in map']);
  assert.deepEqual(warn.json.data, { a: '2' });
  const yaml = await send(
    'PATCH',
    `${CM}/fv-dup-apply?fieldManager=m`,
    'apiVersion: v1\nkind: ConfigMap\ndata:\n  a: "3"\n  a: "4"\n',
    APPLY,
  );
  assert.equal(yaml.status, 200);
  assert.deepEqual(yaml.warnings, ['line 5: key "a" already set in map']);
  assert.deepEqual(yaml.json.data, { a: '4' });
  const strict = await send('PATCH', `${CM}/fv-dup-apply?fieldManager=m&fieldValidation=Strict`, body, APPLY);
  assert.equal(strict.status, 400);
  assert.equal(
    strict.json.message,
    'error strict decoding YAML: error converting YAML to JSON: yaml: unmarshal errors:\n  line 6: key "a" already set in map',
  );
});

const fields = (r: { json: any }) => r.json.details.causes.map((c: any) => `${c.field}: ${c.message}`);

const dep = (name: string, container: Record<string, unknown>) => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name },
  spec: {
    selector: { matchLabels: { app: name } },
    template: { metadata: { labels: { app: name } }, spec: { containers: [container] } },
  },
});

test('missing required fields are 422 Invalid with one cause per field, each reported once', async () => {
  const hpa = {
    apiVersion: 'autoscaling/v2',
    kind: 'HorizontalPodAutoscaler',
    metadata: { name: 'fv-req-hpa' },
    spec: { minReplicas: 1 },
  };
  const h = await request(s.url, 'POST', '/apis/autoscaling/v2/namespaces/default/horizontalpodautoscalers', hpa);
  assert.equal(h.status, 422, h.text);
  assert.equal(h.json.reason, 'Invalid');
  assert.deepEqual(fields(h), ['spec.scaleTargetRef: Required value', 'spec.maxReplicas: Required value']);
  // the kind's own validation reports the container's name; the schema adds the env var's, once each
  const d = await request(s.url, 'POST', DEP, dep('fv-req-dep', { image: 'nginx:1', env: [{ value: 'x' }] }));
  assert.equal(d.status, 422, d.text);
  assert.deepEqual(fields(d), [
    'spec.template.spec.containers[0].name: Required value',
    'spec.template.spec.containers[0].env[0].name: Required value',
  ]);
});

test('required fields are checked on update, patch and apply too', async () => {
  assert.equal((await request(s.url, 'POST', DEP, dep('fv-req-up', { name: 'c', image: 'nginx:1' }))).status, 201);
  const live = (await request(s.url, 'GET', `${DEP}/fv-req-up`)).json;
  live.spec.template.spec.containers[0].env = [{ value: 'x' }];
  const put = await request(s.url, 'PUT', `${DEP}/fv-req-up`, live);
  assert.equal(put.status, 422, put.text);
  assert.deepEqual(fields(put), ['spec.template.spec.containers[0].env[0].name: Required value']);
  const merge = await request(
    s.url,
    'PATCH',
    `${DEP}/fv-req-up`,
    { spec: { template: { spec: { volumes: [{ emptyDir: {} }] } } } },
    { 'content-type': MERGE },
  );
  assert.equal(merge.status, 422, merge.text);
  assert.deepEqual(fields(merge), ['spec.template.spec.volumes[0].name: Required value']);
  const applied = {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    spec: { template: { spec: { containers: [{ name: 'c', ports: [{ name: 'p' }] }] } } },
  };
  const a = await request(s.url, 'PATCH', `${DEP}/fv-req-up?fieldManager=m`, applied, { 'content-type': APPLY });
  assert.equal(a.status, 422, a.text);
  assert.deepEqual(fields(a), ['spec.template.spec.containers[0].ports[0].containerPort: Required value']);
  const create = await request(
    s.url,
    'PATCH',
    `${DEP}/fv-req-new?fieldManager=m`,
    { apiVersion: 'apps/v1', kind: 'Deployment' },
    { 'content-type': APPLY },
  );
  assert.equal(create.status, 422, create.text);
  assert.ok(fields(create).includes('spec.selector: Required value'), fields(create).join('; '));
  assert.equal((await request(s.url, 'GET', `${DEP}/fv-req-new`)).status, 404);
});

test('required fields upstream accepts missing are not enforced (StatefulSet serviceName)', async () => {
  const sts = {
    apiVersion: 'apps/v1',
    kind: 'StatefulSet',
    metadata: { name: 'fv-req-sts' },
    spec: {
      selector: { matchLabels: { a: 'b' } },
      template: { metadata: { labels: { a: 'b' } }, spec: { containers: [{ name: 'c', image: 'i:1' }] } },
    },
  };
  const r = await request(s.url, 'POST', '/apis/apps/v1/namespaces/default/statefulsets', sts);
  assert.equal(r.status, 201, r.text);
});

test('under another API domain, kinds of domain groups keep their schema (Strict refuses unknown fields)', async () => {
  const k8s = await startServer(['--api-domain', 'k8s.io']);
  try {
    const r = await request(k8s.url, 'POST', '/apis/rbac.authorization.k8s.io/v1/clusterroles?fieldValidation=Strict', {
      metadata: { name: 'r' },
      rules: [],
      bogus: 1,
    });
    assert.equal(r.status, 400, r.text);
    assert.equal(r.json.message, 'strict decoding error: unknown field "bogus"');
  } finally {
    await k8s.stop();
    k8s.cleanup();
  }
});
