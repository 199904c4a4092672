import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import protobuf from 'protobufjs';
import {
  PROTOBUF_MAGIC,
  ProtobufCodec,
  ProtobufDecodeError,
  ProtobufEncodeError,
  ProtobufUnsupportedError,
} from '../../src/codec/protobuf.js';
import { allKinds, apiVersionOf, fullSample, minimalSample } from '../fixtures/protobuf/samples.js';
import { encodeEntries } from '../../src/codec/codec.js';
import { inSlab } from '../../src/codec/item-slabs.js';
import { decodeCbor } from '../../src/codec/cbor.js';
import type { Encoding } from '../../src/actors/protocol.js';

const codec = new ProtobufCodec();
const ROOT = new URL('../../../', import.meta.url);
const fixture = (name: string): any =>
  JSON.parse(readFileSync(new URL(`test/fixtures/protobuf/${name}.json`, ROOT), 'utf8'));
const descriptor = JSON.parse(readFileSync(new URL('reference/proto-descriptor.json', ROOT), 'utf8'));
const root = protobuf.Root.fromJSON(descriptor);
const descriptorField = (type: string, field: string): number =>
  type.split('.').reduce((ns: any, k) => ns.nested[k], descriptor).fields[field].id;

const roundTrip = (obj: unknown): unknown => codec.decodeObject(codec.encodeObject(obj));

/** The `raw` bytes of an envelope, read with protobufjs directly. */
function rawOf(bytes: Uint8Array): { typeMeta: any; raw: Uint8Array } {
  const unknown = root.lookupType('plat.io.apimachinery.pkg.runtime.Unknown').decode(bytes.subarray(4)) as any;
  return { typeMeta: unknown.typeMeta, raw: unknown.raw };
}

/** Top-level field numbers and wire types of a message, in order. */
function tags(bytes: Uint8Array): [number, number][] {
  const r = protobuf.Reader.create(bytes);
  const out: [number, number][] = [];
  while (r.pos < r.len) {
    const tag = r.uint32();
    out.push([tag >>> 3, tag & 7]);
    r.skipType(tag & 7);
  }
  return out;
}

describe('protobuf round trip of every built-in kind', () => {
  const kinds = allKinds().filter(({ gvk }) => codec.typeFor(gvk.group, gvk.version, gvk.kind));

  it('finds a message for every kind the OpenAPI document lists outside apimachinery', () => {
    const missing = allKinds().filter(
      ({ def, gvk }) => !def.includes('.apimachinery.') && !codec.typeFor(gvk.group, gvk.version, gvk.kind),
    );
    assert.deepEqual(missing, []);
    assert.ok(kinds.length > 150, `${kinds.length} kinds`);
  });

  it('keeps objects with typical metadata (and lists with one item) unchanged', () => {
    for (const { def, gvk } of kinds) {
      const obj = minimalSample(def, gvk);
      assert.deepEqual(roundTrip(obj), obj, `${apiVersionOf(gvk)} ${gvk.kind}`);
    }
  });

  it('keeps objects with every schema property filled in unchanged', () => {
    for (const { def, gvk } of kinds) {
      const obj = fullSample(def, gvk);
      assert.deepEqual(roundTrip(obj), obj, `${apiVersionOf(gvk)} ${gvk.kind}`);
    }
  });
});

describe('protobuf round trip of hand-made objects', () => {
  for (const name of ['pod', 'deployment', 'secret', 'configmap', 'service', 'crd', 'event', 'lease']) {
    it(`keeps ${name} unchanged`, () => {
      const obj = fixture(name);
      const bytes = codec.encodeObject(obj);
      assert.deepEqual([...bytes.subarray(0, 4)], [...PROTOBUF_MAGIC]);
      assert.deepEqual(codec.decodeObject(bytes), obj);
    });
  }

  it('keeps a list of pods with list metadata', () => {
    const pod = fixture('pod');
    delete pod.kind;
    delete pod.apiVersion;
    const list = {
      kind: 'PodList',
      apiVersion: 'v1',
      metadata: { resourceVersion: '90300', continue: 'abc', remainingItemCount: 7 },
      items: [pod, pod],
    };
    assert.deepEqual(roundTrip(list), list);
  });

  it('keeps a Status with details', () => {
    const status = {
      metadata: {},
      status: 'Failure',
      message: 'pods "x" already exists',
      reason: 'AlreadyExists',
      details: {
        name: 'x',
        kind: 'pods',
        causes: [{ reason: 'FieldValueDuplicate', message: 'dup', field: 'metadata.name' }],
      },
      code: 409,
    };
    const bytes = codec.encodeStatus(status);
    assert.deepEqual(codec.decodeObject(bytes), { kind: 'Status', apiVersion: 'v1', ...status });
  });

  it('normalizes like upstream where JSON has several spellings', () => {
    const cm = {
      kind: 'Pod',
      apiVersion: 'v1',
      metadata: {
        name: 'n',
        creationTimestamp: '2024-05-06T09:08:09.5+02:00',
        deletionTimestamp: null,
        finalizers: [],
      },
      spec: { containers: [{ name: 'c', resources: { limits: { cpu: 2 } } }] },
    };
    assert.deepEqual(roundTrip(cm), {
      kind: 'Pod',
      apiVersion: 'v1',
      metadata: { name: 'n', creationTimestamp: '2024-05-06T07:08:09Z' },
      spec: { containers: [{ name: 'c', resources: { limits: { cpu: '2' } } }] },
    });
  });
});

describe('protobuf wire format', () => {
  it('wraps the object in magic + Unknown{typeMeta, raw, contentEncoding, contentType}', () => {
    const bytes = codec.encodeObject(fixture('configmap'));
    assert.deepEqual([...bytes.subarray(0, 4)], [0x6b, 0x38, 0x73, 0x00]);
    assert.deepEqual(tags(bytes.subarray(4)), [
      [1, 2],
      [2, 2],
      [3, 2],
      [4, 2],
    ]);
    const { typeMeta, raw } = rawOf(bytes);
    assert.equal(typeMeta.apiVersion, 'v1');
    assert.equal(typeMeta.kind, 'ConfigMap');
    const cm = root.lookupType('plat.io.api.core.v1.ConfigMap').decode(raw) as any;
    assert.equal(
      Buffer.from(cm.binaryData['logo.png']).toString('base64'),
      fixture('configmap').binaryData['logo.png'],
    );
  });

  it('writes Pod fields under the descriptor numbers', () => {
    const { raw } = rawOf(codec.encodeObject(fixture('pod')));
    assert.deepEqual(
      tags(raw).map(([n]) => n),
      [1, 2, 3],
    );
    assert.equal(descriptorField('plat.io.api.core.v1.Pod', 'spec'), 2);
    assert.equal(descriptorField('plat.io.api.core.v1.PodSpec', 'containers'), 2);
    assert.equal(descriptorField('plat.io.api.core.v1.ContainerPort', 'containerPort'), 3);
    assert.equal(descriptorField('plat.io.apimachinery.pkg.apis.meta.v1.ObjectMeta', 'namespace'), 3);
    const pod = root.lookupType('plat.io.api.core.v1.Pod').decode(raw) as any;
    assert.equal(pod.metadata.namespace, 'shop');
    assert.equal(pod.spec.containers[0].ports[0].containerPort, 8080);
    assert.equal(pod.spec.containers[0].livenessProbe.handler.httpGet.port.strVal, 'http');
    assert.equal(pod.spec.containers[0].readinessProbe.handler.tcpSocket.port.intVal, 8080);
    assert.equal(pod.spec.containers[0].resources.limits.cpu.string, '500m');
    assert.equal(Number(pod.metadata.creationTimestamp.seconds), Date.parse('2024-05-06T07:08:09Z') / 1000);
    assert.deepEqual(JSON.parse(Buffer.from(pod.metadata.managedFields[1].fieldsV1.Raw).toString()), {
      'f:status': { 'f:phase': {} },
    });
  });

  it('stores Secret data as bytes and MicroTime with nanos', () => {
    const { raw } = rawOf(codec.encodeObject(fixture('secret')));
    const secret = root.lookupType('plat.io.api.core.v1.Secret').decode(raw) as any;
    assert.equal(Buffer.from(secret.data.password).toString(), 's3cr3t!');
    const lease = root
      .lookupType('plat.io.api.coordination.v1.Lease')
      .decode(rawOf(codec.encodeObject(fixture('lease'))).raw) as any;
    assert.equal(lease.spec.renewTime.nanos, 987654000);
  });

  it('frames watch events as a length prefix and a bare WatchEvent holding the envelope', () => {
    const pod = fixture('pod');
    const frame = codec.encodeWatchEvent('MODIFIED', pod);
    const length = new DataView(frame.buffer, frame.byteOffset).getUint32(0, false);
    assert.equal(length, frame.length - 4);
    const event = root.lookupType('plat.io.apimachinery.pkg.apis.meta.v1.WatchEvent').decode(frame.subarray(4)) as any;
    assert.equal(event.type, 'MODIFIED');
    assert.deepEqual([...event.object.raw.subarray(0, 4)], [...PROTOBUF_MAGIC]);
    assert.deepEqual(codec.decodeObject(event.object.raw), pod);
    assert.deepEqual(codec.decodeWatchEvent(frame), { type: 'MODIFIED', object: pod });
  });

  it('reuses encoded objects in watch frames and splits a stream into frames', () => {
    const cm = fixture('configmap');
    const a = codec.encodeWatchEvent('ADDED', codec.encodeObject(cm));
    const b = codec.encodeWatchEvent('BOOKMARK', {
      kind: 'ConfigMap',
      apiVersion: 'v1',
      metadata: { resourceVersion: '99' },
    });
    const stream = Buffer.concat([a, b, a.subarray(0, 7)]);
    const { frames, rest } = ProtobufCodec.splitFrames(stream);
    assert.equal(frames.length, 2);
    assert.equal(rest.length, 7);
    assert.deepEqual(codec.decodeWatchEvent(frames[0]!).object, cm);
    assert.deepEqual(codec.decodeWatchEvent(frames[1]!), {
      type: 'BOOKMARK',
      object: { kind: 'ConfigMap', apiVersion: 'v1', metadata: { resourceVersion: '99' } },
    });
  });
});

describe('protobuf errors', () => {
  it('rejects bytes without the magic prefix', () => {
    assert.throws(() => codec.decodeObject(Uint8Array.of(1, 2, 3)), ProtobufDecodeError);
    assert.throws(() => codec.decodeObject(Buffer.from('{"kind":"Pod"}')), /envelope prefix/);
  });

  it('rejects malformed envelopes and messages with an Error, never a crash', () => {
    assert.throws(
      () => codec.decodeObject(Uint8Array.of(0x6b, 0x38, 0x73, 0x00, 0xff, 0xff, 0xff)),
      ProtobufDecodeError,
    );
    const good = codec.encodeObject(fixture('pod'));
    for (let n = 4; n < good.length; n++) {
      try {
        codec.decodeObject(good.subarray(0, n));
      } catch (e) {
        assert.ok(e instanceof ProtobufDecodeError, `prefix ${n}: ${e}`);
      }
    }
    let seed = 7;
    const rand = (): number => (seed = (seed * 1103515245 + 12345) % 2147483648) % 256;
    for (let i = 0; i < 300; i++) {
      const bytes = Uint8Array.from([0x6b, 0x38, 0x73, 0x00, ...Array.from({ length: 1 + (i % 60) }, rand)]);
      try {
        codec.decodeObject(bytes);
      } catch (e) {
        assert.ok(e instanceof ProtobufDecodeError, String(e));
      }
    }
  });

  it('names unknown kinds on decode and refuses kinds without a message on encode', () => {
    const env = root.lookupType('plat.io.apimachinery.pkg.runtime.Unknown');
    const body = env
      .encode({ typeMeta: { apiVersion: 'example.com/v1', kind: 'Widget' }, raw: new Uint8Array(0) })
      .finish();
    assert.throws(
      () => codec.decodeObject(Buffer.concat([PROTOBUF_MAGIC, body])),
      /no message for example.com\/v1, Kind=Widget/,
    );
    assert.throws(
      () => codec.encodeObject({ apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w' } }),
      ProtobufUnsupportedError,
    );
    assert.throws(
      () => codec.encodeObject({ apiVersion: 'meta.plat.io/v1', kind: 'Table', rows: [] }),
      ProtobufUnsupportedError,
    );
    assert.equal(codec.supports('apps/v1', 'Deployment'), true);
    assert.equal(codec.supports('example.com/v1', 'Widget'), false);
  });

  it('resolves groups written in another --api-domain', () => {
    const upstream = new ProtobufCodec(undefined, { apiDomain: 'k8s.io' });
    assert.equal(upstream.typeFor('rbac.authorization.k8s.io', 'v1', 'Role')?.fullName, '.plat.io.api.rbac.v1.Role');
    assert.equal(
      upstream.typeFor('apiextensions.k8s.io', 'v1', 'CustomResourceDefinition')?.name,
      'CustomResourceDefinition',
    );
    const role = {
      kind: 'Role',
      apiVersion: 'rbac.authorization.k8s.io/v1',
      metadata: { name: 'r' },
      rules: [{ verbs: ['get'], apiGroups: [''], resources: ['pods'] }],
    };
    assert.deepEqual(upstream.decodeObject(upstream.encodeObject(role)), role);
  });

  it('reports the field path of values that do not fit the schema', () => {
    const pod = {
      apiVersion: 'v1',
      kind: 'Pod',
      spec: { containers: [{ name: 'c', ports: [{ containerPort: 'eighty' }] }] },
    };
    assert.throws(
      () => codec.encodeObject(pod),
      (e: Error) =>
        e instanceof ProtobufEncodeError && /spec\.containers\[0\]\.ports\[0\]\.containerPort/.test(e.message),
    );
    assert.throws(
      () => codec.encodeObject({ apiVersion: 'v1', kind: 'Secret', data: { a: 'not base64!' } }),
      ProtobufEncodeError,
    );
    assert.throws(
      () => codec.encodeObject({ apiVersion: 'v1', kind: 'Pod', metadata: { creationTimestamp: 'yesterday' } }),
      /metadata\.creationTimestamp/,
    );
  });
});

describe('lists from cached item bytes (codec.encodeEntries)', () => {
  const pod = fixture('pod');
  const entries = [0, 1, 2].map((i) => {
    const obj = { ...pod, metadata: { ...pod.metadata, name: `p${i}` } };
    return { obj, json: JSON.stringify(obj) } as { obj: any; json: string; encoded?: Record<string, Uint8Array> };
  });
  const head = {
    kind: 'PodList',
    apiVersion: 'v1',
    metadata: { resourceVersion: '9', continue: 'c', remainingItemCount: 4 },
  };

  it('decodes to the same list as encoding the whole list, and caches each item once', () => {
    const whole = codec.decodeObject(codec.encodeObject({ ...head, items: entries.map((e) => e.obj) }));
    const pb: Encoding = { format: 'protobuf', pretty: false };
    const fromItems = encodeEntries(head, entries, pb) as Uint8Array;
    assert.deepEqual(codec.decodeObject(fromItems), whole);
    const cached = entries.map((e) => e.encoded!['protobuf|v1']);
    assert.ok(cached.every((b) => b instanceof Uint8Array));
    // kept for the entry's life: in a list's item slab (codec/item-slabs.ts, compacted), never a
    // slice pinning Node's shared pool slab
    assert.ok(cached.every((b) => inSlab(b!)));
    encodeEntries(head, entries, pb);
    assert.ok(entries.every((e, i) => e.encoded!['protobuf|v1'] === cached[i]));
  });

  it('CBOR lists too; an empty list is a list with no items', () => {
    const cbor: Encoding = { format: 'cbor', pretty: false };
    assert.deepEqual(decodeCbor(encodeEntries(head, entries, cbor) as Uint8Array), {
      ...head,
      items: entries.map((e) => e.obj),
    });
    assert.deepEqual(decodeCbor(encodeEntries(head, [], cbor) as Uint8Array), { ...head, items: [] });
    assert.equal(
      codec.decodeObject(encodeEntries(head, [], { format: 'protobuf', pretty: false }) as Uint8Array).items,
      undefined,
    );
  });
});
