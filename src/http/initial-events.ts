/**
 * The initial events of watches, shared among watchers (issue 18 item 6). Watches that start
 * from the same state with the same options and encoding (the actor names that with
 * WatchStart.shareKey) get the same bytes: one UTF-8 buffer per payload however many watchers
 * hold it, sliced (never copied) as each watcher's socket takes it. A payload no watcher needs
 * stays among the last RETAINED ones, and the keys held for a type go with each watch op
 * (`held`), so the actor does not send a state the front thread already has.
 */
import { joinChunks, type Chunk } from '../codec/watch-encoding.js';

export interface SharedPayload {
  bytes: Uint8Array;
  /** called once when the watcher no longer needs the bytes (sent or closed) */
  release(): void;
}

interface Entry {
  typeKey: string;
  bytes: Uint8Array;
  refs: number;
}

/** payloads kept with no watcher holding them (the newest; a state rarely outlives a write) */
const RETAINED = 8;

export class InitialEvents {
  /** in insertion order: the oldest unheld payloads are dropped first */
  private readonly payloads = new Map<string, Entry>();

  /**
   * Pins the payloads held for a type while a watch op is out (the actor skips sending them);
   * returns their keys and the unpin to call once the reply has been shared.
   */
  pin(typeKey: string): { keys: string[]; unpin: () => void } {
    const pinned: Entry[] = [];
    const keys: string[] = [];
    for (const [key, e] of this.payloads) {
      if (e.typeKey !== typeKey) continue;
      e.refs++;
      pinned.push(e);
      keys.push(key);
    }
    let unpinned = false;
    return {
      keys,
      unpin: () => {
        if (unpinned) return;
        unpinned = true;
        for (const e of pinned) e.refs--;
        this.trim();
      },
    };
  }

  /**
   * The payload for a watch's initial events: the bytes held under `key` when there are any
   * (`chunks` is then empty or a copy, garbage now), else `chunks` as one buffer kept under `key`.
   */
  share(typeKey: string, key: string | undefined, chunks: Chunk[]): SharedPayload {
    if (key === undefined) return { bytes: toBytes(chunks), release: () => {} };
    let e = this.payloads.get(key);
    if (!e) this.payloads.set(key, (e = { typeKey, bytes: toBytes(chunks), refs: 0 }));
    e.refs++;
    const entry = e;
    let released = false;
    return {
      bytes: entry.bytes,
      release: () => {
        if (released) return;
        released = true;
        entry.refs--;
        this.trim();
      },
    };
  }

  /** Drops the oldest payloads nobody holds beyond the RETAINED newest. */
  private trim(): void {
    let unheld = 0;
    for (const e of this.payloads.values()) if (e.refs === 0) unheld++;
    for (const [key, e] of this.payloads) {
      if (unheld <= RETAINED) break;
      if (e.refs === 0) {
        this.payloads.delete(key);
        unheld--;
      }
    }
  }

  /** Payloads kept now and their bytes (observability and tests). */
  held(): { payloads: number; bytes: number } {
    let bytes = 0;
    for (const e of this.payloads.values()) bytes += e.bytes.byteLength;
    return { payloads: this.payloads.size, bytes };
  }
}

function toBytes(chunks: Chunk[]): Uint8Array {
  const c = joinChunks(chunks);
  return typeof c === 'string' ? Buffer.from(c, 'utf8') : c;
}
