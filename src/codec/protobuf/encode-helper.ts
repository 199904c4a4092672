/**
 * A second thread for a large Protobuf LIST's first encoding (issue 24 item 7). The first
 * Protobuf list of a large collection encodes every item before its first byte (the envelope's
 * length counts them all), in the one actor that owns the collection. With `shareEncoding`, the
 * actor hands chunks of the items, taken from the back, to a helper thread
 * (encode-helper-worker.ts) as UTF-8 texts written into one of two shared input slots, while it
 * encodes the items from the front itself; the helper answers each chunk's item bytes in one
 * buffer (transferred, kept as a slab: item-slabs.ts `adopt`), which the actor reads with
 * receiveMessageOnPort, without returning to its event loop. When the two meet, the actor waits
 * on a shared counter (Atomics.wait) for the chunks still out.
 *
 * One helper per actor thread, kept, unreferenced: started when a collection reaches START_MIN
 * entries (codec.warmProtobuf) or by a list of that many missing items (it joins once its schema
 * is loaded; the actor does not wait for it). Same bytes: both threads run the same encoder on
 * the same text. A helper that ends (STATE = GONE), or gives no answer for STALL_MS while the
 * actor waits, is dropped: the actor encodes the chunks it had out itself (one thread). An item
 * the helper does not encode (answered -1: a text the encoder leaves to the object path) is
 * encoded by the actor; an item whose encoding throws is left unencoded, for the caller's
 * in-order pass to raise. */
import { MessageChannel, type MessagePort, receiveMessageOnPort, Worker } from 'node:worker_threads';
import { adopt } from '../item-slabs.js';
import {
  type Answer,
  type Chunk,
  DONE,
  GONE,
  type HelperData,
  READY,
  STARTING,
  STATE,
} from './encode-helper-protocol.js';

/** The items of one list whose Protobuf bytes are missing. */
export interface SharedWork {
  apiVersion: string;
  count: number;
  text(i: number): string;
  /** whether text i is known to hold only ASCII characters (then written as Latin-1, no well-formedness scan) */
  ascii(i: number): boolean;
  /** encodes item i on this thread and keeps its bytes */
  here(i: number): void;
  /** keeps bytes the helper encoded for item i */
  keep(i: number, bytes: Uint8Array): void;
}

/** fewer missing items than this are encoded on the actor alone (≈ 20–40 ms of work) */
export const SHARE_MIN = 2048;
/**
 * a list with fewer missing items starts no helper (one that runs is used): the helper's start
 * (≈ 230 ms of CPU, a schema load of its own) is paid back only by lists of ≈ 300 ms of encoding
 */
export const START_MIN = 32_768;
/** items per chunk (a chunk's texts ≈ 2.2 MB for density Pods); fewer, as the measurements showed, interrupt the actor more */
const CHUNK = 1024;
/** chunks out at once */
const DEPTH = 2;
/** items the actor encodes between two looks at the helper */
const STEP = 256;
/** no answer for this long while the actor waits: the helper is dropped */
const STALL_MS = 10_000;

/** slots: where the actor writes a chunk's texts, one chunk out per slot (shared memory: no copy, no transfer) */
interface Helper extends EncodeWorker {
  /** the helper's first message: its schema is loaded */
  ready: Promise<boolean>;
}

let helper: Helper | undefined;
let apiDomain: string | undefined;
let nextId = 1;

/** tests, benches: items the helper encoded, helpers started, chunks taken back; a fault for the next helper started */
export const helperStats = { items: 0, started: 0, abandoned: 0, sendMs: 0, waitMs: 0, hereItems: 0, firstSendMs: -1 };
export const helperFaults: { exitAt?: number } = {};
/** benches: `off` encodes every list on the actor alone */
export const helperTuning = { off: false };

/** The API domain the helper's codec maps group names from (codec.configureProtobuf). */
export function configureHelper(domain: string | undefined): void {
  apiDomain = domain;
}
/** A thread running encode-helper-worker.ts, unreferenced, with its port, its flags and its shared input slots. */
export interface EncodeWorker {
  worker: Worker;
  port: MessagePort;
  flags: Int32Array;
  slots: Buffer[];
}

/** Starts an encode-helper-worker.ts thread (this one's, and encode-ahead.ts's at its own priority). */
export function spawnEncodeWorker(
  count: number,
  bytes: number,
  more: Pick<HelperData, 'exitAt' | 'nice'>,
): EncodeWorker {
  const { port1, port2 } = new MessageChannel();
  const shared = new SharedArrayBuffer(8);
  const slots = Array.from({ length: count }, () => new SharedArrayBuffer(bytes));
  const data: HelperData = { port: port2, flags: shared, slots, apiDomain, ...more };
  const worker = new Worker(new URL('./encode-helper-worker.js', import.meta.url), {
    workerData: data,
    transferList: [port2],
    // a small young generation: its RSS +24 MiB instead of +32 (it allocates little per item)
    resourceLimits: { maxYoungGenerationSizeMb: 2 },
  });
  worker.unref();
  return { worker, port: port1, flags: new Int32Array(shared), slots: slots.map((b) => Buffer.from(b)) };
}

function start(): Helper {
  const w = spawnEncodeWorker(DEPTH, INPUT_BYTES, { exitAt: helperFaults.exitAt });
  const ready = new Promise<boolean>((resolve) => {
    w.worker.once('message', () => resolve(true));
    w.worker.once('exit', () => resolve(false));
  });
  const h: Helper = { ...w, ready };
  w.worker.on('error', () => drop(h));
  w.worker.on('exit', () => drop(h));
  helperStats.started++;
  return h;
}

function drop(h: Helper): void {
  if (helper === h) helper = undefined;
  Atomics.store(h.flags, STATE, GONE);
  h.port.close();
  void h.worker.terminate();
}

/** Starts the helper ahead of a list (tests, benches); resolves once it is ready (false: it ended first). */
export async function startHelper(): Promise<boolean> {
  const h = (helper ??= start());
  if (Atomics.load(h.flags, STATE) !== STARTING) return Atomics.load(h.flags, STATE) === READY;
  h.worker.ref();
  try {
    return await h.ready;
  } finally {
    h.worker.unref();
  }
}

/** Starts the helper ahead of a list, if none runs (codec.warmProtobuf); it joins lists once ready. */
export function prestartHelper(): void {
  helper ??= start();
}

/** Ends the helper (tests: the next list or startHelper starts a new one, with helperFaults as they are then). */
export async function stopHelper(): Promise<void> {
  const h = helper;
  if (!h) return;
  drop(h);
  await h.ready;
}

/** the texts of a chunk: ≈ 2.2 MB for 1,024 density Pods (a chunk takes fewer items when they do not fit) */
const INPUT_BYTES = 3 * 1024 * 1024;

/** The kind a text opens with (JSON.stringify of a stored object writes it first). */
export const KIND_FIRST = /^\{"kind":"([A-Za-z0-9]+)"/;

/** Encodes the work's items, sharing them with the helper thread when there are enough. */
export function shareEncoding(work: SharedWork): void {
  const kind = work.count >= SHARE_MIN && !helperTuning.off ? KIND_FIRST.exec(work.text(0))?.[1] : undefined;
  if (!kind) {
    for (let i = 0; i < work.count; i++) tryHere(work, i);
    return;
  }
  if (!helper && work.count >= START_MIN) helper = start();
  if (helper) new Sharing(work, kind, helper).run();
  else for (let i = 0; i < work.count; i++) tryHere(work, i);
}

function tryHere(work: SharedWork, i: number): void {
  try {
    work.here(i);
  } catch {
    // left unencoded: the caller's in-order pass raises it, for the first failing item in order
  }
}

type WellFormed = { isWellFormed?(): boolean };

class Sharing {
  private front = 0;
  private back: number;
  /** chunks out: id -> the chunk's slot and its first item's index (items go from the back: first, first - 1, …) and count */
  private readonly out = new Map<number, { slot: number; last: number; count: number }>();
  private readonly opening: string;

  constructor(
    private readonly work: SharedWork,
    private readonly kind: string,
    private readonly h: Helper,
  ) {
    this.back = work.count;
    this.opening = `{"kind":"${kind}"`;
  }

  run(): void {
    const { work, h } = this;
    const t0 = performance.now();
    for (;;) {
      this.collect();
      const ready = Atomics.load(h.flags, STATE) === READY;
      if (ready && this.out.size < DEPTH && this.back - this.front >= 2 * CHUNK) {
        const s0 = performance.now();
        if (helperStats.firstSendMs < 0) helperStats.firstSendMs = s0 - t0;
        this.send();
        helperStats.sendMs += performance.now() - s0;
      }
      if (this.front < this.back) {
        const stop = Math.min(this.back, this.front + STEP);
        helperStats.hereItems += stop - this.front;
        for (; this.front < stop; this.front++) tryHere(work, this.front);
        continue;
      }
      if (this.out.size === 0) return;
      const w0 = performance.now();
      const ok = this.await();
      helperStats.waitMs += performance.now() - w0;
      if (!ok) return this.abandon();
    }
  }

  /** Sends up to CHUNK items from the back, last first; a text the helper cannot read as bytes is encoded here. */
  private send(): void {
    const { work } = this;
    const slot = this.freeSlot();
    const data = this.h.slots[slot]!;
    const ends = new Int32Array(CHUNK);
    const last = this.back - 1;
    let at = 0;
    let count = 0;
    for (; count < CHUNK && this.back > this.front; count++) {
      const i = this.back - 1;
      const text = work.text(i);
      const ascii = work.ascii(i);
      // a lone surrogate would be written as U+FFFD: such a text (and one of another kind) stays here
      if ((!ascii && (text as WellFormed).isWellFormed?.() === false) || !text.startsWith(this.opening))
        tryHere(work, i);
      else if (at + text.length * (ascii ? 1 : 3) <= data.length)
        at += ascii ? data.write(text, at, text.length, 'latin1') : data.write(text, at);
      else if (count > 0)
        break; // the slot is full: the next chunk takes it
      else tryHere(work, i); // larger than a slot
      ends[count] = at;
      this.back--;
    }
    const id = nextId++;
    const chunk: Chunk = { id, slot, apiVersion: work.apiVersion, kind: this.kind, ends, count };
    this.h.port.postMessage(chunk, [ends.buffer]);
    this.out.set(id, { slot, last, count });
  }

  private freeSlot(): number {
    for (let slot = 0; ; slot++) {
      let used = false;
      for (const c of this.out.values()) if (c.slot === slot) used = true;
      if (!used) return slot;
    }
  }

  /** Takes the helper's answers that have arrived (answers to an earlier list that failed are ignored). */
  private collect(): void {
    for (;;) {
      const m = receiveMessageOnPort(this.h.port);
      if (!m) return;
      const a = m.message as Answer;
      const c = this.out.get(a.id);
      if (c === undefined) continue;
      this.out.delete(a.id);
      this.keepAnswer(c.last, a);
    }
  }

  private keepAnswer(last: number, a: Answer): void {
    const { work } = this;
    let used = 0;
    for (let j = 0; j < a.lens.length; j++) {
      const n = a.lens[j]!;
      if (n >= 0) {
        work.keep(last - j, new Uint8Array(a.out, used, n));
        used += n;
        helperStats.items++;
      } else if (n === -1) tryHere(work, last - j);
    }
    adopt(a.out, used);
  }

  /** Waits for an answer; false when the helper is gone or stalled (it is then dropped). */
  private await(): boolean {
    const { h } = this;
    const since = performance.now();
    for (;;) {
      const seen = Atomics.load(h.flags, DONE);
      const before = this.out.size;
      this.collect();
      if (this.out.size < before) return true;
      if (Atomics.load(h.flags, STATE) === GONE || performance.now() - since > STALL_MS) {
        drop(h);
        return false;
      }
      Atomics.wait(h.flags, DONE, seen, 100);
    }
  }

  /** The chunks still out, encoded here (the helper was dropped). */
  private abandon(): void {
    helperStats.abandoned += this.out.size;
    for (const c of this.out.values()) for (let j = 0; j < c.count; j++) tryHere(this.work, c.last - j);
    this.out.clear();
  }
}
