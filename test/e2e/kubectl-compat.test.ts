/**
 * Issue 19 (part 1) as kubectl v1.32 meets it, against a server under `--api-domain k8s.io`
 * (upstream names): create priorityclass and CRDs with descriptions (strict validation),
 * `kubectl debug` (pods/ephemeralcontainers), `kubectl autoscale` (HPA defaults), and the
 * storageVersionHash of upstream-named groups.
 */
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { kubectlWithServer } from '../helpers/kubectl.js';
import { request } from '../helpers/server.js';
import { until } from '../helpers/poll.js';
import { gnosticDocumentType } from '../../src/api/gnostic-v2.js';
import { OPENAPI_V2_PROTOBUF } from '../../src/api/openapi-v2-protobuf.js';

const k = kubectlWithServer('compat', ['--api-domain', 'k8s.io']);

const CRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
spec:
  group: example.com
  names: {plural: widgets, singular: widget, kind: Widget, listKind: WidgetList}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    additionalPrinterColumns:
    - {name: Size, type: integer, jsonPath: .spec.size, description: How big the widget is.}
    schema:
      openAPIV3Schema:
        type: object
        description: A widget.
        externalDocs: {description: More, url: "https://example.com"}
        properties:
          spec:
            type: object
            description: The desired state.
            properties:
              size: {type: integer, description: How big.}
`;

// The tests below are steps of one scenario, as upstream's test/cmd functions are: run them in order
// (the file runs alone; a single step alone has nothing to work on).
describe('upstream compatibility items, a scenario in order (later items use the CRDs of earlier ones)', () => {
  test('item 1: kubectl create priorityclass --description and a CRD documenting its fields (strict validation)', async () => {
    assert.match(
      await k.ok('create', 'priorityclass', 'x', '--value', '10', '--description', 'd'),
      /priorityclass.scheduling.k8s.io\/x created/,
    );
    assert.equal(await k.ok('get', 'priorityclass', 'x', '-o', 'jsonpath={.description}'), 'd');
    const file = join(k.dir, 'crd.yaml');
    writeFileSync(file, CRD);
    assert.match(await k.ok('create', '-f', file), /widgets.example.com created/);
  });

  test('item 2: kubectl debug adds an ephemeral container; upstream validation; pods/resize is off', async () => {
    await k.ok('run', 'p', '--image=busybox', '--restart=Never');
    const debug = await k.kubectl('debug', 'pod/p', '--image=busybox', '-c', 'dbg', '--profile=general');
    assert.equal(debug.code, 0, debug.stderr);
    assert.equal(await k.ok('get', 'pod', 'p', '-o', 'jsonpath={.spec.ephemeralContainers[*].name}'), 'dbg');
    const clash = await k.kubectl('debug', 'pod/p', '--image=busybox', '-c', 'p', '--profile=general');
    assert.notEqual(clash.code, 0);
    assert.match(clash.stderr, /spec.ephemeralContainers\[1\].name: Duplicate value: "p"/);
    const path = '/api/v1/namespaces/default/pods/p/ephemeralcontainers';
    const pod = (await request(k.url, 'GET', path)).json;
    assert.equal(pod.kind, 'Pod');
    // PUT: only ephemeral containers change; ports and probes are refused; existing ones are fixed
    const put = (spec: object) => request(k.url, 'PUT', path, { ...pod, spec: { ...pod.spec, ...spec } });
    const withPorts = await put({
      ephemeralContainers: [
        ...pod.spec.ephemeralContainers,
        {
          name: 'e2',
          image: 'busybox',
          ports: [{ containerPort: 80 }],
          livenessProbe: { exec: { command: ['true'] } },
        },
      ],
    });
    assert.equal(withPorts.status, 422);
    assert.equal(
      withPorts.json.message,
      'Pod "p" is invalid: spec.ephemeralContainers[1].ports: Forbidden: cannot be set for an Ephemeral Container, spec.ephemeralContainers[1].livenessProbe: Forbidden: cannot be set for an Ephemeral Container',
    );
    const removed = await put({ ephemeralContainers: [] });
    assert.equal(removed.status, 422);
    assert.equal(
      removed.json.details.causes[0].message,
      'Forbidden: existing ephemeral containers "dbg" may not be removed\n',
    );
    const added = await put({
      containers: [{ name: 'p', image: 'nginx' }],
      ephemeralContainers: [...pod.spec.ephemeralContainers, { name: 'e3', image: 'busybox' }],
    });
    assert.equal(added.status, 200, added.text);
    assert.deepEqual(
      added.json.spec.ephemeralContainers.map((c: any) => c.name),
      ['dbg', 'e3'],
    );
    assert.equal(added.json.spec.containers[0].image, 'busybox'); // not an ephemeral container: ignored
    for (const [type, body] of [
      ['application/merge-patch+json', '{"spec":{"ephemeralContainers":[{"name":"dbg","image":"busybox"}]}}'],
      [
        'application/json-patch+json',
        '[{"op":"add","path":"/spec/ephemeralContainers/-","value":{"name":"e4","image":"busybox"}}]',
      ],
    ] as const) {
      const r = await request(k.url, 'PATCH', path, body, { 'content-type': type });
      if (type === 'application/merge-patch+json') assert.equal(r.status, 422, r.text);
      else
        assert.deepEqual(
          r.json.spec.ephemeralContainers.map((c: any) => c.name),
          ['dbg', 'e3', 'e4'],
        );
    }
    const resources = (await request(k.url, 'GET', '/api/v1')).json.resources.map((r: any) => r.name);
    assert.ok(resources.includes('pods/ephemeralcontainers'));
    assert.ok(!resources.includes('pods/resize'));
    assert.equal(
      (
        await request(k.url, 'PATCH', '/api/v1/namespaces/default/pods/p/resize', '{}', {
          'content-type': 'application/merge-patch+json',
        })
      ).status,
      404,
    );
  });

  test('item 10: kubectl autoscale shows the defaulted CPU target and minimum', async () => {
    await k.ok('create', 'deployment', 'web', '--image=nginx');
    assert.match(
      await k.ok('autoscale', 'deployment', 'web', '--max=5'),
      /horizontalpodautoscaler.autoscaling\/web autoscaled/,
    );
    const out = await k.ok('get', 'hpa', 'web');
    const [head, row] = out
      .trim()
      .split('\n')
      .map((l) => l.trim().split(/\s{2,}/));
    assert.deepEqual(head, ['NAME', 'REFERENCE', 'TARGETS', 'MINPODS', 'MAXPODS', 'REPLICAS', 'AGE']);
    assert.deepEqual(row!.slice(0, 5), ['web', 'Deployment/web', 'cpu: <unknown>/80%', '1', '5']);
  });

  test('item 14: storageVersionHash over the upstream group names (--api-domain k8s.io)', async () => {
    const hash = async (gv: string, name: string) =>
      (await request(k.url, 'GET', gv)).json?.resources?.find((r: any) => r.name === name)?.storageVersionHash;
    assert.equal(await hash('/apis/rbac.authorization.k8s.io/v1', 'roles'), '7FuwZcIIItM=');
    assert.equal(await hash('/apis/events.k8s.io/v1', 'events'), 'r2yiGXH7wu8=');
    assert.equal(await hash('/apis/scheduling.k8s.io/v1', 'priorityclasses'), '1QwjyaZjj3Y=');
    const expected = (gvk: string) => createHash('sha256').update(gvk).digest().subarray(0, 8).toString('base64');
    assert.equal(
      await hash('/apis/apiextensions.k8s.io/v1', 'customresourcedefinitions'),
      expected('apiextensions.k8s.io/v1/CustomResourceDefinition'),
    );
    // a custom resource: its CRD's storage version
    assert.equal(
      await until(async () => hash('/apis/example.com/v1', 'widgets'), 'widgets served'),
      expected('example.com/v1/Widget'),
    );
  });

  test('item 3: /openapi/v2 as Protobuf: kubectl apply of a List and the unknown-kind message; upstream names under k8s.io', async () => {
    const list = join(k.dir, 'list.yaml');
    writeFileSync(
      list,
      'apiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: ConfigMap, metadata: {name: l1}, data: {a: "1"}}\n- {apiVersion: v1, kind: ConfigMap, metadata: {name: l2}}\n',
    );
    assert.equal(await k.ok('apply', '-f', list), 'configmap/l1 created\nconfigmap/l2 created\n');
    const unknown = join(k.dir, 'unknown.yaml');
    writeFileSync(unknown, 'apiVersion: example.com/v1\nkind: Nope\nmetadata: {name: x}\n');
    const r = await k.kubectl('apply', '-f', unknown);
    assert.notEqual(r.code, 0);
    assert.equal(
      r.stderr,
      `error: resource mapping not found for name: "x" namespace: "" from "${unknown}": no matches for kind "Nope" in version "example.com/v1"\nensure CRDs are installed first\n`,
    );
    const res = await fetch(`${k.url}/openapi/v2`, { headers: { accept: OPENAPI_V2_PROTOBUF } });
    assert.equal(res.headers.get('content-type'), 'application/com.github.proto-openapi.spec.v2.v1.0+protobuf');
    const etag = res.headers.get('etag');
    assert.match(etag ?? '', /^"[0-9A-F]{128}"$/);
    const doc = gnosticDocumentType()
      .decode(new Uint8Array(await res.arrayBuffer()))
      .toJSON();
    const pod = doc.definitions.additional_properties.find((d: any) => d.name === 'io.k8s.api.core.v1.Pod');
    assert.deepEqual(
      pod.value.vendor_extension.map((e: any) => [e.name, JSON.parse(e.value.yaml)]),
      [['x-kubernetes-group-version-kind', [{ group: '', kind: 'Pod', version: 'v1' }]]],
    );
    assert.equal(
      pod.value.properties.additional_properties.find((p: any) => p.name === 'spec').value._ref,
      '#/definitions/io.k8s.api.core.v1.PodSpec',
    );
    const again = await fetch(`${k.url}/openapi/v2`, {
      headers: { accept: 'application/json', 'if-none-match': etag! },
    });
    assert.equal(again.status, 304);
    assert.equal((await fetch(`${k.url}/openapi/v2`, { headers: { accept: 'text/html' } })).status, 406);
    const json = JSON.stringify((await request(k.url, 'GET', '/openapi/v2')).json);
    const v3 = JSON.stringify((await request(k.url, 'GET', '/openapi/v3/apis/apps/v1')).json);
    for (const text of [json, v3])
      for (const word of ['io.plat.', 'x-plat-', 'plat.io', 'vnd.platform']) assert.ok(!text.includes(word), word);
    assert.ok(
      json.includes('"io.k8s.api.apps.v1.Deployment"') &&
        v3.includes('#/components/schemas/io.k8s.api.apps.v1.Deployment'),
    );
  });
});
