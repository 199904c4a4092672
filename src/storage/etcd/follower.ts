/**
 * Follows one shard's key space in etcd for its EtcdBackend: the mod_revision of every key
 * (which the backend's transactions compare), the revision record's mod_revision, and an etcd
 * watch that delivers other writers' commits in revision order. Events of the backend's own
 * commits are recognised by revision (a commit succeeds only if nothing else changed the space
 * since the state already delivered, so every event at or below it is known) and skipped;
 * events arriving while a commit is in flight wait until every one settles, so the owner always
 * sees the space's commits in order, its own included.
 *
 * Pipelined commits: a transaction sent while the one before is still in flight cannot know the
 * revision record's next mod_revision, so it compares the record's value with what the one
 * before wrote (`tip`); every record this backend writes carries a token unique to its
 * transaction, so the value matches only if that transaction committed and nothing wrote the
 * record since. A refused transaction breaks the chain: every one sent on it is refused too,
 * and the next chain starts from the delivered state once the refusal is reported (`refused`).
 */
import type { Etcd3, ICompare, IEvent, Watcher } from 'etcd3';
import { StoreUnavailable, type RemoteChange, type Write } from '../interface.js';

/** the space's revision record, inside the space so that one watch sees it with the objects */
export const META_REVISION = '\u0000meta/revision';
/**
 * The revision record: the highest resourceVersion committed to the space and, for the
 * deletes of that transaction, the resourceVersion of each (an etcd delete carries no value).
 */
export interface RevisionRecord {
  rv: number;
  del?: Record<string, number>;
}

export function parseRevision(value: string): RevisionRecord {
  const v = JSON.parse(value) as number | RevisionRecord;
  return typeof v === 'number' ? { rv: v } : v;
}

interface Waiter {
  rev: number;
  resolve: () => void;
}

/** Every key of the space (inside it) with its value and mod_revision, read at one etcd revision. */
export interface SpaceSnapshot {
  revision: number;
  kvs: { key: string; value: string; modRev: number }[];
}

export class SpaceFollower {
  /** key (inside the space) -> mod_revision, from the full load on */
  readonly modRevs = new Map<string, number>();
  /** whether modRevs holds every key (a full load happened): absent then means absent in etcd */
  private loaded = false;
  /** the etcd revision through which the owner knows the space */
  private applied = 0;
  /** mod_revision of the revision record; 0 while it does not exist */
  private recordRev = 0;
  /** transactions in flight (events wait until none is) */
  private committing = 0;
  /**
   * The record value the newest transaction of the current chain wrote (undefined: compare the
   * delivered mod_revision); chain counts the broken chains (see refused()).
   */
  private tip: { value: Buffer; chain: number } | undefined;
  private chain = 0;
  /** chains whose transaction failed without an answer (see unsure()) */
  private readonly doubtful = new Set<number>();
  private buffer: IEvent[] = [];
  private waiters: Waiter[] = [];
  private watcher: Watcher | undefined;
  private stopped = false;
  private onChanges: ((changes: RemoteChange[]) => void) | undefined;
  /** last resourceVersion a foreign commit stored (for a record-less delete) */
  private lastRv = 0;
  /** why the watch failed for good (compaction past its revision), if it did */
  failed: string | undefined;

  /** while a re-list after a failed watch runs: deliveries wait */
  private relisting = false;

  constructor(
    private readonly client: Etcd3,
    private readonly root: Buffer,
    private readonly snapshot: () => Promise<SpaceSnapshot>,
  ) {}

  /** A full load starts at etcd revision rev. */
  reset(rev: number): void {
    this.modRevs.clear();
    this.loaded = true;
    this.applied = rev;
    this.recordRev = 0;
    this.tip = undefined;
  }

  /** The revision record as read at etcd revision rev (mod_revision 0: absent). */
  known(rev: number, recordModRev: number): void {
    this.applied = Math.max(this.applied, rev);
    this.recordRev = recordModRev;
    this.tip = undefined;
  }

  start(onChanges: (changes: RemoteChange[]) => void): void {
    this.onChanges = onChanges;
    this.watch();
  }

  private watch(): void {
    void this.client
      .watch()
      .prefix(this.root)
      .startRevision(String(this.applied + 1))
      .create()
      .then(
        (w) => {
          if (this.stopped) {
            void w.cancel();
            return;
          }
          this.watcher = w;
          w.on('data', (res) => {
            if (res.events.length === 0) return;
            this.buffer.push(...res.events);
            this.drain();
          });
          // the etcd3 client resumes a broken stream by itself; an error ends the watch (e.g. its
          // revision was compacted while this server was cut off): re-list, then watch again
          w.on('error', (e) => void this.relist(`etcd watch of ${this.root.toString()} failed: ${e.message}`));
        },
        (e: Error) => void this.relist(`cannot watch etcd: ${e.message}`),
      );
  }

  /**
   * Upstream's cacher re-list: reads the whole space at one revision, delivers the difference
   * from what this backend knew (puts for new or changed keys, deletes for vanished ones) as
   * one change, and watches again from that revision. Retried every second until it succeeds.
   */
  private async relist(why: string): Promise<void> {
    if (this.stopped || this.relisting) return;
    this.relisting = true;
    this.failed = why;
    console.error(`${why}; re-listing`);
    void this.watcher?.cancel().catch(() => undefined);
    this.watcher = undefined;
    for (;;) {
      if (this.stopped) return;
      // a commit in flight settles first (its events are then known by revision)
      while (this.committing > 0) await new Promise((r) => setTimeout(r, 10));
      try {
        const snap = await this.snapshot();
        this.resynced(snap);
        break;
      } catch (e) {
        console.error(`re-list of ${this.root.toString()} failed: ${(e as Error).message}`);
        await new Promise((r) => setTimeout(r, 1000));
      }
    }
    this.relisting = false;
    this.failed = undefined;
    this.watch();
    this.wake();
  }

  private resynced(snap: SpaceSnapshot): void {
    const changes: RemoteChange[] = [];
    let record: RevisionRecord = { rv: this.lastRv };
    const seen = new Set<string>();
    for (const kv of snap.kvs) {
      seen.add(kv.key);
      if (kv.key === META_REVISION) {
        record = parseRevision(kv.value);
        this.recordRev = kv.modRev;
        this.tip = undefined;
        continue;
      }
      if (this.modRevs.get(kv.key) !== kv.modRev) changes.push({ key: kv.key, value: kv.value, rv: 0 });
      this.modRevs.set(kv.key, kv.modRev);
    }
    for (const key of [...this.modRevs.keys()]) {
      if (seen.has(key)) continue;
      this.modRevs.delete(key);
      if (key !== META_REVISION) changes.push({ key, value: undefined, rv: 0 });
    }
    for (const c of changes) c.rv = record.rv;
    this.lastRv = record.rv;
    // events of the old watch are older than the snapshot or in it
    this.buffer = [];
    this.applied = Math.max(this.applied, snap.revision);
    if (changes.length) this.onChanges?.(changes);
  }

  /** Runs a commit; events that arrive meanwhile wait until it and every other in flight settle. */
  async hold<T>(fn: () => Promise<T>): Promise<T> {
    this.committing++;
    try {
      return await fn();
    } finally {
      this.committing--;
      // after the owner has applied its own commit (its continuation runs in microtasks first)
      setImmediate(() => this.drain());
    }
  }

  /**
   * The compare of the revision record for the next transaction, and its place in the chain:
   * the value the newest transaction sent wrote, else the delivered mod_revision.
   */
  base(key: Buffer): { compare: ICompare; chain: number } {
    const tip = this.tip;
    if (tip) return { compare: { key, target: 'Value', result: 'Equal', value: tip.value }, chain: tip.chain };
    return { compare: this.revisionCompare(key), chain: this.chain };
  }

  /** A transaction built on chain was sent; it wrote value into the record. */
  sent(value: Buffer, chain: number): void {
    if (chain === this.chain) this.tip = { value, chain };
  }

  /**
   * A transaction built on chain was refused, and the commit that beat it delivered: the
   * transactions sent on that chain are refused too (they compare a value never written), and
   * the next one compares the delivered state. (The caller reports the refusal at once, so a
   * batch executed over the refused one's writes runs again before it commits; see Shard.run.)
   */
  refused(chain: number): void {
    if (chain !== this.chain) return;
    this.chain++;
    this.tip = undefined;
  }

  /**
   * A transaction built on chain failed without an answer (a timeout, a lost connection): it
   * may have committed. The chain ends as for a refusal; if a transaction sent on it commits,
   * the doubtful one did too, and its events are at or below what committed() marks delivered:
   * the space is then read again (the re-list delivers the difference).
   */
  unsure(chain: number): void {
    this.doubtful.add(chain);
    this.refused(chain);
  }

  revisionCompare(key: Buffer): ICompare {
    return this.recordRev > 0
      ? { key, target: 'Mod', result: 'Equal', mod_revision: this.recordRev }
      : { key, target: 'Create', result: 'Equal', create_revision: 0 };
  }

  /** The key is as this backend knows it: same mod_revision, or absent (create). */
  keyCompare(key: Buffer, rel: string, record: ICompare): ICompare {
    const m = this.modRevs.get(rel);
    if (m !== undefined) return { key, target: 'Mod', result: 'Equal', mod_revision: m };
    // without a full load the backend cannot know a key is absent: compare the record only
    return this.loaded ? { key, target: 'Create', result: 'Equal', create_revision: 0 } : record;
  }

  /** The backend's own transaction, built on chain, succeeded at etcd revision rev. */
  committed(rev: number, writes: Write[], chain: number): void {
    if (this.doubtful.has(chain)) {
      this.doubtful.delete(chain);
      void this.relist(`a transaction sent after one without an answer committed`);
    }
    // (pipelined transactions may answer out of order; the newest one's revision stays)
    this.applied = Math.max(this.applied, rev);
    this.recordRev = Math.max(this.recordRev, rev);
    for (const w of writes) {
      if (w.value === undefined) this.modRevs.delete(w.key);
      else this.modRevs.set(w.key, rev);
    }
    this.wake();
  }

  /** Resolves once every commit up to etcd revision rev has been delivered. */
  caughtUp(rev: number, timeoutMs: number): Promise<void> {
    if (this.applied >= rev || !this.onChanges) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiters = this.waiters.filter((w) => w !== waiter);
        reject(
          new StoreUnavailable(
            `the etcd watch did not deliver revision ${rev} within ${timeoutMs} ms${this.failed ? ` (${this.failed})` : ''}`,
            true,
          ),
        );
      }, timeoutMs);
      const waiter: Waiter = {
        rev,
        resolve: () => {
          clearTimeout(timer);
          resolve();
        },
      };
      this.waiters.push(waiter);
    });
  }

  private drain(): void {
    if (this.committing > 0 || this.relisting || this.stopped) return;
    const buf = this.buffer;
    this.buffer = [];
    for (let i = 0; i < buf.length; ) {
      const rev = Number(buf[i]!.kv.mod_revision);
      let j = i;
      while (j < buf.length && Number(buf[j]!.kv.mod_revision) === rev) j++;
      if (rev > this.applied) this.apply(rev, buf.slice(i, j));
      i = j;
    }
    this.wake();
  }

  /** One foreign commit (all events of one etcd revision). */
  private apply(rev: number, events: IEvent[]): void {
    let record: RevisionRecord | undefined;
    const changes: RemoteChange[] = [];
    for (const ev of events) {
      const key = ev.kv.key.subarray(this.root.length).toString();
      if (key === META_REVISION) {
        if (ev.type === 'Put') {
          record = parseRevision(ev.kv.value.toString());
          this.lastRv = record.rv;
        }
        this.recordRev = ev.type === 'Put' ? rev : 0;
        this.tip = undefined;
        continue;
      }
      if (ev.type === 'Put') {
        this.modRevs.set(key, rev);
        changes.push({ key, value: ev.kv.value.toString(), rv: record?.rv ?? this.lastRv });
      } else {
        this.modRevs.delete(key);
        changes.push({ key, value: undefined, rv: record?.del?.[key] ?? record?.rv ?? this.lastRv });
      }
    }
    this.applied = rev;
    if (changes.length) this.onChanges?.(changes);
  }

  private wake(): void {
    if (!this.waiters.length) return;
    const ready = this.waiters.filter((w) => w.rev <= this.applied);
    this.waiters = this.waiters.filter((w) => w.rev > this.applied);
    for (const w of ready) w.resolve();
  }

  stop(): void {
    this.stopped = true;
    void this.watcher?.cancel();
  }
}
