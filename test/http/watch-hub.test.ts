import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { WatchHub, type Watcher } from '../../src/http/watch-hub.js';
import type { ChangeEvent, Encoding } from '../../src/actors/protocol.js';
import type { Chunk } from '../../src/codec/watch-encoding.js';
import { ProtobufCodec } from '../../src/codec/protobuf.js';
import { until } from '../helpers/poll.js';

const PB: Encoding = { format: 'protobuf', pretty: false, mediaType: 'application/vnd.platform.protobuf' };
const TABLE: Encoding = {
  format: 'json',
  pretty: false,
  view: { as: 'Table', groupVersion: 'meta.plat.io/v1', includeObject: 'None' },
};
const codec = new ProtobufCodec();

function watcher(enc: Encoding, out: Chunk[], headersSent = false): Watcher {
  return {
    typeKey: '/pods',
    namespace: '',
    matcher: undefined,
    fromRV: 0,
    startRV: 0,
    bookmarks: false,
    kind: 'Pod',
    apiVersion: 'v1',
    closed: false,
    enc,
    headersSent,
    sink: {
      write: (c) => {
        out.push(c);
        return 0;
      },
      close() {},
      abort() {},
    },
  };
}

const obj = (rv: number) => ({
  kind: 'Pod',
  apiVersion: 'v1',
  metadata: { name: 'p', namespace: 'd', resourceVersion: String(rv) },
});
function event(rv: number, encoded?: ChangeEvent['encoded']): ChangeEvent {
  return {
    typeKey: '/pods',
    type: 'ADDED',
    rv,
    namespace: 'd',
    name: 'p',
    json: JSON.stringify(obj(rv)),
    labels: undefined,
    fields: {},
    apiVersion: 'v1',
    uid: 'u',
    encoded,
  };
}

describe('WatchHub stream encodings', () => {
  it('tells the actors which encodings live watchers use, per type, and forgets them on removal', () => {
    const hub = new WatchHub(1 << 20);
    assert.equal(hub.streams(), undefined);
    const a = watcher(PB, []),
      b = watcher(PB, []),
      j = watcher({ format: 'json', pretty: false }, []);
    hub.add(a);
    hub.add(b);
    hub.add(j);
    assert.deepEqual(hub.streams(), { '/pods': [PB] });
    hub.remove(a);
    assert.deepEqual(hub.streams(), { '/pods': [PB] });
    hub.remove(b);
    assert.equal(hub.streams(), undefined);
  });

  it('writes the bytes the actor encoded, the same frame to every watcher sharing the encoding', () => {
    const hub = new WatchHub(1 << 20);
    const outA: Chunk[] = [],
      outB: Chunk[] = [];
    hub.add(watcher(PB, outA));
    hub.add(watcher(PB, outB));
    const fromActor = codec.encodeObject({ ...obj(5), metadata: { ...obj(5).metadata, labels: { from: 'actor' } } });
    hub.dispatch([event(5, { protobuf: fromActor })]);
    hub.flush();
    assert.equal(outA.length, 1);
    assert.equal(outA[0], outB[0]);
    assert.deepEqual(codec.decodeWatchEvent(outA[0] as Uint8Array).object.metadata?.labels, { from: 'actor' });
  });

  it('encodes on the front thread when the actor did not (a watcher that registered meanwhile)', () => {
    const hub = new WatchHub(1 << 20);
    const out: Chunk[] = [];
    hub.add(watcher(PB, out));
    hub.dispatch([event(6)]);
    hub.flush();
    assert.equal(codec.decodeWatchEvent(out[0] as Uint8Array).object.metadata?.resourceVersion, '6');
  });

  it('a Table watcher gets column definitions with its first event only', () => {
    const hub = new WatchHub(1 << 20);
    const fresh: Chunk[] = [],
      started: Chunk[] = [];
    hub.add(watcher(TABLE, fresh));
    hub.add(watcher(TABLE, started, true));
    hub.dispatch([event(7)]);
    hub.flush();
    hub.dispatch([event(8)]);
    hub.flush();
    const defs = (out: Chunk[]) => out.map((c) => JSON.parse(c as string).object.columnDefinitions?.[0]?.name ?? null);
    assert.deepEqual(defs(fresh), ['Name', null]);
    assert.deepEqual(defs(started), [null, null]);
  });

  it('coalesces the batches dispatched in one event-loop turn into one write per watcher, in order', async () => {
    const hub = new WatchHub(1 << 20);
    const out: Chunk[] = [];
    hub.add(watcher({ format: 'json', pretty: false }, out));
    hub.dispatch([event(9)]);
    hub.dispatch([event(10), event(11)]);
    assert.equal(out.length, 0, 'nothing written before the end of the turn');
    await new Promise<void>((resolve) => setImmediate(resolve));
    assert.equal(out.length, 1, 'one write for three events of two batches');
    const rvs = String(out[0])
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l).object.metadata.resourceVersion);
    assert.deepEqual(rvs, ['9', '10', '11']);
  });

  it('watchers queued the same frames get one joined buffer, not a copy each', () => {
    const hub = new WatchHub(1 << 20);
    const outs: Chunk[][] = [[], [], []];
    for (const out of outs) hub.add(watcher({ format: 'json', pretty: false }, out));
    hub.dispatch([event(12)]);
    hub.dispatch([event(13)]);
    hub.flush();
    assert.equal(outs[0]!.length, 1);
    assert.ok(typeof outs[0]![0] !== 'string', 'JSON frames are bytes, encoded once');
    assert.equal(outs[1]![0], outs[0]![0]);
    assert.equal(outs[2]![0], outs[0]![0]);
    assert.deepEqual(
      String(outs[0]![0])
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l).object.metadata.resourceVersion),
      ['12', '13'],
    );
  });

  it('after a costly flush, the batches of the next turns share one write per watcher (pacing)', async () => {
    const hub = new WatchHub(1 << 20);
    const out: Chunk[] = [];
    const w = watcher({ format: 'json', pretty: false }, out);
    const write = w.sink.write;
    // a flush that takes 20 ms (1,000 sends on a busy machine)
    w.sink.write = (c) => {
      const until = performance.now() + 20;
      while (performance.now() < until);
      return write(c);
    };
    hub.add(w);
    hub.dispatch([event(20)]);
    await until(async () => (out.length === 1 ? true : undefined), 'the first flush');
    const batches = 5;
    for (let i = 0; i < batches; i++) {
      hub.dispatch([event(21 + i)]);
      await new Promise<void>((resolve) => setImmediate(resolve));
    }
    await until(async () => (out.length > 1 && String(out.at(-1)).includes('"25"') ? true : undefined), 'rv 25');
    assert.ok(out.length - 1 < batches, `${out.length - 1} writes for ${batches} batches of consecutive turns`);
    const rvs = out
      .slice(1)
      .flatMap((c) => String(c).trim().split('\n'))
      .map((l) => JSON.parse(l).object.metadata.resourceVersion);
    assert.deepEqual(rvs, ['21', '22', '23', '24', '25']);
  });
});
