/**
 * Buffers of large reply bodies (LIST bodies and streamed pages, codec.joinItems/joinFields),
 * reused (issue 24 item 2). Each body travels to the front thread in its own transferred
 * buffer; the front hands it back once uWS has taken the bytes (actors/pack.ts returnBody), and
 * the actor writes a later body into it. Without this every list allocated fresh external memory
 * in both threads, and the front paid a full mark-compact of its heap per ~30 MB listed ("GC in
 * old space requested"), a cost per item that grows with the heap, so with the store.
 */
/** smaller bodies are not worth the round trip */
export const REUSE_MIN_BYTES = 64 * 1024;
const MAX_SPARE_BYTES = 64 * 1024 * 1024;
const MAX_SPARES = 16;

let spares: ArrayBuffer[] = [];
let spareBytes = 0;

/**
 * A buffer of exactly `size` bytes, not zero-filled (the caller writes every byte): a view of a
 * spare when one fits (at most twice the size, so memory stays in proportion), else a new one.
 * Either way its ArrayBuffer is the caller's alone.
 */
export function ownedBuffer(size: number): Buffer {
  if (size >= REUSE_MIN_BYTES) {
    let best = -1;
    for (let i = 0; i < spares.length; i++) {
      const n = spares[i]!.byteLength;
      if (n >= size && n <= 2 * size && (best < 0 || n < spares[best]!.byteLength)) best = i;
    }
    if (best >= 0) {
      const ab = spares[best]!;
      spares.splice(best, 1);
      spareBytes -= ab.byteLength;
      return Buffer.from(ab, 0, size);
    }
  }
  return Buffer.allocUnsafeSlow(size);
}

/** Keeps returned buffers for reuse, the newest first; the oldest go past the bounds. */
export function reuse(returned: ArrayBuffer[]): void {
  for (const ab of returned) {
    if (ab.byteLength < REUSE_MIN_BYTES || ab.byteLength > MAX_SPARE_BYTES) continue;
    spares.push(ab);
    spareBytes += ab.byteLength;
  }
  while (spares.length > MAX_SPARES || spareBytes > MAX_SPARE_BYTES) spareBytes -= spares.shift()!.byteLength;
}

/** Bytes held as spares (tests). */
export function spareBytesHeld(): number {
  return spareBytes;
}

/** Drops every spare (tests). */
export function dropSpares(): void {
  spares = [];
  spareBytes = 0;
}
