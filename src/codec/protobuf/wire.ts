/**
 * Hand-written protobuf wire pieces for the hot paths that only concatenate already-encoded
 * messages (list items, envelopes, watch frames): one allocation and `set` per piece, where
 * protobufjs's Writer queues an operation per field (measured 40x slower for a 5,000-item list).
 */
export function varintLength(n: number): number {
  let len = 1;
  while (n >= 0x80) {
    n = Math.floor(n / 128);
    len++;
  }
  return len;
}

export function writeVarint(out: Uint8Array, at: number, n: number): number {
  while (n >= 0x80) {
    out[at++] = (n & 0x7f) | 0x80;
    n = Math.floor(n / 128);
  }
  out[at++] = n;
  return at;
}

/** Size of a length-delimited field (tag < 128) holding `len` bytes. */
export function fieldLength(len: number): number {
  return 1 + varintLength(len) + len;
}

/** Writes a length-delimited field (tag < 128) with its bytes; returns the next offset. */
export function writeField(out: Uint8Array, at: number, tag: number, bytes: Uint8Array): number {
  out[at++] = tag;
  at = writeVarint(out, at, bytes.length);
  out.set(bytes, at);
  return at + bytes.length;
}
