/**
 * A type cache entry that keeps one form of its object: the JSON string. The parsed object is
 * made from it on demand (`obj`) and kept for the PARSED_MAX entries parsed (or written) most
 * recently, first in first out: at 150,000 Pods the parsed objects were 1.9 KB of the 7 KB each
 * stored Pod cost the actor (bench/density-memory.ts), while a LIST, a watch and a plain JSON GET
 * read only the JSON, the selectable state and the stored apiVersion. Writes and views parse the
 * few objects they touch.
 *
 * Contract (as for every entry): the object is immutable once cached; `obj` answers an equal
 * object after an eviction, not necessarily the same one.
 */
import type { Stored } from '../../api/object.js';
import { FifoHolders } from '../../api/fifo-holders.js';
import type { Entry } from './type-cache.js';
import { deepFreeze } from '../../api/deep-freeze.js';

/**
 * How many entries keep their parsed object (per thread: each shard actor has its own). Small
 * on purpose: a created object's parsed tree (≈ 2.4 KB for the density Pod, with its managed
 * fields) held for 8,192 more writes was promoted to the old generation and died there, ≈ 2.4 KB
 * of old-space garbage per create interleaved with the live JSON, which fragments the actor's
 * heap (docs/benchmarks.md "Density memory, ninth round"); 256 still covers the objects a
 * request wave touches again (an apply's previous state, a GET after a write).
 */
export const PARSED_MAX = 256;

export class CachedEntry implements Entry {
  encoded?: Record<string, Uint8Array>;
  metaJson?: string;
  jsonBytes?: number;
  /** the parsed object while this entry is in `parsed` */
  private value: Stored | undefined;

  constructor(
    readonly namespace: string,
    readonly name: string,
    readonly rv: number,
    readonly json: string,
    readonly apiVersion: string,
    readonly labels: Record<string, string> | undefined,
    readonly fields: Record<string, string>,
    obj?: Stored,
  ) {
    if (obj) keep(this, obj);
  }

  get obj(): Stored {
    return this.value ?? keep(this, JSON.parse(this.json) as Stored);
  }

  /**
   * The object for one use that keeps nothing of it: the held one, else one parsed for the caller
   * and not held. A LIST encoding every entry (its Protobuf or CBOR item bytes) reads through
   * this, so it neither pays the holders' churn nor evicts the objects writes and GETs use.
   */
  objOnce(): Stored {
    return this.value ?? (JSON.parse(this.json) as Stored);
  }

  /** Whether the parsed object is held now (tests and the memory bench). */
  get isParsed(): boolean {
    return this.value !== undefined;
  }

  /** Called by `keep` and the eviction of `parsed` only. */
  hold(obj: Stored | undefined): void {
    this.value = obj;
  }
}

/** The entries holding a parsed object, oldest first; the oldest lets go of it past `max`. */
const parsed = new FifoHolders<CachedEntry>(PARSED_MAX, (oldest) => oldest.hold(undefined));

/**
 * `PLAT_FREEZE_STORED=1` (set by the test runner for every test) deep-freezes each object an
 * entry holds, so a write into a cached object anywhere in the server throws in strict-mode
 * modules instead of silently changing it: writes share unchanged subtrees with the stored
 * object (src/registry/patch.ts patchBase). Read once at load; off in production.
 */
const FREEZE = process.env.PLAT_FREEZE_STORED === '1';

/** Holds obj in e, as one of the PARSED_MAX most recent. */
function keep(e: CachedEntry, obj: Stored): Stored {
  if (FREEZE) deepFreeze(obj);
  e.hold(obj);
  parsed.add(e);
  return obj;
}

/** Sets how many entries keep a parsed object (tests); evicts down to it on the next parse. */
export function setParsedMax(max: number): void {
  parsed.max = max;
}

/** How many entries hold a parsed object now. */
export function parsedCount(): number {
  return parsed.size;
}
