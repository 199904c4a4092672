/**
 * etcd backend: one key space per shard actor, `<prefix>/<space>/<key>`, mirroring the LMDB
 * environment per shard; the space's revision lives at `<prefix>/meta/<space>/revision`.
 * Reads at start-up are paginated ranges at one etcd revision; commits are etcd transactions,
 * durable once etcd acknowledges them (etcd syncs its raft log before answering).
 */
import type { Etcd3, IRequestOp } from 'etcd3';
import type { Backend, StoredEntry, Write } from '../interface.js';
import { createClient, type EtcdConfig } from './etcd-client.js';
import { Compactor } from './compactor.js';

export interface EtcdBackendOptions {
  /** keys per range page at start-up */
  pageKeys?: number;
  /** operations per transaction, revision included (etcd's --max-txn-ops, default 128) */
  maxTxnOps?: number;
  /** payload bytes per transaction, below etcd's --max-request-bytes (default 1.5 MiB) */
  maxTxnBytes?: number;
  /** run the periodic compaction of the whole etcd (one backend per server process does) */
  compact?: boolean;
}

const DEFAULTS = { pageKeys: 1000, maxTxnOps: 128, maxTxnBytes: 1024 * 1024 };

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
  private readonly root: Buffer;
  private readonly revisionKey: Buffer;
  private readonly opts: typeof DEFAULTS;
  private readonly compactor: Compactor | undefined;
  private readonly servers: string;
  private rev = 0;

  /** space names this backend's key space inside the prefix, e.g. `shard-0-of-2`. */
  constructor(cfg: EtcdConfig, space: string, options: EtcdBackendOptions = {}) {
    this.client = createClient(cfg);
    this.servers = cfg.servers.join(',');
    this.root = Buffer.from(`${cfg.prefix}/${space}/`);
    this.revisionKey = Buffer.from(`${cfg.prefix}/meta/${space}/revision`);
    this.opts = { ...DEFAULTS, ...stripUndefined(options) };
    if (options.compact && cfg.compactionIntervalMs > 0) {
      this.compactor = new Compactor(this.client, Buffer.from(`${cfg.prefix}/compact_rev_key`), cfg.compactionIntervalMs);
    }
  }

  async open(): Promise<void> {
    const res = await this.client.kv.range({ key: this.revisionKey }).catch((e: Error) => {
      throw new Error(`cannot read from etcd at ${this.servers}: ${e.message}`);
    });
    const kv = res.kvs[0];
    this.rev = kv ? Number(kv.value.toString()) : 0;
    this.compactor?.start();
  }

  async *range(prefix: string): AsyncIterable<StoredEntry[]> {
    let key = Buffer.concat([this.root, Buffer.from(prefix)]);
    const end = prefixEnd(key);
    let revision: string | undefined;
    // Every page starts strictly after the last key of the one before, so this ends.
    for (;;) {
      const res = await this.client.kv.range({ key, range_end: end, limit: this.opts.pageKeys, revision });
      // All pages are read at the first page's revision: one consistent snapshot.
      revision ??= res.header.revision;
      if (res.kvs.length) {
        yield res.kvs.map((kv) => ({ key: kv.key.subarray(this.root.length).toString(), value: kv.value.toString() }));
      }
      if (!res.more || res.kvs.length === 0) return;
      key = Buffer.concat([res.kvs[res.kvs.length - 1]!.key, Buffer.from([0])]);
    }
  }

  async commit(writes: Write[], revision: number): Promise<void> {
    const revisionOp: IRequestOp = { request_put: { key: this.revisionKey, value: Buffer.from(String(revision)) } };
    for (const ops of this.transactions(writes)) {
      // The revision rides in every transaction, so it is never below a stored write's.
      await this.client.kv.txn({ success: [...ops, revisionOp] });
    }
    this.rev = revision;
  }

  /**
   * Splits the writes into transactions within etcd's request limits; usually one. etcd
   * rejects a key twice in one transaction, so only the last write of a key is kept (the
   * batch's final state is the same).
   */
  private transactions(writes: Write[]): IRequestOp[][] {
    const last = new Map<string, Write>();
    for (const w of writes) { last.delete(w.key); last.set(w.key, w); }
    const txns: IRequestOp[][] = [[]];
    let bytes = 0;
    for (const w of last.values()) {
      const key = Buffer.concat([this.root, Buffer.from(w.key)]);
      const op: IRequestOp = w.value === undefined
        ? { request_delete_range: { key } }
        : { request_put: { key, value: Buffer.from(w.value) } };
      const size = key.length + (op.request_put?.value?.length ?? 0);
      let cur = txns[txns.length - 1]!;
      if (cur.length && (cur.length + 1 >= this.opts.maxTxnOps || bytes + size > this.opts.maxTxnBytes)) {
        txns.push(cur = []);
        bytes = 0;
      }
      cur.push(op);
      bytes += size;
    }
    return txns;
  }

  revision(): number {
    return this.rev;
  }

  async close(): Promise<void> {
    this.compactor?.stop();
    this.client.close();
  }
}

function stripUndefined<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}
