/**
 * Out-of-range integers (issue 18 item 8): a value outside its field's Go type (OpenAPI format
 * int32 or int64) is refused on every decode as upstream's typed decode refuses it — never
 * stored, where it would break every typed client's LIST of the kind.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { encodeCbor } from '../../src/codec/cbor.js';
import { startServer, request, type TestServer } from '../helpers/server.js';

let s: TestServer;
before(async () => {
  s = await startServer(['--feature-gates', 'CBORServingAndStorage=true']);
});
after(async () => {
  await s.stop();
  s.cleanup();
});

const DEP = '/apis/apps/v1/namespaces/default/deployments';
const PODS = '/api/v1/namespaces/default/pods';
const INT32_OUT = '2147483648';
const INT64_OUT = '9223372036854775808';

/** A Deployment as JSON text, with `replicas` and a container port written verbatim (big numbers stay exact). */
const deployment = (name: string, replicas: string, port = '80') =>
  `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"${name}"},"spec":{"replicas":${replicas},"selector":{"matchLabels":{"a":"b"}},` +
  `"template":{"metadata":{"labels":{"a":"b"}},"spec":{"containers":[{"name":"c","image":"i","ports":[{"containerPort":${port}}]}]}}}}`;

const cannotHandle = (kind: string, struct: string, field: string, value: string, type: string) =>
  `${kind} in version "v1" cannot be handled as a ${kind}: json: cannot unmarshal number ${value} into Go struct field ${struct}.${field} of type ${type}`;

test("JSON: int32 and int64 fields past their range are 400 with upstream's decode message", async () => {
  for (const value of [INT32_OUT, INT64_OUT, '-2147483649']) {
    const r = await request(s.url, 'POST', DEP, deployment('d', value));
    assert.equal(r.status, 400, r.text);
    assert.equal(r.json.reason, 'BadRequest');
    assert.equal(r.json.message, cannotHandle('Deployment', 'DeploymentSpec', 'spec.replicas', value, 'int32'));
  }
  const port = await request(s.url, 'POST', DEP, deployment('d', '1', INT32_OUT));
  assert.equal(port.status, 400);
  assert.equal(
    port.json.message,
    cannotHandle(
      'Deployment',
      'ContainerPort',
      'spec.template.spec.containers.ports.containerPort',
      INT32_OUT,
      'int32',
    ),
  );
  const pod = `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"spec":{"activeDeadlineSeconds":${INT64_OUT},"containers":[{"name":"c","image":"i"}]}}`;
  const p = await request(s.url, 'POST', PODS, pod);
  assert.equal(p.status, 400, p.text);
  assert.equal(p.json.message, cannotHandle('Pod', 'PodSpec', 'spec.activeDeadlineSeconds', INT64_OUT, 'int64'));
});

test('the range edges are accepted (int32 max, int64 within range)', async () => {
  assert.equal((await request(s.url, 'POST', DEP, deployment('edge', '2147483647'))).status, 201);
  const pod = `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"edge"},"spec":{"activeDeadlineSeconds":4294967296,"containers":[{"name":"c","image":"i"}]}}`;
  assert.equal((await request(s.url, 'POST', PODS, pod)).status, 201);
});

test('YAML and CBOR bodies are checked the same way', async () => {
  const yaml =
    `apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: y\nspec:\n  replicas: ${INT32_OUT}\n  selector: {matchLabels: {a: b}}\n` +
    `  template:\n    metadata: {labels: {a: b}}\n    spec: {containers: [{name: c, image: i}]}\n`;
  const y = await request(s.url, 'POST', DEP, yaml, { 'content-type': 'application/yaml' });
  assert.equal(y.status, 400, y.text);
  assert.equal(y.json.message, cannotHandle('Deployment', 'DeploymentSpec', 'spec.replicas', INT32_OUT, 'int32'));
  const body = JSON.parse(deployment('c', '1'));
  body.spec.replicas = 2 ** 31;
  const c = await request(s.url, 'POST', DEP, encodeCbor(body), {
    'content-type': 'application/cbor',
    accept: 'application/json',
  });
  assert.equal(c.status, 400, c.text);
  assert.match(c.json.message, /Go struct field DeploymentSpec\.spec\.replicas of type int32$/);
});

test('patches and the scale subresource are checked too (422 for a patch result, as upstream)', async () => {
  assert.equal((await request(s.url, 'POST', DEP, deployment('p', '1'))).status, 201);
  for (const [type, body] of [
    ['application/merge-patch+json', `{"spec":{"replicas":${INT32_OUT}}}`],
    ['application/strategic-merge-patch+json', `{"spec":{"replicas":${INT64_OUT}}}`],
    ['application/json-patch+json', `[{"op":"replace","path":"/spec/replicas","value":${INT32_OUT}}]`],
  ] as const) {
    const r = await request(s.url, 'PATCH', `${DEP}/p`, body, { 'content-type': type });
    assert.equal(r.status, 422, `${type}: ${r.text.slice(0, 300)}`);
    assert.equal(r.json.reason, 'Invalid');
    assert.equal(r.json.details.causes[0].field, 'patch');
    assert.match(
      r.json.details.causes[0].message,
      /json: cannot unmarshal number [0-9]+ into Go struct field DeploymentSpec\.spec\.replicas of type int32$/,
    );
  }
  const scale = await request(
    s.url,
    'PUT',
    `${DEP}/p/scale`,
    `{"apiVersion":"autoscaling/v1","kind":"Scale","metadata":{"name":"p","namespace":"default"},"spec":{"replicas":${INT32_OUT}}}`,
  );
  assert.equal(scale.status, 400, scale.text);
  assert.equal(scale.json.message, cannotHandle('Scale', 'ScaleSpec', 'spec.replicas', INT32_OUT, 'int32'));
  const scalePatch = await request(s.url, 'PATCH', `${DEP}/p/scale`, `{"spec":{"replicas":${INT32_OUT}}}`, {
    'content-type': 'application/merge-patch+json',
  });
  assert.equal(scalePatch.status, 422, scalePatch.text);
  // nothing out of range was stored: every stored replicas fits an int32
  const list = await request(s.url, 'GET', DEP);
  for (const d of list.json.items) assert.ok(d.spec.replicas <= 2 ** 31 - 1, `${d.metadata.name}: ${d.spec.replicas}`);
});
