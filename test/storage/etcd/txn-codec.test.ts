/**
 * The hand-built Txn codec of the etcd write path: its request bytes equal what etcd3's own
 * protobufjs serializer makes of the same request, for a table of requests; the answer decoder
 * reads header.revision and succeeded from responses etcd3's serializer encodes (large
 * revisions, per-op responses skipped); and against a real etcd a refused and a succeeded
 * transaction sent through TxnCaller answer as etcd3's call does.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Socket } from 'node:net';
import { once } from 'node:events';
import { Etcd3, GRPCDeadlineExceededError, type ICompare } from 'etcd3';
import { decodeTxnAnswer, encodeTxn, type TxnOp } from '../../../src/storage/etcd/txn-codec.js';
import { TxnCaller } from '../../../src/storage/etcd/txn-call.js';
import { startEtcd, type TestEtcd } from '../../helpers/etcd.js';

interface MethodCodec {
  requestSerialize(v: unknown): Buffer;
  requestDeserialize(b: Buffer): unknown;
  responseSerialize(v: unknown): Buffer;
}

/** etcd3's own (proto-loader + protobufjs) codec of KV/Txn; no connection is made. */
async function etcd3Codec(): Promise<MethodCodec> {
  const c = new Etcd3({ hosts: '127.0.0.1:1' });
  const pool = (
    c.kv as unknown as {
      client: { withConnection(s: 'KV', fn: (a: { client: object }) => Promise<unknown>): Promise<unknown> };
    }
  ).client;
  const codec = (await pool.withConnection('KV', async ({ client }: { client: object }) => {
    return (client.constructor as unknown as { service: { Txn: MethodCodec } }).service.Txn;
  })) as MethodCodec;
  c.close();
  return codec;
}

const b = (s: string): Buffer => Buffer.from(s);
const mod = (key: string, rev: number): ICompare => ({
  key: b(key),
  target: 'Mod',
  result: 'Equal',
  mod_revision: rev,
});
const absent = (key: string): ICompare => ({ key: b(key), target: 'Create', result: 'Equal', create_revision: 0 });
const valueIs = (key: string, v: string): ICompare => ({ key: b(key), target: 'Value', result: 'Equal', value: b(v) });

const requests: { name: string; compare: ICompare[]; ops: TxnOp[] }[] = [
  { name: 'one create', compare: [absent('/r/rev'), absent('/r/a')], ops: [{ key: b('/r/a'), value: '{"a":1}' }] },
  {
    name: 'updates at large revisions',
    compare: [mod('/r/rev', 2 ** 40 + 5), mod('/r/a', 127), mod('/r/b', 128), mod('/r/c', 2 ** 31 + 1)],
    ops: [
      { key: b('/r/a'), value: 'x'.repeat(200_000) },
      { key: b('/r/b'), value: '' },
      { key: b('/r/c'), value: Buffer.from([0, 255, 1]) },
    ],
  },
  {
    name: 'a pipelined record compare and deletes',
    compare: [valueIs('/r/rev', '{"rv":9,"w":"tok.3"}'), mod('/r/d', 9)],
    ops: [
      { key: b('/r/rev'), value: b('{"rv":10,"del":{"d":10}}') },
      { key: b('/r/d'), value: undefined },
    ],
  },
  {
    name: 'unicode keys and values',
    compare: [valueIs('/r/é', '')],
    ops: [{ key: b('/r/ключ'), value: 'значение ✓' }],
  },
  { name: 'no compares', compare: [], ops: [{ key: b('/r/x'), value: 'y' }] },
];

function asEtcd3(ops: TxnOp[]): unknown[] {
  return ops.map((op) =>
    op.value === undefined
      ? { request_delete_range: { key: op.key } }
      : { request_put: { key: op.key, value: Buffer.from(op.value) } },
  );
}

describe('txn codec', () => {
  let codec: MethodCodec;
  before(async () => {
    codec = await etcd3Codec();
  });

  for (const r of requests)
    it(`encodes ${r.name} as etcd3's serializer does`, () => {
      const ours = encodeTxn(r.compare, r.ops);
      const theirs = codec.requestSerialize({ compare: r.compare, success: asEtcd3(r.ops), failure: [] });
      assert.equal(ours.toString('hex'), theirs.toString('hex'));
    });

  it('refuses compares it cannot encode', () => {
    assert.throws(
      () => encodeTxn([{ key: b('k'), target: 'Version', result: 'Equal', version: 1 }], []),
      /unsupported/,
    );
    assert.throws(() => encodeTxn([{ ...mod('k', 1), result: 'Greater' }], []), /unsupported/);
  });

  const answers = [
    { revision: '1', succeeded: true },
    { revision: '0', succeeded: false },
    { revision: String(2 ** 40 + 7), succeeded: true },
    { revision: String(2 ** 53 - 1), succeeded: false },
  ];
  for (const a of answers)
    it(`decodes revision ${a.revision}, succeeded ${a.succeeded}, skipping the per-op responses`, () => {
      const header = {
        cluster_id: '14841639068965178418',
        member_id: '10276657743932975437',
        revision: a.revision,
        raft_term: '2',
      };
      const bytes = codec.responseSerialize({
        header,
        succeeded: a.succeeded,
        responses: [
          { response_put: { header, prev_kv: null } },
          {
            response_range: {
              header,
              kvs: [{ key: b('k'), value: b('v'), mod_revision: '5' }],
              more: false,
              count: '1',
            },
          },
        ],
      });
      assert.deepEqual(decodeTxnAnswer(bytes), { revision: Number(a.revision), succeeded: a.succeeded });
    });

  it('throws on a truncated answer', () => {
    const bytes = codec.responseSerialize({ header: { revision: '300' }, succeeded: true, responses: [] });
    assert.throws(() => decodeTxnAnswer(bytes.subarray(0, 3)), /truncated/);
  });
});

describe('TxnCaller on a real etcd', () => {
  let etcd: TestEtcd;
  let client: Etcd3;
  before(async () => {
    etcd = await startEtcd();
    client = new Etcd3({ hosts: etcd.url });
  });
  after(async () => {
    client?.close();
    await etcd?.cleanup();
  });

  it('answers the committed revision of a transaction, and a refusal with the current one', async () => {
    const caller = new TxnCaller(client);
    const ok = await caller.txn(encodeTxn([absent('/c/a')], [{ key: b('/c/a'), value: 'one' }]), 5_000);
    assert.equal(ok.succeeded, true);
    const read = await client.get('/c/a').exec();
    assert.equal(read.kvs[0]!.value.toString(), 'one');
    assert.equal(ok.revision, Number(read.kvs[0]!.mod_revision));
    // the key exists now: the same create is refused and writes nothing
    await client.put('/c/other').value('x');
    const refused = await caller.txn(encodeTxn([absent('/c/a')], [{ key: b('/c/a'), value: 'two' }]), 5_000);
    assert.equal(refused.succeeded, false);
    assert.equal(refused.revision, ok.revision + 1);
    assert.equal(await client.get('/c/a').string(), 'one');
  });

  it("sends the Txn on its own HTTP/2 session, not through grpc-js's call stack (member chosen by etcd3's pool)", async () => {
    const pool = (
      client.kv as unknown as {
        client: { withConnection(s: 'KV', fn: (a: { client: object }) => Promise<unknown>): Promise<unknown> };
      }
    ).client;
    const kv = (await pool.withConnection('KV', async ({ client: c }) => c)) as { makeUnaryRequest: unknown };
    const grpcCall = kv.makeUnaryRequest;
    kv.makeUnaryRequest = () => assert.fail('the Txn went through grpc-js');
    try {
      const caller = new TxnCaller(client);
      const res = await caller.txn(encodeTxn([absent('/c/own')], [{ key: b('/c/own'), value: 'h2' }]), 5_000);
      assert.equal(res.succeeded, true);
      caller.close();
    } finally {
      kv.makeUnaryRequest = grpcCall;
    }
    assert.equal(await client.get('/c/own').string(), 'h2');
  });

  it("fails with etcd3's error for a request etcd rejects", async () => {
    const caller = new TxnCaller(client);
    const twice = [
      { key: b('/c/dup'), value: '1' },
      { key: b('/c/dup'), value: '2' },
    ];
    await assert.rejects(caller.txn(encodeTxn([], twice), 5_000), /duplicate key/);
  });
});

describe('TxnCaller deadlines', () => {
  it('fails a call nobody answers within its deadline (and each retry within its own), as etcd3 does', {
    timeout: 10_000,
  }, async () => {
    // a member that accepts connections and never speaks HTTP/2: grpc-js would wait for it far longer
    const sockets: Socket[] = [];
    const silent = createServer((s) => sockets.push(s)).listen(0, '127.0.0.1');
    await once(silent, 'listening');
    const { port } = silent.address() as { port: number };
    const client = new Etcd3({ hosts: `http://127.0.0.1:${port}` });
    try {
      const caller = new TxnCaller(client);
      const t0 = Date.now();
      const err = await caller.txn(encodeTxn([], [{ key: b('/d/a'), value: 'x' }]), 300).then(
        () => assert.fail('answered'),
        (e: unknown) => e,
      );
      const elapsed = Date.now() - t0;
      assert.ok(err instanceof GRPCDeadlineExceededError, String(err));
      // three attempts of 300 ms, each found by a sweep at most SWEEP_MS late
      assert.ok(elapsed >= 300 && elapsed < 3 * (300 + 250) + 1_000, `failed after ${elapsed} ms`);
    } finally {
      client.close();
      for (const s of sockets) s.destroy();
      silent.close();
    }
  });
});
