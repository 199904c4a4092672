/**
 * The packed wire form of a batch (ops) and of its reply (results, change events): what arrives
 * on the other thread (packed, structured-cloned, unpacked) is what was sent, value for value,
 * in order, with the same keys present.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { packReply, unpackReply } from '../../src/actors/wire-reply.js';
import { packOps, unpackOps } from '../../src/actors/wire-ops.js';
import type { BatchReply, ChangeEvent, Op, Result } from '../../src/actors/protocol.js';

const JSON_ENC = { format: 'json', pretty: false } as const;

function event(i: number, over: Partial<ChangeEvent> = {}): ChangeEvent {
  const name = `c-${i}`;
  return {
    typeKey: '/configmaps',
    type: 'ADDED',
    rv: 1000 + i,
    namespace: 'ns',
    name,
    json: JSON.stringify({ metadata: { name } }),
    labels: { app: 'a' },
    fields: { 'metadata.name': name, 'metadata.namespace': 'ns' },
    prevLabels: undefined,
    prevFields: undefined,
    uid: `uid-${i}`,
    apiVersion: 'v1',
    ...over,
  };
}

/** packs, clones as postMessage does, unpacks */
function roundTrip(reply: BatchReply): BatchReply {
  const sent = structuredClone(reply);
  packReply(sent);
  assert.equal(sent.results.length + sent.events.length, 0, 'nothing travels unpacked');
  const got = structuredClone(sent);
  unpackReply(got);
  assert.equal(got.wire, undefined);
  return got;
}

function sameKeys(got: readonly object[], want: readonly object[]): void {
  assert.deepEqual(
    got.map((x) => Object.keys(x)),
    want.map((x) => Object.keys(x)),
  );
}

describe('packed change events', () => {
  it('arrive with every value, key and order, across labels, fields, unicode, empty maps and the rare fields', () => {
    const events: ChangeEvent[] = [
      event(1),
      event(2, { labels: {}, fields: {} }),
      event(3, { labels: undefined, name: 'ünïcödé-名前-🙂', namespace: 'ns2', json: '{"a":"é\\u0000"}' }),
      event(4, {
        type: 'MODIFIED',
        labels: { app: 'b', tier: 'web', '1': 'numeric key', '': 'empty key' },
        prevLabels: { app: 'a' },
        prevFields: { 'metadata.name': 'c-4', 'metadata.namespace': 'ns', __proto__x: '' },
        owners: [{ uid: 'o1', apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'rs', blockOwnerDeletion: true }],
        finalizers: ['f/1'],
        deleting: true,
        expiresAt: 1_700_000_000_000,
        quota: { requests: { cpu: 0.5 }, limits: { memory: 1024 } },
        prevJson: '{"old":true}',
        encoded: { 'protobuf/x': new Uint8Array([1, 2, 255]), 'cbor/y': 'text' },
        publishedUs: 12.5,
      }),
      event(5, { type: 'DELETED', labels: { app: 'a' }, typeKey: '/pods', apiVersion: 'v1', uid: '' }),
      // back to the values two records before, and a value now in another slot
      event(6, { typeKey: '/configmaps', namespace: 'ns', name: 'ns' }),
      event(7, { fields: { 'metadata.name': 'c-7', 'metadata.namespace': 'ns', 'spec.x': '\u00ff\u0100' } }),
    ];
    const proto = event(8);
    proto.fields = JSON.parse('{"__proto__":"p","metadata.name":"c-8"}');
    events.push(proto);
    const got = roundTrip({ results: [], events });
    assert.deepStrictEqual(got.events, events);
    sameKeys(got.events, events);
    assert.equal(Object.getPrototypeOf(got.events[7]!.fields), Object.prototype, 'a __proto__ key stays a key');
    assert.deepEqual(Object.keys(got.events[7]!.fields), ['__proto__', 'metadata.name']);
    assert.ok(got.events[3]!.encoded!['protobuf/x'] instanceof Uint8Array);
  });

  it('sends a value repeated in its slot once', () => {
    const events = Array.from({ length: 40 }, (_, i) => event(i));
    const sent = structuredClone({ results: [], events }) as BatchReply;
    packReply(sent);
    // per event: its name (twice: the name and the field), JSON and uid; the rest once for all
    assert.ok(sent.wire!.s.length <= 40 * 4 + 10, `${sent.wire!.s.length} values sent`);
    const got = roundTrip({ results: [], events });
    assert.deepStrictEqual(got.events, events);
  });
});

describe('packed results', () => {
  it('arrive in order, plain ones packed and the others as they were', () => {
    const results: Result[] = [
      { id: 1, code: 201, body: '', contentType: 'application/json', bodyRef: [0, 10] },
      { id: 2, code: 200, body: '', contentType: 'application/json', warnings: ['w1', 'wé'], bodyRef: [10, 3] },
      { id: 3, code: 200, body: '', contentType: 'application/json', contentEncoding: 'gzip', bodyRef: [13, 5] },
      { id: 4, code: 204, body: '', contentType: 'application/json' },
      { id: 5, error: { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: 'no', code: 404 } },
      { id: 6, code: 200, body: new Uint8Array([7, 8]), contentType: 'application/vnd.kubernetes.protobuf' },
      { id: 7, code: 200, body: '', contentType: 'application/json', page: { resourceVersion: '9', items: 2 } },
      {
        id: 8,
        watch: { typeKey: '/pods', initial: ['a', new Uint8Array([1])], fromRV: 3, kind: 'Pod', apiVersion: 'v1' },
      },
      { id: 9, code: 201, body: '', contentType: 'application/yaml', bodyRef: [18, 0] },
    ];
    const got = roundTrip({ results, events: [event(1)] });
    assert.deepStrictEqual(got.results, results);
    sameKeys(got.results, results);
    assert.deepStrictEqual(got.events, [event(1)]);
  });
});

/** what a packed op arrives as: every key of its kind set, undefined where the sender had none */
function withUndefined(o: Op): Op {
  if (o.op !== 'create' && o.op !== 'update' && o.op !== 'patch') return o;
  const common = { fieldManager: undefined, fieldValidation: undefined, pin: undefined };
  const type = { subresource: undefined, ...o.type };
  const enc = { mediaType: undefined, view: undefined, gzip: undefined, ...o.enc };
  const user = 'user' in o && o.user ? { uid: undefined, extra: undefined, ...o.user } : undefined;
  if (o.op === 'patch') return { ...common, ...o, type, enc, user };
  const body = { bytes: undefined, ...o.body };
  if (o.op === 'update') return { ...common, ...o, type, enc, body };
  return { ...common, name: undefined, namespaceTerminating: undefined, ...o, type, enc, body, user };
}

describe('packed ops', () => {
  it('arrive in order with every value, the writes packed and the others as they were', () => {
    const user = { username: 'ü', groups: ['system:masters', 'g2'] };
    const type = { group: '', version: 'v1', resource: 'configmaps' };
    const ops: Op[] = [
      {
        id: 1,
        op: 'create',
        type,
        enc: JSON_ENC,
        dryRun: false,
        namespace: 'ns',
        body: { text: '{"é":1}', contentType: 'json' },
        user,
      },
      { id: 2, op: 'get', type, enc: JSON_ENC, namespace: 'ns', name: 'a' },
      {
        id: 3,
        op: 'create',
        type: { group: '', version: 'v1', resource: 'pods', subresource: 'binding' },
        enc: { format: 'protobuf', pretty: true, mediaType: 'application/vnd.kubernetes.protobuf', gzip: true },
        dryRun: true,
        namespace: 'ns',
        name: 'p',
        fieldManager: 'm',
        fieldValidation: 'Strict',
        pin: '',
        namespaceTerminating: true,
        body: { text: '', contentType: 'protobuf', bytes: new Uint8Array([0, 1, 2]) },
        user: { username: 'u', uid: 'id', groups: [], extra: { scopes: ['a', 'b'] } },
      },
      {
        id: 4,
        op: 'update',
        type,
        enc: JSON_ENC,
        dryRun: false,
        namespace: 'ns',
        name: 'a',
        pin: '7',
        body: { text: '{}', contentType: 'yaml' },
      },
      {
        id: 5,
        op: 'patch',
        type: { group: 'apps', version: 'v1', resource: 'deployments' },
        enc: { ...JSON_ENC, view: { as: 'Table', groupVersion: 'meta.k8s.io/v1', includeObject: 'None' } },
        dryRun: false,
        namespace: '',
        name: 'd',
        patchType: 'apply',
        text: 'a: 1',
        force: true,
        fieldManager: 'kubectl',
        user,
      },
      {
        id: 6,
        op: 'patch',
        type,
        enc: JSON_ENC,
        dryRun: false,
        namespace: 'ns',
        name: 'a',
        patchType: 'merge',
        text: '{}',
        force: false,
      },
      { id: 7, op: 'list', type, enc: JSON_ENC, namespace: '', opts: { limit: 5, labelSelector: 'a=b' } },
      {
        id: 8,
        op: 'delete',
        type,
        enc: JSON_ENC,
        dryRun: false,
        namespace: 'ns',
        name: 'a',
        options: { propagationPolicy: 'Foreground' },
      },
      { id: 9, op: 'watch', type, enc: JSON_ENC, namespace: 'ns', opts: { sendInitialEvents: true }, held: ['k'] },
      {
        id: 10,
        op: 'create',
        type,
        enc: JSON_ENC,
        dryRun: false,
        namespace: 'ns',
        body: { text: '{"é":2}', contentType: 'json' },
        user,
      },
    ];
    const wire = structuredClone(packOps(ops));
    assert.equal(wire.rest.length, 4, 'get, list, delete and watch travel as they were');
    const got = unpackOps(wire);
    assert.deepStrictEqual(got, ops.map(withUndefined));
    assert.deepEqual(
      got.map((o) => o.id),
      ops.map((o) => o.id),
    );
    assert.deepEqual(Object.keys(got[0]!), Object.keys(got[9]!), 'one shape per kind');
    assert.deepStrictEqual(unpackOps(structuredClone(packOps([]))), []);
  });
});
