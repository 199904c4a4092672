/**
 * In-memory state of one resource type inside its owning actor: the committed objects,
 * ordered by namespace then name, and a bounded history of changes for exact reads and
 * watch replay. Only the owning actor mutates it, after the backend has committed.
 */
import type { Stored } from '../../api/object.js';
import { release } from '../../codec/item-slabs.js';
import { WARM_AT, warmProtobuf } from '../../codec/codec.js';
import type { AheadSource } from '../../codec/protobuf/encode-ahead.js';

export interface Entry {
  namespace: string;
  name: string;
  rv: number;
  /** the object (cached entries parse it from json on demand: cached-entry.ts); never mutated */
  readonly obj: Stored;
  /** the object encoded once as JSON; shared by get, list and watch */
  json: string;
  /** obj.apiVersion, kept apart so that lists and views need not parse the object */
  apiVersion: string;
  /** UTF-8 length of json, measured on first use (codec.joinJson) */
  jsonBytes?: number;
  /**
   * Written by this process's own commit path, so its object went through this build's
   * defaulting: a patch may share its unchanged subtrees (src/registry/patch.ts patchBase).
   * Unset for objects loaded from storage or written by another server (an older build may
   * have stored them without a default that this one's update defaulting would fill in).
   */
  own?: boolean;
  /** bare item bytes per binary encoding and apiVersion, filled on first use (codec.encodeEntries) */
  encoded?: Record<string, Uint8Array>;
  /** JSON of obj.metadata, filled on first use (Table rows' PartialObjectMetadata) */
  metaJson?: string;
  labels: Record<string, string> | undefined;
  fields: Record<string, string>;
}

export interface HistoryEvent {
  rv: number;
  type: 'ADDED' | 'MODIFIED' | 'DELETED';
  at: number;
  key: string;
  /** state after the change (for DELETED: the final state) */
  entry: Entry;
  /** state before the change; undefined for ADDED */
  prev: Entry | undefined;
}

export function entryKey(namespace: string, name: string): string {
  return namespace + '\u0000' + name;
}

export class TypeCache {
  private readonly items = new Map<string, Entry>();
  private sorted: string[] | null = [];
  /** retained changes, oldest first, from index `head` on (trimmed lazily, compacted in bulk) */
  private history: HistoryEvent[] = [];
  private head = 0;
  /** oldest rv from which history is complete (every event with rv > this is retained) */
  private historyFloor = 0;
  /**
   * Entries to encode in Protobuf in idle time (codec/protobuf/encode-ahead.ts), from index
   * `aheadAt` on: every entry once the collection reaches WARM_AT, then each one written.
   */
  private ahead: (Entry | undefined)[] | undefined;
  private aheadAt = 0;
  private source: AheadSource | undefined;

  constructor(
    private readonly windowMs: number,
    private readonly maxHistory = 200_000,
  ) {}

  get size(): number {
    return this.items.size;
  }

  /** Number of retained history events. */
  get historyLength(): number {
    return this.history.length - this.head;
  }

  get(namespace: string, name: string): Entry | undefined {
    return this.items.get(entryKey(namespace, name));
  }

  /** Loads a stored entry at start-up (no history event). */
  load(e: Entry): void {
    this.items.set(entryKey(e.namespace, e.name), e);
    this.sorted = null;
    this.ahead?.push(e);
    if (this.items.size === WARM_AT) this.warm();
  }

  /** Records a committed change; returns the history event. Changes arrive in rv order. */
  apply(type: HistoryEvent['type'], e: Entry, now: number): HistoryEvent {
    const key = entryKey(e.namespace, e.name);
    const prev = this.items.get(key);
    // the replaced state's list bytes count as dead in their slab (compaction: codec/item-slabs.ts)
    if (prev?.encoded && prev !== e) for (const k in prev.encoded) release(prev.encoded[k]!);
    if (type === 'DELETED') {
      this.items.delete(key);
      this.sorted = null;
    } else {
      if (!prev) this.sorted = null;
      this.items.set(key, e);
      this.ahead?.push(e);
      // a collection this large will list with a helper thread: started ahead (codec.warmProtobuf)
      if (this.items.size === WARM_AT) this.warm();
    }
    const ev: HistoryEvent = { rv: e.rv, type, at: now, key, entry: e, prev };
    this.history.push(ev);
    this.trim(now);
    return ev;
  }

  /** The helper thread and schema ahead of a large list, and every entry queued for encoding in idle time. */
  private warm(): void {
    warmProtobuf();
    if (!this.ahead) this.ahead = [...this.items.values()];
  }

  /** The entries queued for Protobuf encoding in idle time (undefined below WARM_AT entries). */
  aheadSource(): AheadSource | undefined {
    if (!this.ahead) return undefined;
    return (this.source ??= {
      next: () => this.nextAhead(),
      current: (e) => this.items.get(entryKey((e as Entry).namespace, (e as Entry).name)) === e,
    });
  }

  private nextAhead(): Entry | undefined {
    const q = this.ahead!;
    // many more queued than held (writes faster than the helper): the queue restarts from the entries held
    if (q.length - this.aheadAt > 2 * this.items.size + 1024)
      [this.ahead, this.aheadAt] = [[...this.items.values()], 0];
    else if (this.aheadAt > 1024 && this.aheadAt * 2 > q.length)
      [this.ahead, this.aheadAt] = [q.slice(this.aheadAt), 0];
    const e = this.ahead![this.aheadAt];
    if (e === undefined) return undefined;
    this.ahead![this.aheadAt++] = undefined;
    return e;
  }

  /** Oldest resourceVersion a watch or exact read may start from. */
  oldestRV(now: number): number {
    this.trim(now);
    return this.historyFloor;
  }

  private trim(now: number): void {
    const h = this.history;
    let i = this.head;
    while (i < h.length && (now - h[i]!.at > this.windowMs || h.length - i > this.maxHistory)) i++;
    if (i === this.head) return;
    this.historyFloor = Math.max(this.historyFloor, h[i - 1]!.rv);
    for (let j = this.head; j < i; j++) h[j] = undefined as unknown as HistoryEvent;
    this.head = i;
    // compact once the dropped prefix dominates, so trimming stays O(1) amortized per change
    if (this.head > 1024 && this.head * 2 > h.length) {
      this.history = h.slice(this.head);
      this.head = 0;
    }
  }

  /**
   * Marks history as starting at rv: nothing at or before rv is known (after loading from
   * storage). Never moves the floor backwards.
   */
  setFloor(rv: number): void {
    this.historyFloor = Math.max(this.historyFloor, rv);
  }

  /** Events with rv > fromRV, in order. Caller checks fromRV >= oldestRV. */
  eventsAfter(fromRV: number): HistoryEvent[] {
    const h = this.history;
    let lo = this.head,
      hi = h.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (h[mid]!.rv <= fromRV) lo = mid + 1;
      else hi = mid;
    }
    return h.slice(lo);
  }

  private sortedKeys(): string[] {
    if (!this.sorted) this.sorted = [...this.items.keys()].sort();
    return this.sorted;
  }

  /**
   * Entries in key order, optionally within one namespace and after a key, as of revision
   * `atRV` (undefined = now). Older states come from history; caller checks availability.
   */
  *scan(namespace: string, afterKey: string | undefined, atRV?: number): Generator<[string, Entry]> {
    const overlay = atRV === undefined ? undefined : this.overlayAt(atRV);
    const keys = this.sortedKeys();
    // keys the snapshot holds that the newest state lacks (deleted since atRV), merged in on
    // the fly: a page of a list at an older version costs its page, not a sort of every key
    const gone = overlay?.size ? [...overlay.keys()].filter((k) => !this.items.has(k)).sort() : NO_KEYS;
    const prefix = namespace ? namespace + '\u0000' : '';
    const from = afterKey !== undefined && afterKey >= prefix ? afterKey + '\u0000' : prefix;
    let i = lowerBound(keys, from);
    let j = lowerBound(gone, from);
    while (i < keys.length || j < gone.length) {
      const k = j >= gone.length || (i < keys.length && keys[i]! < gone[j]!) ? keys[i++]! : gone[j++]!;
      if (prefix && !k.startsWith(prefix)) break;
      if (afterKey !== undefined && k <= afterKey) continue;
      const e = overlay?.has(k) ? overlay.get(k) : this.items.get(k);
      if (e) yield [k, e];
    }
  }

  /**
   * How many entries follow `afterKey` (within the namespace) as of `atRV`, by index arithmetic
   * on the sorted keys — a paged list's remainingItemCount without scanning to the end. Undefined
   * when keys changed since `atRV` (the caller scans the snapshot instead).
   */
  countAfter(namespace: string, afterKey: string, atRV?: number): number | undefined {
    if (atRV !== undefined && this.eventsAfter(atRV).length) return undefined;
    const keys = this.sortedKeys();
    const start = lowerBound(keys, afterKey + '\u0000');
    const end = namespace ? lowerBound(keys, namespace + '\u0001') : keys.length;
    return Math.max(0, end - start);
  }

  /** key -> state at rv (undefined = absent) for every key changed after rv. */
  private overlayAt(rv: number): Map<string, Entry | undefined> {
    const m = new Map<string, Entry | undefined>();
    const evs = this.eventsAfter(rv);
    for (let i = evs.length - 1; i >= 0; i--) m.set(evs[i]!.key, evs[i]!.prev);
    return m;
  }
}

const NO_KEYS: string[] = [];

function lowerBound(keys: string[], k: string): number {
  let lo = 0,
    hi = keys.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (keys[mid]! < k) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
