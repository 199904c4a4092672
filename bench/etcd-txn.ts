/**
 * `node dist/bench/etcd-txn.js [--txns 400] [--rounds 3] [--ops 16]`
 *
 * Client CPU per etcd transaction of the write path, in process: a Txn of --ops creates of 1 KB
 * (a compare of the revision record and one per key, the record's put and one per key), as the
 * etcd backend sends per batch, two ways, alternated round by round:
 * - etcd3: `client.kv.txn(request object)` (protobufjs encode, full decode with int64 as strings);
 * - codec: `encodeTxn` + `TxnCaller` (src/storage/etcd/txn-codec.ts), the backend's path.
 * Each round measures, for --txns transactions: the codec alone (encode + decode of a recorded
 * answer, no I/O), and the whole call to a throw-away etcd one at a time (process CPU per Txn,
 * grpc-js and http2 included). etcd is a single local member (bench/lib/etcd-proc.ts).
 */
import { Etcd3, type ICompare, type IRequestOp } from 'etcd3';
import { encodeTxn, decodeTxnAnswer, type TxnOp } from '../src/storage/etcd/txn-codec.js';
import { TxnCaller } from '../src/storage/etcd/txn-call.js';
import { startEtcd } from './lib/etcd-proc.js';

const arg = (name: string, fallback: number): number => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : fallback;
};
const TXNS = arg('txns', 400);
const ROUNDS = arg('rounds', 3);
const OPS = arg('ops', 16);
const VALUE = JSON.stringify({ kind: 'ConfigMap', data: { v: 'x'.repeat(1000) } });

/** etcd3's own (proto-loader + protobufjs) codec of KV/Txn */
interface Codec {
  requestSerialize(v: unknown): Buffer;
  responseSerialize(v: unknown): Buffer;
  responseDeserialize(b: Buffer): unknown;
}

/** The compares and writes of transaction t (keys unique per run and round). */
function txnParts(run: string, t: number): { compare: ICompare[]; ops: TxnOp[] } {
  const record = Buffer.from(`/b/${run}/\u0000meta/revision`);
  const compare: ICompare[] = [{ key: record, target: 'Create', result: 'Equal', create_revision: 0 }];
  const ops: TxnOp[] = [{ key: record, value: `{"rv":${t},"w":"tok.${t}"}` }];
  if (t > 0)
    compare[0] = {
      key: record,
      target: 'Value',
      result: 'Equal',
      value: Buffer.from(`{"rv":${t - 1},"w":"tok.${t - 1}"}`),
    };
  for (let i = 0; i < OPS; i++) {
    const key = Buffer.from(`/b/${run}//configmaps/bench/c-${t}-${i}`);
    compare.push({ key, target: 'Create', result: 'Equal', create_revision: 0 });
    ops.push({ key, value: VALUE });
  }
  return { compare, ops };
}

function asRequest(p: { compare: ICompare[]; ops: TxnOp[] }): {
  compare: ICompare[];
  success: IRequestOp[];
  failure: [];
} {
  const success = p.ops.map((op) => ({ request_put: { key: op.key, value: Buffer.from(op.value ?? '') } }));
  return { compare: p.compare, success, failure: [] };
}

function cpuUs(fn: () => void): number {
  const c0 = process.cpuUsage();
  fn();
  const c = process.cpuUsage(c0);
  return (c.user + c.system) / TXNS;
}

async function cpuUsAsync(fn: () => Promise<void>): Promise<number> {
  const c0 = process.cpuUsage();
  await fn();
  const c = process.cpuUsage(c0);
  return (c.user + c.system) / TXNS;
}

async function main(): Promise<void> {
  const etcd = await startEtcd();
  const client = new Etcd3({ hosts: etcd.url });
  const caller = new TxnCaller(client);
  const pool = (
    client.kv as unknown as {
      client: { withConnection(s: 'KV', fn: (a: { client: object }) => Promise<unknown>): Promise<unknown> };
    }
  ).client;
  const codec = (await pool.withConnection('KV', async ({ client: c }: { client: object }) => {
    return (c.constructor as unknown as { service: { Txn: Codec } }).service.Txn;
  })) as Codec;
  try {
    // etcd's answer to such a transaction: its header and one response_put (with a header) per op
    const header = {
      cluster_id: '14841639068965178418',
      member_id: '10276657743932975437',
      revision: '123456',
      raft_term: '2',
    };
    const responses = txnParts('sample', 0).ops.map(() => ({ response_put: { header } }));
    const answer = codec.responseSerialize({ header, succeeded: true, responses });
    const parts = Array.from({ length: TXNS }, (_, t) => txnParts('codec', t));
    for (let r = 1; r <= ROUNDS; r++) {
      const etcd3Codec = cpuUs(() => {
        for (const p of parts) {
          codec.requestSerialize(asRequest(p));
          codec.responseDeserialize(answer);
        }
      });
      const ours = cpuUs(() => {
        for (const p of parts) {
          encodeTxn(p.compare, p.ops);
          decodeTxnAnswer(answer);
        }
      });
      const viaEtcd3 = await cpuUsAsync(async () => {
        for (let t = 0; t < TXNS; t++) {
          const res = await client.kv.txn(asRequest(txnParts(`e${r}`, t)));
          if (!res.succeeded) throw new Error('etcd3 txn refused');
        }
      });
      const viaCodec = await cpuUsAsync(async () => {
        for (let t = 0; t < TXNS; t++) {
          const p = txnParts(`o${r}`, t);
          const res = await caller.txn(encodeTxn(p.compare, p.ops), 15_000);
          if (!res.succeeded) throw new Error('codec txn refused');
        }
      });
      const f = (x: number): string => x.toFixed(0);
      console.log(
        `round ${r}: CPU µs per Txn of ${OPS} creates — codec only: etcd3 ${f(etcd3Codec)}, ours ${f(ours)}; ` +
          `whole call: etcd3 ${f(viaEtcd3)}, ours ${f(viaCodec)} (${TXNS} Txns each)`,
      );
    }
  } finally {
    client.close();
    await etcd.stop();
  }
}

await main();
