/**
 * Slabs for the item bytes a LIST encodes and its entries keep (issue 24 item 7): the first
 * Protobuf list of a large collection encodes every item once, and one ArrayBuffer per item
 * (150,000 at the density target) cost ≈ 18% of that list in allocation and ≈ 11% in garbage
 * collection ("Protobuf lists, fifth round" in docs/benchmarks.md), besides ≈ 200 bytes of
 * bookkeeping per buffer. A list's items are written into shared slabs of SLAB_BYTES instead,
 * each entry keeping a view of its bytes.
 *
 * Contract: a view's bytes never change (a slab is only appended to). A slab's memory is freed
 * by the garbage collector once no view of it is referenced, so it is pinned as long as one of
 * its entries lives. Compaction: the type cache reports the entries that leave the newest state
 * (`release`, from TypeCache.apply); a slab whose reported-live bytes fall under a quarter of its
 * used bytes is sparse, and `settled` moves a survivor's bytes out of a sparse slab the next time
 * a list reads them, so the next list over a collection frees its sparse slabs. Live counts are
 * an estimate (an entry encoded after leaving the newest state is never released): they decide
 * when to copy, never whether bytes are valid.
 */

/**
 * Slabs are SharedArrayBuffers (used by this thread only): V8 counts an ArrayBuffer's memory as
 * external memory of its isolate and, every ≈ 64 MB of growth, collects for it (scavenges and a
 * mark-compact of the whole heap, "external memory pressure"), while a shared buffer's memory is
 * not counted. A first list of 150,000 Pods keeps ≈ 190 MB of item bytes: three mark-compacts
 * and ≈ 8 such scavenges of a 450 MB heap that free nothing ("Protobuf first list, ninth round"
 * in docs/benchmarks.md). Their memory is freed as before, when no view of them is left. The
 * price: V8 copies out of shared memory byte by byte (relaxed atomics, unless source and target
 * share their alignment), ≈ 0.25 µs more per item of a density Pod on every list's page copy.
 */
/** bytes per slab: ≈ 200 density Pods */
export const SLAB_BYTES = 256 * 1024;
/** items above this get a buffer of their own (a slab would waste its tail) */
const OWN_ABOVE = SLAB_BYTES / 8;

interface Slab {
  buf: ArrayBufferLike;
  /** bytes handed out */
  used: number;
  /** bytes handed out and not released */
  live: number;
}

const slabOf = new WeakMap<ArrayBufferLike, Slab>();
let current: Slab | undefined;

/** A view of n bytes in the current slab (a new slab when it is full), for the caller to fill. */
export function slabAlloc(n: number): Uint8Array {
  if (n > OWN_ABOVE) return new Uint8Array(n);
  let s = current;
  if (!s || s.used + n > s.buf.byteLength) {
    s = { buf: new SharedArrayBuffer(SLAB_BYTES), used: 0, live: 0 };
    slabOf.set(s.buf, s);
    current = s;
  }
  const view = new Uint8Array(s.buf, s.used, n);
  s.used += n;
  s.live += n;
  return view;
}

/** A buffer filled with item bytes elsewhere (a list's helper thread: protobuf/encode-helper.ts), its first `used` bytes handed out: a slab like the others. */
export function adopt(buf: ArrayBufferLike, used: number): void {
  slabOf.set(buf, { buf, used, live: used });
}

/** The item bytes of an entry that left the newest state: its slab counts them as dead. */
export function release(bytes: Uint8Array): void {
  const s = slabOf.get(bytes.buffer);
  if (s) s.live = Math.max(0, s.live - bytes.byteLength);
}

/** Whether bytes sit in a sparse slab (less than a quarter of it live), not the one being filled. */
function sparse(bytes: Uint8Array): Slab | undefined {
  const s = slabOf.get(bytes.buffer);
  return s && s !== current && s.live * 4 < s.used ? s : undefined;
}

/** The bytes to keep: themselves, or a copy in the current slab when theirs is sparse (compaction). */
export function settled(bytes: Uint8Array): Uint8Array {
  const s = sparse(bytes);
  if (!s) return bytes;
  s.live = Math.max(0, s.live - bytes.byteLength);
  const copy = slabAlloc(bytes.byteLength);
  copy.set(bytes);
  return copy;
}

/** Whether bytes are a slab's view (tests). */
export function inSlab(bytes: Uint8Array): boolean {
  return slabOf.has(bytes.buffer);
}

/** Starts the next allocation on a fresh slab (tests). */
export function sealSlab(): void {
  current = undefined;
}
