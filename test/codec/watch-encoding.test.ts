import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import protobuf from 'protobufjs';
import { decode as cborDecode } from 'cbor-x';
import { ProtobufCodec } from '../../src/codec/protobuf.js';
import {
  bookmarkObject,
  encodeEventObject,
  frameEvent,
  frameEventBytes,
  joinChunks,
  protobufWatchFrame,
  streamKey,
  watchContentType,
} from '../../src/codec/watch-encoding.js';
import { SELF_DESCRIBED } from '../../src/codec/cbor.js';
import type { Encoding } from '../../src/actors/protocol.js';

const codec = new ProtobufCodec();
const ROOT = new URL('../../../', import.meta.url);
const root = protobuf.Root.fromJSON(JSON.parse(readFileSync(new URL('reference/proto-descriptor.json', ROOT), 'utf8')));
const WatchEvent = root.lookupType('plat.io.apimachinery.pkg.apis.meta.v1.WatchEvent');
const PB: Encoding = { format: 'protobuf', pretty: false, mediaType: 'application/vnd.platform.protobuf' };
const CBOR: Encoding = { format: 'cbor', pretty: false };
const JSON_ENC: Encoding = { format: 'json', pretty: false };
const TABLE: Encoding = {
  format: 'json',
  pretty: false,
  view: { as: 'Table', groupVersion: 'meta.plat.io/v1', includeObject: 'None' },
};

const pod = (name: string, extra = '') => ({
  kind: 'Pod',
  apiVersion: 'v1',
  metadata: {
    name,
    namespace: 'default',
    resourceVersion: '42',
    creationTimestamp: '2026-01-01T00:00:00Z',
    annotations: { pad: extra },
  },
  spec: { containers: [{ name: 'c', image: 'nginx' }] },
});

describe('Protobuf watch framing (bytes)', () => {
  it('is a 4-byte big-endian length then a bare WatchEvent whose object.raw is the enveloped object', () => {
    const raw = codec.encodeObject(pod('p1'));
    const frame = protobufWatchFrame('ADDED', raw);
    const length = new DataView(frame.buffer, frame.byteOffset).getUint32(0, false);
    assert.equal(length, frame.length - 4);
    // field 1 (type, length-delimited) first: tag 0x0a, length 5, "ADDED"
    assert.deepEqual([...frame.subarray(4, 11)], [0x0a, 5, 0x41, 0x44, 0x44, 0x45, 0x44]);
    // field 2 (object), a RawExtension whose field 1 is the raw bytes
    assert.equal(frame[11], 0x12);
    const event = WatchEvent.decode(frame.subarray(4)) as any;
    assert.equal(event.type, 'ADDED');
    assert.deepEqual(new Uint8Array(event.object.raw), raw);
    assert.deepEqual([...event.object.raw.subarray(0, 4)], [0x6b, 0x38, 0x73, 0x00]);
  });

  it('matches protobufjs byte for byte, across varint length boundaries', () => {
    for (const pad of ['', 'x'.repeat(100), 'y'.repeat(200), 'z'.repeat(20_000)]) {
      const raw = codec.encodeObject(pod('p2', pad));
      assert.ok(
        Buffer.from(protobufWatchFrame('MODIFIED', raw)).equals(Buffer.from(codec.encodeWatchEvent('MODIFIED', raw))),
        `pad ${pad.length}`,
      );
    }
  });

  it('frames split back into the same events (ProtobufCodec.splitFrames), partial frames kept', () => {
    const frames = ['ADDED', 'MODIFIED', 'DELETED'].map((t, i) =>
      protobufWatchFrame(t, codec.encodeObject(pod(`p${i}`))),
    );
    const stream = joinChunks(frames) as Uint8Array;
    const { frames: whole, rest } = ProtobufCodec.splitFrames(stream.subarray(0, stream.length - 3));
    assert.equal(whole.length, 2);
    assert.equal(rest.length, frames[2]!.length - 3);
    assert.deepEqual(
      whole.map((f) => codec.decodeWatchEvent(f)).map((e) => [e.type, e.object.metadata?.name]),
      [
        ['ADDED', 'p0'],
        ['MODIFIED', 'p1'],
      ],
    );
  });

  it('Content-Types: JSON as is, Protobuf with ;stream=watch, CBOR as a sequence', () => {
    assert.equal(watchContentType(JSON_ENC), 'application/json');
    assert.equal(watchContentType(PB), 'application/vnd.platform.protobuf;stream=watch');
    assert.equal(watchContentType(CBOR), 'application/cbor-seq');
    assert.notEqual(streamKey(TABLE), streamKey(JSON_ENC));
  });
});

describe('frames as bytes (frameEventBytes, what the watch hub hands every socket)', () => {
  it('are the bytes of frameEvent in every encoding, non-ASCII JSON included', () => {
    const json = JSON.stringify({ kind: 'ConfigMap', metadata: { name: 'ü-名前' }, data: { e: '😀', q: '"\\' } });
    for (const type of ['ADDED', 'MODIFIED', 'DELETED', 'BOOKMARK', 'ERROR']) {
      const bytes = frameEventBytes(JSON_ENC, type, json);
      assert.ok(Buffer.isBuffer(bytes));
      assert.equal(Buffer.from(bytes).toString('utf8'), frameEvent(JSON_ENC, type, json));
      assert.deepEqual(JSON.parse(Buffer.from(bytes).toString('utf8')), { type, object: JSON.parse(json) });
      assert.equal(bytes.at(-1), 0x0a, 'one line');
    }
    const raw = new Uint8Array([1, 2, 3]);
    assert.deepEqual(frameEventBytes(PB, 'ADDED', raw), frameEvent(PB, 'ADDED', raw));
    const item = encodeEventObject(CBOR, { kind: 'ConfigMap', json }, 0, false);
    assert.deepEqual(
      Buffer.from(frameEventBytes(CBOR, 'ADDED', item)),
      Buffer.from(frameEvent(CBOR, 'ADDED', item) as Uint8Array),
    );
    const table = encodeEventObject(TABLE, { kind: 'ConfigMap', json }, 0, true);
    assert.equal(
      Buffer.from(frameEventBytes(TABLE, 'ADDED', table)).toString('utf8'),
      frameEvent(TABLE, 'ADDED', table),
    );
  });
});

describe('event objects per encoding', () => {
  it('JSON events are one line with the stored JSON untouched', () => {
    const json = JSON.stringify(pod('j'));
    assert.equal(
      frameEvent(JSON_ENC, 'ADDED', encodeEventObject(JSON_ENC, { kind: 'Pod', json }, 0)),
      `{"type":"ADDED","object":${json}}\n`,
    );
  });

  it('a Table event has one row; column definitions only when asked (the first event of a watch)', () => {
    const o = { kind: 'Pod', json: JSON.stringify(pod('t')) };
    const first = JSON.parse(encodeEventObject(TABLE, o, Date.parse('2026-01-01T00:01:00Z'), true) as string);
    assert.equal(first.kind, 'Table');
    assert.equal(first.apiVersion, 'meta.plat.io/v1');
    assert.deepEqual(first.metadata, { resourceVersion: '42' });
    assert.equal(first.columnDefinitions[0].name, 'Name');
    // a pod without a phase has an empty Status, as upstream's printPod
    assert.deepEqual(
      first.rows.map((r: any) => r.cells.slice(0, 5)),
      [['t', '0/1', '', '0', '60s']],
    );
    assert.equal(first.rows[0].object, undefined);
    const later = JSON.parse(encodeEventObject(TABLE, o, 0, false) as string);
    assert.equal(later.columnDefinitions, null);
    assert.equal(later.rows.length, 1);
  });

  it('a CBOR event is a self-described map {type, object} embedding the object item', () => {
    const obj = pod('c');
    const frame = frameEvent(
      CBOR,
      'DELETED',
      encodeEventObject(CBOR, { kind: 'Pod', json: JSON.stringify(obj) }, 0),
    ) as Uint8Array;
    assert.deepEqual([...frame.subarray(0, 3)], [...SELF_DESCRIBED]);
    assert.deepEqual(cborDecode(frame), { type: 'DELETED', object: obj });
  });

  it('bookmarks carry only the version (an empty Table in a Table watch)', () => {
    assert.deepEqual(bookmarkObject(undefined, 'Pod', 'v1', 7), {
      kind: 'Pod',
      apiVersion: 'v1',
      metadata: { resourceVersion: '7' },
    });
    const t = bookmarkObject(TABLE.view, 'Pod', 'v1', 7);
    assert.equal(t.kind, 'Table');
    assert.deepEqual(t.rows, []);
    const pb = codec.decodeWatchEvent(
      frameEvent(
        PB,
        'BOOKMARK',
        encodeEventObject(PB, { kind: 'Pod', json: JSON.stringify(bookmarkObject(undefined, 'Pod', 'v1', 9)) }, 0),
      ) as Uint8Array,
    );
    assert.deepEqual(pb, {
      type: 'BOOKMARK',
      object: { kind: 'Pod', apiVersion: 'v1', metadata: { resourceVersion: '9' } },
    });
  });
});
