/**
 * Inputs upstream refuses and the server took (issue 26, item 6), over the real listener:
 * - CBOR maps with a repeated key or a non-string key (`1` beside `"1"`): upstream's decoder
 *   (DupMapKeyEnforcedAPF into map[string]interface{}) refuses them outright, 400, whatever
 *   fieldValidation says; an unknown field under fieldValidation=Strict is a 400 for CBOR too;
 * - server-side apply of a configuration whose list-map repeats a key: 500 `failed to create
 *   typed patch object (...): <path>: duplicate entries for key [name="c"]`, nothing written;
 * - webhook URLs that are not `https://host[/path]` (admission webhooks, CRD conversion): 422.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, request, type TestServer } from '../helpers/server.js';
import { encodeCbor } from '../../src/codec/cbor.js';

const NS = '/api/v1/namespaces/default';
const ADM = '/apis/admissionregistration.plat.io/v1';
let s: TestServer;

before(async () => {
  s = await startServer(['--feature-gates', 'CBORServingAndStorage=true']);
});
after(async () => {
  await s?.stop();
  s?.cleanup();
});

async function call(method: string, path: string, body: string | Uint8Array, type: string) {
  const res = await fetch(s.url + path, {
    method,
    headers: { 'content-type': type, accept: 'application/json' },
    body: body as BodyInit,
  });
  return { status: res.status, json: (await res.json()) as any, warning: res.headers.get('warning') };
}

/** CBOR text string item. */
const text = (v: string) => encodeCbor(v).subarray(3);
/** A self-described ConfigMap named `name` whose data map is given as raw CBOR key/value items. */
function configMapWithData(name: string, pairs: Uint8Array[][]): Uint8Array {
  const head = [
    text('apiVersion'),
    text('v1'),
    text('kind'),
    text('ConfigMap'),
    text('metadata'),
    encodeCbor({ name }).subarray(3),
    text('data'),
  ];
  return Buffer.concat([
    Uint8Array.of(0xd9, 0xd9, 0xf7, 0xa4),
    ...head,
    Uint8Array.of(0xa0 + pairs.length),
    ...pairs.flat(),
  ]);
}

test('CBOR: a repeated map key is refused outright (400), whatever fieldValidation; Strict refuses unknown fields', async () => {
  for (const validation of ['', '?fieldValidation=Ignore', '?fieldValidation=Strict']) {
    const r = await call(
      'POST',
      `${NS}/configmaps${validation}`,
      configMapWithData('dup', [
        [text('k'), text('1')],
        [text('k'), text('2')],
      ]),
      'application/cbor',
    );
    assert.equal(r.status, 400, JSON.stringify(r.json));
    assert.equal(r.json.reason, 'BadRequest');
    assert.match(r.json.message, /cbor: found duplicate map key "k" at map element index 1/);
  }
  assert.equal((await request(s.url, 'GET', `${NS}/configmaps/dup`)).status, 404);
  const applied = await call(
    'PATCH',
    `${NS}/configmaps/dup?fieldManager=m`,
    configMapWithData('dup', [
      [text('k'), text('1')],
      [text('k'), text('2')],
    ]),
    'application/apply-patch+cbor',
  );
  assert.equal(applied.status, 400, 'an apply patch in CBOR too');
  assert.match(applied.json.message, /cbor: found duplicate map key "k"/);
  // an unknown field (not a repeat) follows fieldValidation, as for JSON (this already held)
  const body = encodeCbor({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'strict' }, bogus: 1 });
  const strict = await call('POST', `${NS}/configmaps?fieldValidation=Strict`, body, 'application/cbor');
  assert.equal(strict.status, 400);
  assert.equal(strict.json.message, 'strict decoding error: unknown field "bogus"');
  const warn = await call('POST', `${NS}/configmaps`, body, 'application/cbor');
  assert.equal(warn.status, 201);
  assert.equal(warn.warning, '299 - "unknown field \\"bogus\\""');
});

test('CBOR: an integer key is not the text key "1" (400, nothing merged)', async () => {
  const r = await call(
    'POST',
    `${NS}/configmaps`,
    configMapWithData('ints', [
      [Uint8Array.of(0x01), text('a')],
      [text('1'), text('b')],
    ]),
    'application/cbor',
  );
  assert.equal(r.status, 400, JSON.stringify(r.json));
  assert.match(r.json.message, /cbor: cannot unmarshal positive integer into Go value of type string/);
  assert.equal((await request(s.url, 'GET', `${NS}/configmaps/ints`)).status, 404);
  const ok = await call(
    'POST',
    `${NS}/configmaps`,
    configMapWithData('texts', [
      [text('1'), text('a')],
      [text('2'), text('b')],
    ]),
    'application/cbor',
  );
  assert.equal(ok.status, 201, 'distinct text keys are fine');
  assert.deepEqual(ok.json.data, { 1: 'a', 2: 'b' });
});

test('server-side apply refuses repeated list-map keys as upstream (500, nothing written)', async () => {
  const pod = (containers: object[]) =>
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'dups', namespace: 'default' },
      spec: { containers },
    });
  const c = (name: string, env: object[] = []) => ({ name, image: 'i', env });
  const one = await call(
    'PATCH',
    `${NS}/pods/dups?fieldManager=m`,
    pod([
      c('a', [
        { name: 'X', value: '1' },
        { name: 'X', value: '2' },
      ]),
    ]),
    'application/apply-patch+yaml',
  );
  assert.equal(one.status, 500, JSON.stringify(one.json));
  assert.equal(one.json.reason, undefined, 'upstream: not a Status error, so no reason');
  assert.equal(
    one.json.message,
    'failed to create typed patch object (default/dups; /v1, Kind=Pod): .spec.containers[name="a"].env: duplicate entries for key [name="X"]',
  );
  const many = await call(
    'PATCH',
    `${NS}/pods/dups?fieldManager=m`,
    pod(Array.from({ length: 2000 }, () => c('c'))),
    'application/apply-patch+yaml',
  );
  assert.equal(many.status, 500);
  const lines = (many.json.message as string).split('\n');
  assert.equal(lines[0], 'failed to create typed patch object (default/dups; /v1, Kind=Pod): errors:');
  assert.equal(lines.length, 2000);
  assert.equal(lines[1], '  .spec.containers: duplicate entries for key [name="c"]');
  assert.equal((await request(s.url, 'GET', `${NS}/pods/dups`)).status, 404);
});

test('webhook URLs must be https://host[/path] (422)', async () => {
  const config = (kind: string, url: string) => ({
    apiVersion: 'admissionregistration.plat.io/v1',
    kind,
    metadata: { name: 'w' },
    webhooks: [{ name: 'w.example.com', clientConfig: { url }, sideEffects: 'None', admissionReviewVersions: ['v1'] }],
  });
  const form = '; desired format: https://host[/path]';
  const cases: [string, { field: string; message: string }[]][] = [
    [
      'http://hook.example.com/admit',
      [
        {
          field: 'webhooks[0].clientConfig.url',
          message: `Invalid value: "http": 'https' is the only allowed URL scheme${form}`,
        },
      ],
    ],
    [
      'https://user:pw@hook.example.com/?a=b#f',
      [
        {
          field: 'webhooks[0].clientConfig.url',
          message: 'Invalid value: "user:pw": user information is not permitted in the URL',
        },
        {
          field: 'webhooks[0].clientConfig.url',
          message: 'Invalid value: "f": fragments are not permitted in the URL',
        },
        {
          field: 'webhooks[0].clientConfig.url',
          message: 'Invalid value: "a=b": query parameters are not permitted in the URL',
        },
      ],
    ],
  ];
  for (const [resource, kind] of [
    ['validatingwebhookconfigurations', 'ValidatingWebhookConfiguration'],
    ['mutatingwebhookconfigurations', 'MutatingWebhookConfiguration'],
  ]) {
    for (const [url, causes] of cases) {
      const r = await request(s.url, 'POST', `${ADM}/${resource}`, config(kind!, url));
      assert.equal(r.status, 422, `${kind} ${url}: ${r.text}`);
      assert.deepEqual(
        r.json.details.causes.map((x: { field: string; message: string }) => ({ field: x.field, message: x.message })),
        causes,
        `${kind} ${url}`,
      );
    }
    assert.equal(
      (await request(s.url, 'POST', `${ADM}/${resource}`, config(kind!, 'https://hook.example.com/admit'))).status,
      201,
    );
  }
  const crd = {
    apiVersion: 'apiextensions.plat.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: 'widgets.example.com' },
    spec: {
      group: 'example.com',
      scope: 'Namespaced',
      names: { plural: 'widgets', singular: 'widget', kind: 'Widget', listKind: 'WidgetList' },
      versions: [
        {
          name: 'v1',
          served: true,
          storage: true,
          schema: { openAPIV3Schema: { type: 'object', 'x-plat-preserve-unknown-fields': true } },
        },
      ],
      conversion: {
        strategy: 'Webhook',
        webhook: { conversionReviewVersions: ['v1'], clientConfig: { url: 'http://convert.example.com/' } },
      },
    },
  };
  const r = await request(s.url, 'POST', '/apis/apiextensions.plat.io/v1/customresourcedefinitions', crd);
  assert.equal(r.status, 422, r.text);
  assert.ok(
    r.json.details.causes.some(
      (x: { field: string; message: string }) =>
        x.field === 'spec.conversion.webhook.clientConfig.url' &&
        x.message === `Invalid value: "http": 'https' is the only allowed URL scheme${form}`,
    ),
    r.text,
  );
});
