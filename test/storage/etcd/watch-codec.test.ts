/**
 * The hand-written WatchResponse decoder: for a table of responses encoded by etcd3's own
 * protobufjs codec it answers exactly what etcd3's decoder answers (int64 and uint64 beyond
 * 2^53, negative ids, deletes, previous values, cancel reasons); and a client using it
 * (createClient) watches a real etcd: puts and deletes arrive with their values and
 * revisions, and the watch resumes from where it was after the stream is broken.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { Etcd3, type IWatchResponse } from 'etcd3';
import { decodeWatchResponse } from '../../../src/storage/etcd/watch-codec.js';
import { createClient } from '../../../src/storage/etcd/etcd-client.js';
import { startEtcd, type TestEtcd } from '../../helpers/etcd.js';
import { until } from '../../helpers/poll.js';

interface MethodCodec {
  responseSerialize(v: unknown): Buffer;
  responseDeserialize(b: Buffer): unknown;
}

/** etcd3's own (proto-loader + protobufjs) codec of Watch/Watch; no connection is made. */
async function etcd3Codec(): Promise<MethodCodec> {
  const c = new Etcd3({ hosts: '127.0.0.1:1' });
  type Pool = { withConnection(s: 'Watch', fn: (a: { client: object }) => Promise<unknown>): Promise<unknown> };
  const pool = (c as unknown as { watchClient: { client: Pool } }).watchClient.client;
  const codec = (await pool.withConnection('Watch', async ({ client }) => {
    return (client.constructor as unknown as { service: { Watch: MethodCodec } }).service.Watch;
  })) as MethodCodec;
  c.close();
  return codec;
}

const b = (s: string): Buffer => Buffer.from(s);
const header = (revision: string) => ({
  cluster_id: '14841639068965178418',
  member_id: '10276657743932975437',
  revision,
  raft_term: '7',
});
const kv = (key: string, value: string, mod: string, extra: object = {}) => ({
  key: b(key),
  value: b(value),
  create_revision: '3',
  mod_revision: mod,
  version: '2',
  ...extra,
});

const responses: { name: string; res: object }[] = [
  { name: 'created', res: { header: header('1'), watch_id: '0', created: true } },
  {
    name: 'puts of one transaction',
    res: {
      header: header('42'),
      watch_id: '3',
      events: [
        { type: 'Put', kv: kv('/p/s/\u0000meta/revision', '{"rv":9,"w":"t.1"}', '42') },
        { type: 'Put', kv: kv('/p/s//configmaps/ns/a', 'x'.repeat(5000), '42') },
      ],
    },
  },
  {
    name: 'a delete with its previous value, large revisions and a lease',
    res: {
      header: header(String(2 ** 40 + 1)),
      events: [
        {
          type: 'Delete',
          kv: { key: b('/k'), mod_revision: String(2 ** 40 + 1) },
          prev_kv: kv('/k', 'old', String(2 ** 40), { lease: '7587869513335981313' }),
        },
      ],
    },
  },
  { name: 'a negative watch id', res: { header: header('5'), watch_id: '-1' } },
  {
    name: 'a cancel after compaction',
    res: {
      header: header('9'),
      canceled: true,
      compact_revision: '8',
      cancel_reason: 'mvcc: required revision has been compacted ✓',
    },
  },
  {
    name: 'an empty value and key',
    res: { header: header('2'), fragment: true, events: [{ type: 'Put', kv: kv('', '', '2') }] },
  },
  { name: 'no header', res: { events: [] } },
];

describe('watch codec', () => {
  let codec: MethodCodec;
  before(async () => {
    codec = await etcd3Codec();
  });

  for (const r of responses)
    it(`decodes ${r.name} as etcd3's decoder does`, () => {
      const bytes = codec.responseSerialize(r.res);
      assert.deepStrictEqual(decodeWatchResponse(bytes), codec.responseDeserialize(bytes));
    });

  it('throws on a truncated response', () => {
    const bytes = codec.responseSerialize(responses[1]!.res);
    assert.throws(() => decodeWatchResponse(bytes.subarray(0, bytes.length - 10)), /truncated/);
  });
});

describe('a client with the watch codec on a real etcd', () => {
  let etcd: TestEtcd;
  let client: Etcd3;
  before(async () => {
    etcd = await startEtcd();
    client = createClient({ servers: [etcd.url], prefix: '/w', compactionIntervalMs: 0 });
  });
  after(async () => {
    client?.close();
    await etcd?.cleanup();
  });

  it('delivers puts and deletes with values and revisions, and resumes after the stream breaks', async () => {
    // createClient put the codec under this client's watch streams
    const watchClient = (client as unknown as { watchClient: { watch: unknown } }).watchClient;
    assert.notEqual(watchClient.watch, Object.getPrototypeOf(watchClient).watch);
    const seen: string[] = [];
    const w = await client.watch().prefix('/w/').create();
    w.on('data', (res: IWatchResponse) => {
      for (const ev of res.events) seen.push(`${ev.type} ${ev.kv.key} ${ev.kv.value} @${ev.kv.mod_revision}`);
    });
    const one = await client.put('/w/a').value('one').exec();
    await client.delete().key('/w/a').exec();
    await until(async () => (seen.length === 2 ? true : undefined), 'two events');
    assert.deepEqual(seen, [
      `Put /w/a one @${one.header.revision}`,
      `Delete /w/a  @${Number(one.header.revision) + 1}`,
    ]);
    // break the stream under the watcher: etcd3 re-opens it (through the codec) from the next revision
    const manager = (client as unknown as { watchManager: { getStream(): { cancel(): void } } }).watchManager;
    manager.getStream().cancel();
    const two = await client.put('/w/b').value('two').exec();
    await until(async () => (seen.length === 3 ? true : undefined), 'the event after the break');
    assert.equal(seen[2], `Put /w/b two @${two.header.revision}`);
    await w.cancel();
  });
});
