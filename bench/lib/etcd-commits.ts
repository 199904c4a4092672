/**
 * The etcd backend's own CPU per create, in process, without the API server around it: an
 * `EtcdBackend` (pipelined, as the shard actors make it) commits batches of `batch` creates of
 * 1 KB, the next one sent once the one before is written (two in flight, as the actor's
 * pipeline), with its follower running, so every commit also comes back on its watch as it does
 * in the server. Reported per round: this process's CPU per create (the Txn encode and call, the
 * watch echo, the bookkeeping, GC) and the creates per second.
 */
import { EtcdBackend } from '../../src/storage/etcd/etcd-backend.js';

const VALUE = JSON.stringify({ kind: 'ConfigMap', data: { v: 'x'.repeat(1000) } });

export interface CommitRound {
  usPerCreate: number;
  perSecond: number;
}

async function round(
  b: EtcdBackend,
  tag: string,
  batches: number,
  batch: number,
  rv: { n: number },
): Promise<CommitRound> {
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  const inFlight: Promise<void>[] = [];
  for (let i = 0; i < batches; i++) {
    const writes = Array.from({ length: batch }, (_, j) => ({
      key: `configmaps/bench/${tag}-${i}-${j}`,
      value: VALUE,
    }));
    rv.n += batch;
    let written!: () => void;
    const sent = new Promise<void>((r) => (written = r));
    inFlight.push(b.commit(writes, rv.n, written));
    await sent;
    if (inFlight.length >= 2) await inFlight.shift();
  }
  await Promise.all(inFlight);
  const c = process.cpuUsage(c0);
  const n = batches * batch;
  return { usPerCreate: (c.user + c.system) / n, perSecond: n / ((performance.now() - t0) / 1000) };
}

/** rounds of `batches` commits of `batch` creates each on a fresh prefix of the etcd at url */
export async function backendCommits(url: string, rounds: number, batches: number, batch = 13): Promise<CommitRound[]> {
  const prefix = `/commits-${process.pid}-${Date.now()}`;
  const b = new EtcdBackend({ servers: [url], prefix, compactionIntervalMs: 0 }, 'shard-0-of-1', { pipeline: true });
  try {
    await b.open();
    for await (const _ of b.range('')) {
      // the load: the backend knows every key's mod_revision from here on
    }
    b.follow(() => undefined);
    const rv = { n: b.revision() };
    const out: CommitRound[] = [];
    for (let r = 0; r < rounds; r++) out.push(await round(b, `r${r}`, batches, batch, rv));
    return out;
  } finally {
    await b.close();
  }
}
