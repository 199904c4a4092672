/**
 * Client incompatibilities of issue 19 (part 1), each reproduced over HTTP as the client sent it:
 * strict validation of `description` properties, Protobuf bodies with Go's zero values, PUT with
 * resourceVersion "0", HorizontalPodAutoscaler defaults, Service clusterIP updates, CRD
 * `additionalProperties: true` beside properties, and discovery's storageVersionHash.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { ProtobufCodec, PROTOBUF_MEDIA_TYPE } from '../../src/codec/protobuf.js';
import { encodeCbor } from '../../src/codec/cbor.js';
import { startServer, request, configMap, type TestServer } from '../helpers/server.js';
import { until } from '../helpers/poll.js';
import { kubectlRunner } from '../helpers/kubectl.js';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const codec = new ProtobufCodec();
let s: TestServer;
before(async () => {
  s = await startServer();
});
after(async () => {
  await s.stop();
  s.cleanup();
});

const STRICT = '?fieldValidation=Strict';

function crd(name: string, spec: Record<string, unknown>): object {
  return {
    apiVersion: 'apiextensions.plat.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${name}s.example.com` },
    spec: {
      group: 'example.com',
      scope: 'Namespaced',
      names: {
        plural: `${name}s`,
        singular: name,
        kind: name[0]!.toUpperCase() + name.slice(1),
        listKind: `${name[0]!.toUpperCase()}${name.slice(1)}List`,
      },
      versions: [
        {
          name: 'v1',
          served: true,
          storage: true,
          schema: { openAPIV3Schema: { type: 'object', description: 'documented', properties: { spec } } },
        },
      ],
    },
  };
}

async function served(path: string): Promise<void> {
  await until(async () => ((await request(s.url, 'GET', path)).status === 200 ? true : undefined), `${path} served`);
}

test('item 1: a PriorityClass description and CRD schema descriptions pass strict field validation', async () => {
  const pc = await request(s.url, 'POST', `/apis/scheduling.plat.io/v1/priorityclasses${STRICT}`, {
    apiVersion: 'scheduling.plat.io/v1',
    kind: 'PriorityClass',
    metadata: { name: 'described' },
    value: 10,
    description: 'd',
  });
  assert.equal(pc.status, 201, pc.text);
  assert.equal(pc.json.description, 'd');
  const c = await request(
    s.url,
    'POST',
    `/apis/apiextensions.plat.io/v1/customresourcedefinitions${STRICT}`,
    crd('gadget', {
      type: 'object',
      description: 'the spec',
      properties: { size: { type: 'integer', description: 'how big' } },
    }),
  );
  assert.equal(c.status, 201, c.text);
  assert.equal(c.json.spec.versions[0].schema.openAPIV3Schema.properties.spec.properties.size.description, 'how big');
});

test('item 5: a Pod created as Protobuf (zero values on the wire, as Go writes them) equals the JSON-created Pod', async () => {
  const spec = (zeros: boolean) => ({
    ...(zeros ? { hostIPC: false, hostNetwork: false, hostname: '', nodeName: '' } : {}),
    automountServiceAccountToken: false, // a pointer: its false is a value
    containers: [{ name: 'c', image: 'busybox', ...(zeros ? { stdin: false, tty: false, workingDir: '' } : {}) }],
  });
  const pod = (name: string, zeros: boolean) => ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, ...(zeros ? { generateName: '' } : {}) },
    spec: spec(zeros),
  });
  const bin = await fetch(`${s.url}/api/v1/namespaces/default/pods?fieldManager=m`, {
    method: 'POST',
    headers: { 'content-type': PROTOBUF_MEDIA_TYPE },
    body: codec.encodeObject(pod('p', true)) as BodyInit,
  });
  assert.equal(bin.status, 201, await bin.clone().text());
  const json = await request(s.url, 'POST', '/api/v1/namespaces/default/pods?fieldManager=m', pod('j', false));
  assert.equal(json.status, 201, json.text);
  const viaProtobuf = (await request(s.url, 'GET', '/api/v1/namespaces/default/pods/p')).json;
  const strip = (o: any) => {
    const { name: _n, uid: _u, resourceVersion: _r, creationTimestamp: _c, managedFields, ...meta } = o.metadata;
    return {
      ...o,
      metadata: { ...meta, managedFields: managedFields.map((m: any) => ({ ...m, time: undefined })) },
      spec: {
        ...o.spec,
        volumes: undefined,
        containers: o.spec.containers.map((x: any) => ({ ...x, volumeMounts: undefined })),
      },
    };
  };
  assert.equal(viaProtobuf.spec.hostIPC, undefined);
  assert.equal(viaProtobuf.spec.containers[0].workingDir, undefined);
  assert.equal(viaProtobuf.spec.automountServiceAccountToken, false);
  assert.equal(viaProtobuf.metadata.generateName, undefined);
  assert.deepEqual(strip(viaProtobuf), strip(json.json));
  const owned = JSON.stringify(viaProtobuf.metadata.managedFields);
  for (const f of ['f:hostIPC', 'f:hostname', 'f:stdin', 'f:workingDir', 'f:generateName'])
    assert.ok(!owned.includes(f), `managedFields claim ${f}`);
  assert.ok(owned.includes('f:automountServiceAccountToken'));
});

test('item 9: PUT with resourceVersion "0" is unconditional; custom resources (no unconditional update) answer 422', async () => {
  assert.equal((await request(s.url, 'POST', '/api/v1/namespaces/default/configmaps', configMap('rv0'))).status, 201);
  const put = await request(s.url, 'PUT', '/api/v1/namespaces/default/configmaps/rv0', {
    ...configMap('rv0', {}, { k: 'new' }),
    metadata: { name: 'rv0', resourceVersion: '0' },
  });
  assert.equal(put.status, 200, put.text);
  assert.deepEqual(put.json.data, { k: 'new' });
  assert.notEqual(put.json.metadata.resourceVersion, '0');
  assert.equal(
    (
      await request(
        s.url,
        'POST',
        '/apis/apiextensions.plat.io/v1/customresourcedefinitions',
        crd('sprocket', { type: 'object', 'x-plat-preserve-unknown-fields': true }),
      )
    ).status,
    201,
  );
  await served('/apis/example.com/v1/namespaces/default/sprockets');
  const cr = (rv?: string) => ({
    apiVersion: 'example.com/v1',
    kind: 'Sprocket',
    metadata: { name: 'x', ...(rv ? { resourceVersion: rv } : {}) },
    spec: { a: 1 },
  });
  assert.equal((await request(s.url, 'POST', '/apis/example.com/v1/namespaces/default/sprockets', cr())).status, 201);
  for (const rv of [undefined, '0']) {
    const r = await request(s.url, 'PUT', '/apis/example.com/v1/namespaces/default/sprockets/x', cr(rv));
    assert.equal(r.status, 422, r.text);
    assert.equal(
      r.json.message,
      'sprockets.example.com "x" is invalid: metadata.resourceVersion: Invalid value: 0x0: must be specified for an update',
    );
  }
});

test('item 10: HorizontalPodAutoscaler defaults (autoscaling/v2; a v1 write reads back with v2 defaults)', async () => {
  const hpa = (v: string, spec: object) => ({
    apiVersion: `autoscaling/${v}`,
    kind: 'HorizontalPodAutoscaler',
    metadata: { name: `h${v}` },
    spec: { scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' }, maxReplicas: 5, ...spec },
  });
  const v2 = await request(
    s.url,
    'POST',
    '/apis/autoscaling/v2/namespaces/default/horizontalpodautoscalers',
    hpa('v2', { behavior: { scaleDown: { stabilizationWindowSeconds: 60 } } }),
  );
  assert.equal(v2.status, 201, v2.text);
  assert.equal(v2.json.spec.minReplicas, 1);
  assert.deepEqual(v2.json.spec.metrics, [
    { type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 80 } } },
  ]);
  assert.deepEqual(v2.json.spec.behavior, {
    scaleUp: {
      stabilizationWindowSeconds: 0,
      selectPolicy: 'Max',
      policies: [
        { type: 'Pods', value: 4, periodSeconds: 15 },
        { type: 'Percent', value: 100, periodSeconds: 15 },
      ],
    },
    scaleDown: {
      stabilizationWindowSeconds: 60,
      selectPolicy: 'Max',
      policies: [{ type: 'Percent', value: 100, periodSeconds: 15 }],
    },
  });
  const v1 = await request(
    s.url,
    'POST',
    '/apis/autoscaling/v1/namespaces/default/horizontalpodautoscalers',
    hpa('v1', {}),
  );
  assert.equal(v1.status, 201, v1.text);
  assert.equal(v1.json.spec.minReplicas, 1);
  const read = (await request(s.url, 'GET', '/apis/autoscaling/v2/namespaces/default/horizontalpodautoscalers/hv1'))
    .json;
  assert.equal(read.spec.metrics[0].resource.target.averageUtilization, 80);
  assert.equal(read.spec.behavior, undefined);
});

test('item 12: Service clusterIP on update: may not change once set; ExternalName with clusterIP "" clears both', async () => {
  const svc = {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: 'web' },
    spec: { selector: { app: 'web' }, ports: [{ port: 80 }] },
  };
  const made = (await request(s.url, 'POST', '/api/v1/namespaces/default/services', svc)).json;
  const changed = await request(s.url, 'PUT', '/api/v1/namespaces/default/services/web', {
    ...made,
    spec: { ...made.spec, clusterIP: '10.0.0.250' },
  });
  assert.equal(changed.status, 422, changed.text);
  assert.equal(
    changed.json.message,
    'Service "web" is invalid: spec.clusterIPs[0]: Invalid value: []string{"10.0.0.250"}: may not change once set',
  );
  const ext = await request(s.url, 'PUT', '/api/v1/namespaces/default/services/web', {
    ...made,
    spec: { ...made.spec, type: 'ExternalName', externalName: 'db.example.com', clusterIP: '' },
  });
  assert.equal(ext.status, 200, ext.text);
  assert.deepEqual(
    [ext.json.spec.clusterIP, ext.json.spec.clusterIPs, ext.json.spec.ipFamilies],
    [undefined, undefined, undefined],
  );
  const back = await request(s.url, 'PUT', '/api/v1/namespaces/default/services/web', {
    ...ext.json,
    spec: { ...ext.json.spec, type: 'ClusterIP', externalName: undefined },
  });
  assert.equal(back.status, 200, back.text);
  assert.match(back.json.spec.clusterIP, /^10\.0\.0\.\d+$/);
  assert.deepEqual(back.json.spec.clusterIPs, [back.json.spec.clusterIP]);
});

test('item 13: CRD additionalProperties: true beside properties is allowed (unknown fields kept); a schema there is refused', async () => {
  const ok = await request(
    s.url,
    'POST',
    '/apis/apiextensions.plat.io/v1/customresourcedefinitions',
    crd('widget', { type: 'object', additionalProperties: true, properties: { size: { type: 'integer' } } }),
  );
  assert.equal(ok.status, 201, ok.text);
  await served('/apis/example.com/v1/namespaces/default/widgets');
  const w = await request(s.url, 'POST', '/apis/example.com/v1/namespaces/default/widgets', {
    apiVersion: 'example.com/v1',
    kind: 'Widget',
    metadata: { name: 'w' },
    spec: { size: 3, color: 'red' },
  });
  assert.equal(w.status, 201, w.text);
  assert.deepEqual(w.json.spec, { size: 3, color: 'red' });
  const bad = await request(
    s.url,
    'POST',
    '/apis/apiextensions.plat.io/v1/customresourcedefinitions',
    crd('gizmo', {
      type: 'object',
      additionalProperties: { type: 'string' },
      properties: { size: { type: 'integer' } },
    }),
  );
  assert.equal(bad.status, 422, bad.text);
  // one schema for every version: upstream reports it hoisted to spec.validation
  assert.match(
    bad.json.message,
    /spec\.validation\.openAPIV3Schema\.properties\[spec\]\.additionalProperties: Forbidden: additionalProperties and properties are mutual exclusive/,
  );
});

test('item 14: legacy discovery carries upstream storageVersionHash values (storage version, shared storage)', async () => {
  const hash = async (path: string, name: string) =>
    (await request(s.url, 'GET', path)).json.resources.find((r: any) => r.name === name)?.storageVersionHash;
  assert.equal(await hash('/api/v1', 'pods'), 'xPOwRZ+Yhw8=');
  assert.equal(await hash('/api/v1', 'configmaps'), 'qFsyl6wFWjQ=');
  assert.equal(await hash('/api/v1', 'pods/status'), undefined);
  assert.equal(await hash('/api/v1', 'bindings'), undefined);
  assert.equal(await hash('/apis/apps/v1', 'deployments'), '8aSe+NMegvE=');
  // events.<domain>/v1 is stored as core v1 Events; both HPA versions in autoscaling/v2
  assert.equal(await hash('/apis/events.plat.io/v1', 'events'), 'r2yiGXH7wu8=');
  assert.equal(await hash('/apis/autoscaling/v1', 'horizontalpodautoscalers'), 'qwQve8ut294=');
  assert.equal(await hash('/apis/autoscaling/v2', 'horizontalpodautoscalers'), 'qwQve8ut294=');
  assert.equal(await hash('/apis/authentication.plat.io/v1', 'tokenreviews'), undefined);
});

test('item 4: DELETE and DELETE collection take DeleteOptions as Protobuf (any group version in the envelope) and YAML', async () => {
  const del = (path: string, body: Uint8Array | string, type: string) =>
    fetch(s.url + path, { method: 'DELETE', headers: { 'content-type': type }, body: body as BodyInit });
  for (const [i, apiVersion] of ['v1', 'meta.k8s.io/v1', 'apps/v1'].entries()) {
    assert.equal(
      (await request(s.url, 'POST', '/api/v1/namespaces/default/configmaps', configMap(`del${i}`))).status,
      201,
    );
    const wrongUid = codec.encodeObject({ apiVersion, kind: 'DeleteOptions', preconditions: { uid: 'not-the-uid' } });
    const refused = await del(
      `/api/v1/namespaces/default/configmaps/del${i}`,
      wrongUid,
      'application/vnd.kubernetes.protobuf',
    );
    assert.equal(refused.status, 409, await refused.text()); // the options were read: the precondition holds the delete back
    const r = await del(
      `/api/v1/namespaces/default/configmaps/del${i}`,
      codec.encodeObject({ apiVersion, kind: 'DeleteOptions', gracePeriodSeconds: 0 }),
      PROTOBUF_MEDIA_TYPE,
    );
    assert.equal(r.status, 200, await r.text());
  }
  assert.equal((await request(s.url, 'POST', '/api/v1/namespaces/default/configmaps', configMap('dely'))).status, 201);
  const y = await del(
    '/api/v1/namespaces/default/configmaps/dely',
    'apiVersion: v1\nkind: DeleteOptions\npreconditions:\n  uid: nope\n',
    'application/yaml',
  );
  assert.equal(y.status, 409, await y.text());
  assert.equal(
    (await request(s.url, 'POST', '/api/v1/namespaces/default/configmaps', configMap('delc', { sweep: 'yes' }))).status,
    201,
  );
  const c = await del(
    '/api/v1/namespaces/default/configmaps?labelSelector=sweep%3Dyes',
    codec.encodeObject({ apiVersion: 'v1', kind: 'DeleteOptions', propagationPolicy: 'Background' }),
    PROTOBUF_MEDIA_TYPE,
  );
  assert.equal(c.status, 200, await c.text());
  assert.equal((await request(s.url, 'GET', '/api/v1/namespaces/default/configmaps/delc')).status, 404);
  const text = await del('/api/v1/namespaces/default/configmaps/dely', 'x', 'text/plain');
  assert.equal(text.status, 415);
});

test('items 2 and 4: with InPlacePodVerticalScaling on, pods/resize changes only container resources; with CBOR on, DELETE takes CBOR options', async () => {
  const on = await startServer(['--feature-gates', 'InPlacePodVerticalScaling=true,CBORServingAndStorage=true']);
  try {
    assert.equal((await request(on.url, 'POST', '/api/v1/namespaces/default/configmaps', configMap('cb'))).status, 201);
    const cborDelete = (uid: string) =>
      fetch(`${on.url}/api/v1/namespaces/default/configmaps/cb`, {
        method: 'DELETE',
        headers: { 'content-type': 'application/cbor' },
        body: encodeCbor({ apiVersion: 'v1', kind: 'DeleteOptions', preconditions: { uid } }) as BodyInit,
      });
    assert.equal((await cborDelete('nope')).status, 409);
    const uid = (await request(on.url, 'GET', '/api/v1/namespaces/default/configmaps/cb')).json.metadata.uid;
    assert.equal((await cborDelete(uid)).status, 200);
    assert.ok((await request(on.url, 'GET', '/api/v1')).json.resources.some((r: any) => r.name === 'pods/resize'));
    const pod = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'r' },
      spec: { containers: [{ name: 'c', image: 'busybox', resources: { requests: { cpu: '100m' } } }] },
    };
    assert.equal((await request(on.url, 'POST', '/api/v1/namespaces/default/pods', pod)).status, 201);
    const patch = { spec: { containers: [{ name: 'c', image: 'nginx', resources: { requests: { cpu: '200m' } } }] } };
    const r = await request(on.url, 'PATCH', '/api/v1/namespaces/default/pods/r/resize', patch, {
      'content-type': 'application/strategic-merge-patch+json',
    });
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(
      [r.json.spec.containers[0].resources.requests.cpu, r.json.spec.containers[0].image],
      ['200m', 'busybox'],
    );
  } finally {
    await on.stop();
    on.cleanup();
  }
});

test('item 3: kubectl apply of a List reads /openapi/v2 as Protobuf (default domain)', async () => {
  const home = mkdtempSync(join(tmpdir(), 'plat-compat-'));
  try {
    const { ok } = kubectlRunner(
      () => s.url,
      () => home,
    );
    const list = join(home, 'list.yaml');
    writeFileSync(
      list,
      'apiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: ConfigMap, metadata: {name: la}}\n- {apiVersion: v1, kind: ConfigMap, metadata: {name: lb}}\n',
    );
    assert.equal(await ok('apply', '-f', list), 'configmap/la created\nconfigmap/lb created\n');
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
});
