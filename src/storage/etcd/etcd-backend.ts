/**
 * etcd backend: one key space per shard actor, `<prefix>/<space>/<key>`, mirroring the LMDB
 * environment per shard; the space's revision record lives inside it at `\0meta/revision`.
 * Reads at start-up are paginated ranges at one etcd revision; commits are etcd transactions
 * guarded by compares (optimistic concurrency), durable once etcd acknowledges them. Several
 * API servers may share a space: each follows the others' commits through an etcd watch.
 */
import { randomBytes } from 'node:crypto';
import type { Etcd3, ICompare, IRequestOp } from 'etcd3';
import { CommitConflict, type Backend, type RemoteChange, type StoredEntry, type Write } from '../interface.js';
import { CALL_TIMEOUT_MS, classify, createClient, type EtcdConfig } from './etcd-client.js';
import { TxnCaller } from './txn-call.js';
import { encodeTxn, type TxnAnswer, type TxnOp } from './txn-codec.js';
import { Compactor } from './compactor.js';
import { META_REVISION, SpaceFollower, parseRevision, type RevisionRecord, type SpaceSnapshot } from './follower.js';

export { META_REVISION, parseRevision } from './follower.js';

export interface EtcdBackendOptions {
  /** keys per range page at start-up */
  pageKeys?: number;
  /** operations per transaction, revision included (etcd's --max-txn-ops, default 128) */
  maxTxnOps?: number;
  /** payload bytes per transaction, below etcd's --max-request-bytes (default 1.5 MiB) */
  maxTxnBytes?: number;
  /** run the periodic compaction of the whole etcd (one backend per server process does) */
  compact?: boolean;
  /**
   * every record written carries a token unique to its transaction, so a commit may start while
   * the one before is in flight (see SpaceFollower.base); without it the record is the bare
   * resourceVersion and a commit should start only once the one before settled
   */
  pipeline?: boolean;
}

const DEFAULTS = { pageKeys: 1000, maxTxnOps: 128, maxTxnBytes: 1024 * 1024, pipeline: false };
/** how long a refused commit waits for the watch to deliver the commit that beat it */
const CATCH_UP_MS = 10_000;
type IResponse = Awaited<ReturnType<Etcd3['kv']['txn']>>;
/** the deadline of the read that makes a read consistent */
const SYNC_TIMEOUT_MS = 5_000;

/** The first key after every key that starts with prefix (etcd's range_end for a prefix). */
export function prefixEnd(prefix: Buffer): Buffer {
  for (let i = prefix.length - 1; i >= 0; i--) {
    if (prefix[i]! < 0xff) {
      const end = Buffer.from(prefix.subarray(0, i + 1));
      end[i]!++;
      return end;
    }
  }
  return Buffer.from([0]); // all 0xff: to the end of the key space
}

export class EtcdBackend implements Backend {
  private readonly client: Etcd3;
  /** the commit's Txn on the client's connections, with its own codec (txn-codec.ts) */
  private readonly caller: TxnCaller;
  private readonly root: Buffer;
  private readonly revisionKey: Buffer;
  /** where the first slice kept the revision (read once at open, for stores it wrote) */
  private readonly legacyRevisionKey: Buffer;
  private readonly opts: typeof DEFAULTS;
  private readonly compactor: Compactor | undefined;
  private readonly servers: string;
  private readonly follower: SpaceFollower;
  private rev = 0;
  /** transactions in flight, and how many of them write each key */
  private readonly inFlight = new Set<Promise<TxnAnswer>>();
  /**
   * whether each transaction in flight committed in the end (its one resend included): a
   * refused transaction sent behind it is worth sending again only if all before it did
   */
  private readonly outcomes = new WeakMap<Promise<TxnAnswer>, Promise<boolean>>();
  private readonly inFlightKeys = new Map<string, number>();
  /** this backend's record token (see EtcdBackendOptions.pipeline) and its transaction count */
  private readonly token = randomBytes(6).toString('base64url');
  private txnSeq = 0;

  /** space names this backend's key space inside the prefix, e.g. `shard-0-of-2`. */
  constructor(cfg: EtcdConfig, space: string, options: EtcdBackendOptions = {}) {
    this.client = createClient(cfg);
    this.caller = new TxnCaller(this.client);
    this.servers = cfg.servers.join(',');
    this.root = Buffer.from(`${cfg.prefix}/${space}/`);
    this.revisionKey = Buffer.concat([this.root, Buffer.from(META_REVISION)]);
    this.legacyRevisionKey = Buffer.from(`${cfg.prefix}/meta/${space}/revision`);
    this.opts = { ...DEFAULTS, ...stripUndefined(options) };
    this.follower = new SpaceFollower(this.client, this.root, () => this.snapshot());
    if (options.compact && cfg.compactionIntervalMs > 0) {
      this.compactor = new Compactor(
        this.client,
        Buffer.from(`${cfg.prefix}/compact_rev_key`),
        cfg.compactionIntervalMs,
      );
    }
  }

  async open(): Promise<void> {
    const [res, legacy] = await Promise.all(
      [this.revisionKey, this.legacyRevisionKey].map((key) => this.client.kv.range({ key })),
    ).catch((e: Error) => {
      throw new Error(`cannot read from etcd at ${this.servers}: ${e.message}`);
    });
    const kv = res!.kvs[0];
    const old = legacy!.kvs[0];
    this.rev = Math.max(kv ? parseRevision(kv.value.toString()).rv : 0, old ? Number(old.value.toString()) : 0);
    this.follower.known(Number(res!.header.revision), kv ? Number(kv.mod_revision) : 0);
    this.compactor?.start();
  }

  /**
   * Pages of the space at one etcd revision. A full read (prefix '') is the shard's load: the
   * backend then knows every key's mod_revision at that revision, which its commits compare.
   */
  async *range(prefix: string): AsyncIterable<StoredEntry[]> {
    let key = Buffer.concat([this.root, Buffer.from(prefix)]);
    const end = prefixEnd(key);
    let revision: string | undefined;
    const full = prefix === '';
    // Every page starts strictly after the last key of the one before, so this ends.
    for (;;) {
      const res = await this.client.kv.range({ key, range_end: end, limit: this.opts.pageKeys, revision });
      // All pages are read at the first page's revision: one consistent snapshot.
      if (revision === undefined) {
        revision = res.header.revision;
        if (full) this.follower.reset(Number(revision));
      }
      const page: StoredEntry[] = [];
      for (const kv of res.kvs) {
        const k = kv.key.subarray(this.root.length).toString();
        if (full) this.follower.modRevs.set(k, Number(kv.mod_revision));
        if (k === META_REVISION) {
          if (full) this.follower.known(Number(revision), Number(kv.mod_revision));
          continue;
        }
        page.push({ key: k, value: kv.value.toString() });
      }
      if (page.length) yield page;
      if (!res.more || res.kvs.length === 0) return;
      key = Buffer.concat([res.kvs[res.kvs.length - 1]!.key, Buffer.from([0])]);
    }
  }

  /** Every key of the space at one revision, with mod_revisions (the follower's re-list). */
  private async snapshot(): Promise<SpaceSnapshot> {
    const end = prefixEnd(this.root);
    let key = this.root;
    let revision: string | undefined;
    const kvs: SpaceSnapshot['kvs'] = [];
    for (;;) {
      const res = await this.client.kv.range({ key, range_end: end, limit: this.opts.pageKeys, revision });
      revision ??= res.header.revision;
      for (const kv of res.kvs)
        kvs.push({
          key: kv.key.subarray(this.root.length).toString(),
          value: kv.value.toString(),
          modRev: Number(kv.mod_revision),
        });
      if (!res.more || res.kvs.length === 0) return { revision: Number(revision), kvs };
      key = Buffer.concat([res.kvs[res.kvs.length - 1]!.key, Buffer.from([0])]);
    }
  }

  follow(onChanges: (changes: RemoteChange[]) => void): void {
    this.follower.start(onChanges);
  }

  /**
   * Commits as etcd transactions that succeed only if nothing changed the space since the
   * state this backend knows: the revision record is compared (every commit writes it, so
   * commits to a space are totally ordered; by mod_revision, or by value over a transaction
   * still in flight: SpaceFollower.base), and every written key's mod_revision (absent for a
   * create), as upstream's guaranteed updates do. written() runs once the last transaction is
   * sent: the next commit may start then (it waits only for the keys this one writes). A
   * refused transaction waits until the follower has delivered the commit that beat it, then
   * rejects with CommitConflict.
   */
  async commit(writes: Write[], revision: number, written?: () => void): Promise<void> {
    const f = this.follower;
    let chain = -1;
    await f
      .hold(async () => {
        const txns = this.transactions(writes);
        for (let i = 0; i < txns.length; i++) {
          const batch = txns[i]!;
          // the base is taken before any wait: a commit started over one in flight stays on it
          const base = f.base(this.revisionKey);
          chain = base.chain;
          // a key a transaction in flight writes has a mod_revision known once that one settled
          // (committed() ran for it: its outcome is known after that)
          while (batch.some((w) => this.inFlightKeys.has(w.key))) await this.settledAll();
          const { txn, record } = this.build(batch, revision, base.compare);
          const earlier = [...this.inFlight].map((c) => this.outcomes.get(c)!);
          let outcome!: (committed: boolean) => void;
          const committed = new Promise<boolean>((r) => (outcome = r));
          try {
            const call = this.send(txn, batch, committed);
            f.sent(record, base.chain);
            if (i === txns.length - 1) written?.();
            let res = await call;
            // etcd may apply a transaction before the one sent ahead of it (each call is its own
            // stream; 9% of the Txns of bench/etcd.ts): refused so, it is sent again, unchanged,
            // once the ones ahead of it committed. Its compares decide again, so the read of
            // what moved (a second call) is only made when it is refused for good.
            if (!res.succeeded && earlier.length && (await allTrue(earlier)))
              res = await this.send(txn, batch, committed);
            if (!res.succeeded) {
              outcome(false);
              const now = await this.moved(batch);
              throw this.refusal(now.responses, batch, Number(now.header.revision));
            }
            f.committed(res.revision, batch, base.chain);
            outcome(true);
          } finally {
            // failed without an answer (or refused): not committed as far as this backend knows
            // (a no-op after outcome(true))
            outcome(false);
          }
        }
      })
      .catch(async (e: unknown) => {
        // a transaction that failed otherwise may still commit: the chain ends here too
        if (!(e instanceof CommitConflict)) {
          f.unsure(chain);
          throw e;
        }
        // deliver the commit that won before the batch runs again
        await f.caughtUp(e.rev, CATCH_UP_MS).finally(() => f.refused(chain));
        throw e;
      });
    this.rev = Math.max(this.rev, revision);
  }

  /** The transaction (its wire bytes) of one slice of a commit, and the record value it writes. */
  private build(batch: Write[], revision: number, recordCompare: ICompare): { txn: Buffer; record: Buffer } {
    const record: RevisionRecord & { w?: string } = { rv: revision };
    for (const w of batch) if (w.value === undefined && w.rv !== undefined) (record.del ??= {})[w.key] = w.rv;
    if (this.opts.pipeline) record.w = `${this.token}.${++this.txnSeq}`;
    const value = Buffer.from(JSON.stringify(record.del || record.w ? record : revision));
    const compare: ICompare[] = [recordCompare];
    const success: TxnOp[] = [{ key: this.revisionKey, value }];
    for (const w of batch) {
      const key = Buffer.concat([this.root, Buffer.from(w.key)]);
      compare.push(this.follower.keyCompare(key, w.key, recordCompare));
      success.push({ key, value: w.value });
    }
    // (no failure branch: its reads cost every transaction client and etcd CPU; a refusal
    // reads them once it happens, see moved())
    return { txn: encodeTxn(compare, success), record: value };
  }

  /**
   * After a refusal: the record and every written key (keys only: their mod_revisions) in one
   * read, so the refusal names what moved (changes after the refusal only add to it).
   */
  private moved(batch: Write[]): Promise<IResponse> {
    const success: IRequestOp[] = [{ request_range: { key: this.revisionKey } }];
    for (const w of batch)
      success.push({ request_range: { key: Buffer.concat([this.root, Buffer.from(w.key)]), keys_only: true } });
    return this.client.kv.txn({ compare: [], success, failure: [] }).catch((e: unknown) => {
      throw classify(e, this.servers);
    });
  }

  /**
   * Sends one transaction, counted in flight with the keys it writes until it settles;
   * committed: whether it (or its resend) committed in the end, known once committed() ran.
   */
  private send(txn: Buffer, batch: Write[], committed: Promise<boolean>): Promise<TxnAnswer> {
    const call = this.caller.txn(txn, CALL_TIMEOUT_MS).catch((e: unknown) => {
      throw classify(e, this.servers);
    });
    this.outcomes.set(call, committed);
    this.track(call, batch);
    return call;
  }

  /** Resolves once every transaction in flight now has its outcome (committed() ran for it). */
  private async settledAll(): Promise<void> {
    await Promise.all([...this.inFlight].map((c) => this.outcomes.get(c)));
  }

  /** Counts a transaction in flight and the keys it writes until it settles. */
  private track(call: Promise<TxnAnswer>, batch: Write[]): void {
    this.inFlight.add(call);
    for (const w of batch) this.inFlightKeys.set(w.key, (this.inFlightKeys.get(w.key) ?? 0) + 1);
    const settle = (): void => {
      this.inFlight.delete(call);
      for (const w of batch) {
        const n = this.inFlightKeys.get(w.key)! - 1;
        if (n) this.inFlightKeys.set(w.key, n);
        else this.inFlightKeys.delete(w.key);
      }
    };
    call.then(settle, settle);
  }

  /**
   * Why a transaction was refused, from the reads after it (the record, then each write's key):
   * a moved record (another server's commit), or keys changed behind the record (a writer
   * outside this protocol). Its revision is the newest of those changes, so the catch-up waits
   * until the watch has delivered every one of them (a key's change included: without it the
   * batch would run again against the same stale state, and be refused again).
   */
  private refusal(
    responses: { response_range?: { kvs: { mod_revision: string }[] } }[],
    batch: Write[],
    header: number,
  ): CommitConflict {
    const record = responses[0]?.response_range?.kvs[0];
    const recordRev = Number(record?.mod_revision ?? 0);
    let rev = record ? recordRev : header;
    const keys: string[] = [];
    batch.forEach((w, i) => {
      const kv = responses[i + 1]?.response_range?.kvs[0];
      const now = kv ? Number(kv.mod_revision) : undefined;
      // a key that is no longer as this backend knew it (same check as its compare)
      if (now === this.follower.modRevs.get(w.key)) return;
      keys.push(w.key);
      if (now !== undefined && now > recordRev) rev = Math.max(rev, now);
    });
    const what = keys.length
      ? `keys changed behind the revision record: ${keys.join(', ')}`
      : `the revision record moved to ${record?.mod_revision ?? 'absent'}`;
    return new CommitConflict(what, rev, keys);
  }

  /**
   * Splits the writes into transactions within etcd's request limits; usually one. etcd
   * rejects a key twice in one transaction, so only the last write of a key is kept (the
   * batch's final state is the same).
   */
  private transactions(writes: Write[]): Write[][] {
    const last = new Map<string, Write>();
    for (const w of writes) {
      last.delete(w.key);
      last.set(w.key, w);
    }
    const txns: Write[][] = [[]];
    let bytes = 0;
    for (const w of last.values()) {
      const size =
        this.root.length + Buffer.byteLength(w.key) + (w.value === undefined ? 0 : Buffer.byteLength(w.value));
      let cur = txns[txns.length - 1]!;
      if (cur.length && (cur.length + 1 >= this.opts.maxTxnOps || bytes + size > this.opts.maxTxnBytes)) {
        txns.push((cur = []));
        bytes = 0;
      }
      cur.push(w);
      bytes += size;
    }
    return txns;
  }

  revision(): number {
    return this.rev;
  }

  /**
   * Reads the revision record (a linearizable read: it goes through the raft leader) and waits
   * until the follower has delivered the space's state up to its mod_revision: every commit to
   * the space writes the record, so nothing committed before the read is missed.
   */
  async sync(): Promise<void> {
    const res = await this.client.kv
      .range({ key: this.revisionKey, keys_only: true }, { deadline: Date.now() + SYNC_TIMEOUT_MS })
      .catch((e: unknown) => {
        throw classify(e, this.servers);
      });
    const kv = res.kvs[0];
    if (kv) await this.follower.caughtUp(Number(kv.mod_revision), CATCH_UP_MS);
  }

  async close(): Promise<void> {
    this.compactor?.stop();
    this.follower.stop();
    this.caller.close();
    this.client.close();
  }
}

/**
 * Whether every transaction sent ahead of a refused one committed: the refused one may then only
 * have overtaken them (etcd applies concurrent calls in any order). When one of them was
 * refused, so is every one sent behind it.
 */
async function allTrue(outcomes: Promise<boolean>[]): Promise<boolean> {
  return (await Promise.all(outcomes)).every(Boolean);
}

function stripUndefined<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}
