/**
 * Protobuf item bytes encoded ahead of a collection's first Protobuf LIST, in idle CPU only
 * (issue 24 item 7; docs/benchmarks.md "Protobuf first list, tenth round"). The first Protobuf
 * list of a large collection encodes every item it finds without bytes (≈ 10–13 µs per Pod per
 * thread, shared with encode-helper.ts's thread); the writes that filled the collection came
 * with idle CPU (the density scenario's create phase leaves about half of two cores idle: it
 * waits on commits). Here a second helper thread, the same worker as the list's
 * (encode-helper-worker.ts) but at the lowest priority (nice 19: the kernel runs it only when
 * no other thread wants the core), encodes the entries the collection's type cache queues for
 * it (storage/cacher/type-cache.ts `aheadSource`, once it holds WARM_AT entries), and the actor
 * keeps the bytes on the entries as a list would (the answer is adopted as a slab), so that the
 * first list finds them encoded.
 *
 * The actor's part, per step (actors/encode-ahead.ts calls it after a batch's execution, at the
 * event loop's next check phase): take the answers that have arrived (receiveMessageOnPort; no
 * wait), keep their bytes on entries still without bytes and still their object's newest state
 * (a later write's entry is a new one, encoded by the next list as today), and write the next
 * entries' texts into a free input slot (≈ 0.5–1 µs per item). It never waits for the helper:
 * a step with nothing answered sends nothing more than its free slots take. A helper that ends
 * loses its chunks (their entries stay without bytes: the list encodes them) and is not started
 * again in this thread. Same bytes as the list's helper: the same encoder on the same text.
 */
import { readFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { receiveMessageOnPort } from 'node:worker_threads';
import { type Encodable, protobufKey } from '../codec.js';
import { adopt, release } from '../item-slabs.js';
import { type EncodeWorker, KIND_FIRST, spawnEncodeWorker } from './encode-helper.js';
import { type Answer, type Chunk, DONE, GONE, READY, STATE } from './encode-helper-protocol.js';

/** Entries that may lack Protobuf bytes, queued by a type cache. */
export interface AheadSource {
  /** the next entry to look at; undefined when none waits */
  next(): Encodable | undefined;
  /** whether the entry is still its object's newest state (bytes for a replaced one are dropped) */
  current(e: Encodable): boolean;
}

/** items per chunk: ≈ 0.15–0.25 ms of the actor's thread to write (density Pods) */
export const AHEAD_CHUNK = 256;
/** chunks out at once: the helper finds the next one written while it encodes */
const SLOTS = 2;
/**
 * a slot's bytes: 256 texts of up to 2.7 KiB whose UTF-8 length is not known yet (room for 3
 * bytes per character) or 8 KiB known; a text that does not fit waits for the next chunk (one
 * larger than a slot is left to the list)
 */
const SLOT_BYTES = 2 * 1024 * 1024;
/** the helper's priority: the kernel's lowest (nice 19) */
export const AHEAD_NICE = 19;

interface Out {
  source: AheadSource;
  entries: Encodable[];
  key: string;
  slot: number;
}

interface AheadHelper extends EncodeWorker {
  out: Map<number, Out>;
  /** the answers counted (DONE) when the last step looked */
  seen: number;
  /** the thread loaded its schema (or ended) */
  ready: Promise<unknown>;
}

/** Atomics.waitAsync (Node 20; not in this TypeScript lib) */
type WaitAsync = (a: Int32Array, i: number, v: number) => { async: boolean; value: Promise<string> | string };

let helper: AheadHelper | undefined;
/** a helper ended: none is started again in this thread */
let ended = false;
let nextId = 1;
/** an entry taken from a source that did not fit its chunk: first in the source's next chunk */
const carried = new WeakMap<AheadSource, Encodable>();

/**
 * tests, benches: items sent, kept, dropped (replaced or encoded meanwhile), chunks lost with an
 * ended helper; `nice`: the priority the last helper reported for its thread (undefined: not set)
 */
export const aheadStats = {
  sent: 0,
  kept: 0,
  dropped: 0,
  chunks: 0,
  lost: 0,
  started: 0,
  sendMs: 0,
  keepMs: 0,
  /** idle-CPU checks made, and how many found the machine idle enough */
  idleChecks: 0,
  idleOpen: 0,
  nice: undefined as number | undefined,
};
/** tests: the next helper exits on receiving chunk number exitAt */
export const aheadFaults: { exitAt?: number } = {};
/**
 * Chunks are sent only while at least this share of the machine's CPU time was idle over the last
 * IDLE_WINDOW_MS (all CPUs, /proc/stat or os.cpus(); iowait and niced time count as idle). The helper's nice 19
 * leaves it the idle CPU only, but the kernel still gives it a small share (≈ 1.5% of a core
 * beside one busy thread) and the actor's part (≈ 4 µs per item: the text written, the bytes
 * kept) is on the actor's thread: where no CPU is idle (a CPU-bound load, or a machine others
 * use whole) nothing is sent, and entries wait in their queue for the list. The density
 * scenario's create phase leaves ≥ 43% of two cores idle (quiet runs of the ninth round); a
 * quarter keeps the CPU-bound ConfigMap creates, whose idle moments are short, out.
 */
export const IDLE_SHARE = 0.25;
/**
 * benches: `off` sends nothing (also PLAT_ENCODE_AHEAD=0 in the environment, for paired server
 * runs of one build); tests: `nice`, the next helper's priority (a loaded machine gives nice 19 next to nothing)
 */
export const aheadTuning = {
  off: process.env.PLAT_ENCODE_AHEAD === '0',
  nice: AHEAD_NICE,
  /** IDLE_SHARE, or PLAT_ENCODE_AHEAD_IDLE (0: send whatever the machine's load) */
  idleShare: Number(process.env.PLAT_ENCODE_AHEAD_IDLE ?? IDLE_SHARE),
};

const IDLE_WINDOW_MS = 250;
let idleOpen = false;
let idleAt = -Infinity;
let idleLast: { idle: number; total: number } | undefined;

/**
 * The machine's CPU times so far (available: idle, iowait and niced; total), in any unit. Niced
 * time counts as available: it is this helper's own (whose work would otherwise close the gate
 * it runs under) or other work that yields to anyone.
 */
function cpuTimes(): { idle: number; total: number } {
  try {
    const f = readFileSync('/proc/stat', 'latin1')
      .slice(0, 256)
      .split('\n', 1)[0]!
      .trim()
      .split(/\s+/)
      .slice(1)
      .map(Number);
    return { idle: f[1]! + f[3]! + (f[4] ?? 0), total: f.reduce((a, b) => a + b, 0) };
  } catch {
    let idle = 0;
    let total = 0;
    for (const c of cpus()) {
      idle += c.times.idle + c.times.nice;
      total += c.times.idle + c.times.user + c.times.sys + c.times.nice + c.times.irq;
    }
    return { idle, total };
  }
}

/** Whether the machine had idle CPU over the last window (looked at once per window). */
function idleCpu(): boolean {
  if (aheadTuning.idleShare <= 0) return true;
  const now = performance.now();
  if (now - idleAt < IDLE_WINDOW_MS) return idleOpen;
  const t = cpuTimes();
  if (idleLast && t.total > idleLast.total)
    idleOpen = (t.idle - idleLast.idle) / (t.total - idleLast.total) >= aheadTuning.idleShare;
  [idleLast, idleAt] = [t, now];
  aheadStats.idleChecks++;
  if (idleOpen) aheadStats.idleOpen++;
  return idleOpen;
}

function start(): AheadHelper {
  const w = spawnEncodeWorker(SLOTS, SLOT_BYTES, { exitAt: aheadFaults.exitAt, nice: aheadTuning.nice });
  aheadStats.nice = undefined;
  // its first message reports its priority, its second that it is ready
  const ready = new Promise((resolve) => {
    w.worker.on('message', (m: { nice?: number } | string) => {
      if (typeof m === 'string') resolve(true);
      else aheadStats.nice = m.nice;
    });
    w.worker.once('exit', resolve);
  });
  const h: AheadHelper = { ...w, out: new Map(), seen: 0, ready };
  w.worker.on('error', () => drop(h));
  w.worker.on('exit', () => drop(h));
  aheadStats.started++;
  return h;
}

/** The helper ended (or is stopped): its chunks are lost, their entries stay without bytes. */
function drop(h: AheadHelper): void {
  if (helper === h) {
    helper = undefined;
    ended = true;
  }
  aheadStats.lost += h.out.size;
  h.out.clear();
  Atomics.store(h.flags, STATE, GONE);
  h.port.close();
  void h.worker.terminate();
}

/**
 * One step: keeps the answers that have arrived, then sends the source's waiting entries while
 * a slot is free. Never waits. Answers whether chunks are still out.
 */
export function encodeAhead(source: AheadSource): boolean {
  if (aheadTuning.off || ended) return false;
  // no helper started before the machine first has idle CPU
  if (!helper && !idleCpu()) return false;
  const h = (helper ??= start());
  take(h);
  if (Atomics.load(h.flags, STATE) === GONE) {
    drop(h);
    return false;
  }
  if (Atomics.load(h.flags, STATE) !== READY) return false;
  if (h.out.size >= SLOTS || !idleCpu()) return h.out.size > 0;
  const s0 = performance.now();
  while (h.out.size < SLOTS && send(h, source));
  aheadStats.sendMs += performance.now() - s0;
  return h.out.size > 0;
}

/** Whether a helper runs with chunks out (tests). */
export const aheadOut = (): number => helper?.out.size ?? 0;

type WellFormed = { isWellFormed?(): boolean };

/** Writes up to AHEAD_CHUNK waiting entries' texts into a free slot and posts them; false when none waits. */
function send(h: AheadHelper, source: AheadSource): boolean {
  const slot = [...Array(SLOTS).keys()].find((i) => ![...h.out.values()].some((o) => o.slot === i))!;
  const data = h.slots[slot]!;
  const ends = new Int32Array(AHEAD_CHUNK);
  const entries: Encodable[] = [];
  let at = 0;
  let apiVersion = '';
  let opening = '';
  let key = '';
  let kind = '';
  while (entries.length < AHEAD_CHUNK) {
    const e = carried.get(source) ?? source.next();
    carried.delete(source);
    if (!e) break;
    const v = e.apiVersion ?? e.obj.apiVersion ?? '';
    if (!kind) {
      kind = KIND_FIRST.exec(e.json)?.[1] ?? '';
      if (!kind) continue; // a text the helper does not take: left to the list
      [apiVersion, opening, key] = [v, `{"kind":"${kind}"`, protobufKey(v)];
    }
    if (v !== apiVersion || e.encoded?.[key] !== undefined || !e.json.startsWith(opening) || !source.current(e))
      continue;
    const text = e.json;
    const ascii = e.jsonBytes === text.length;
    if (at + text.length * (ascii ? 1 : 3) > data.length) {
      if (entries.length > 0) carried.set(source, e);
      if (entries.length > 0) break;
      continue; // larger than a slot: left to the list
    }
    const n = ascii ? data.write(text, at, text.length, 'latin1') : data.write(text, at);
    // as many bytes as characters: ASCII, hence well formed; else a lone surrogate would have been
    // written as U+FFFD: such a text is left to the list (its bytes are overwritten by the next)
    if (n !== text.length && (text as WellFormed).isWellFormed?.() === false) continue;
    e.jsonBytes ??= n;
    at += n;
    ends[entries.length] = at;
    entries.push(e);
  }
  if (entries.length === 0) return false;
  const id = nextId++;
  const chunk: Chunk = { id, slot, apiVersion, kind, ends, count: entries.length };
  h.port.postMessage(chunk, [ends.buffer]);
  h.out.set(id, { source, entries, key, slot });
  aheadStats.sent += entries.length;
  aheadStats.chunks++;
  return true;
}

/** Keeps the bytes of the answers that have arrived. */
function take(h: AheadHelper): void {
  h.seen = Atomics.load(h.flags, DONE);
  for (;;) {
    const m = receiveMessageOnPort(h.port);
    if (!m) return;
    const a = m.message as Answer;
    const out = h.out.get(a.id);
    if (!out) continue;
    h.out.delete(a.id);
    const k0 = performance.now();
    keep(out, a);
    aheadStats.keepMs += performance.now() - k0;
  }
}

/** An answer's bytes onto its entries, as a list keeps them: views of the answer, adopted as a slab. */
function keep({ source, entries, key }: Out, a: Answer): void {
  let used = 0;
  const dropped: Uint8Array[] = [];
  for (let j = 0; j < a.lens.length; j++) {
    const n = a.lens[j]!;
    if (n < 0) continue; // not encoded there: the list encodes it
    const e = entries[j]!;
    const bytes = new Uint8Array(a.out, used, n);
    used += n;
    if (e.encoded?.[key] === undefined && source.current(e)) {
      (e.encoded ??= {})[key] = bytes;
      aheadStats.kept++;
    } else dropped.push(bytes);
  }
  adopt(a.out, used);
  // bytes no entry keeps count as dead in their slab (item-slabs.ts compaction)
  for (const b of dropped) release(b);
  aheadStats.dropped += dropped.length;
}

/** Resolves once the helper answered since the last step looked, or ended (tests: no polling loop, no sleep). */
export async function aheadAnswered(): Promise<void> {
  const h = helper;
  if (!h) return;
  const w = (Atomics as unknown as { waitAsync: WaitAsync }).waitAsync(h.flags, DONE, h.seen);
  // the thread is referenced while waited for: the wait alone keeps no event loop alive
  h.worker.ref();
  try {
    if (w.async) await w.value;
  } finally {
    h.worker.unref();
  }
}

/** Resolves once the helper is ready (its priority reported, its schema loaded), or ended (tests). */
export async function aheadReady(): Promise<void> {
  const h = helper;
  if (!h) return;
  h.worker.ref();
  try {
    await h.ready;
  } finally {
    h.worker.unref();
  }
}

/** Ends the helper (tests): the next step starts a new one, with aheadFaults as they are then. */
export async function stopAhead(): Promise<void> {
  const h = helper;
  ended = false;
  if (!h) return;
  drop(h);
  ended = false;
  await h.worker.terminate();
}
