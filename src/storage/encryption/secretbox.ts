/**
 * NaCl secretbox (XSalsa20-Poly1305), the `secretbox` encryption provider: node:crypto has
 * neither XSalsa20 nor a standalone Poly1305, so both are implemented here from their
 * specifications (Bernstein: Salsa20, XSalsa20/HSalsa20, Poly1305). Sealed layout as NaCl's
 * `secretbox.Seal`: 16-byte tag, then the ciphertext. Only for small stored values.
 */

const SIGMA = [0x61707865, 0x3320646e, 0x79622d32, 0x6b206574];

const rotl = (v: number, c: number): number => ((v << c) | (v >>> (32 - c))) >>> 0;

/** The 20 Salsa20 rounds over x (in place). */
function rounds(x: Uint32Array): void {
  const qr = (a: number, b: number, c: number, d: number) => {
    x[b] = (x[b]! ^ rotl((x[a]! + x[d]!) >>> 0, 7)) >>> 0;
    x[c] = (x[c]! ^ rotl((x[b]! + x[a]!) >>> 0, 9)) >>> 0;
    x[d] = (x[d]! ^ rotl((x[c]! + x[b]!) >>> 0, 13)) >>> 0;
    x[a] = (x[a]! ^ rotl((x[d]! + x[c]!) >>> 0, 18)) >>> 0;
  };
  for (let i = 0; i < 10; i++) {
    qr(0, 4, 8, 12);
    qr(5, 9, 13, 1);
    qr(10, 14, 2, 6);
    qr(15, 3, 7, 11);
    qr(0, 1, 2, 3);
    qr(5, 6, 7, 4);
    qr(10, 11, 8, 9);
    qr(15, 12, 13, 14);
  }
}

const word = (b: Uint8Array, i: number): number =>
  (b[i]! | (b[i + 1]! << 8) | (b[i + 2]! << 16) | (b[i + 3]! << 24)) >>> 0;

/** The input block: constants, 32-byte key, 16 bytes of nonce/counter. */
function block(key: Uint8Array, input16: Uint8Array): Uint32Array {
  const s = new Uint32Array(16);
  s[0] = SIGMA[0]!;
  s[5] = SIGMA[1]!;
  s[10] = SIGMA[2]!;
  s[15] = SIGMA[3]!;
  for (let i = 0; i < 4; i++) {
    s[1 + i] = word(key, 4 * i);
    s[11 + i] = word(key, 16 + 4 * i);
  }
  for (let i = 0; i < 4; i++) s[6 + i] = word(input16, 4 * i);
  return s;
}

/** HSalsa20: a subkey from a key and the first 16 nonce bytes. */
function hsalsa20(key: Uint8Array, n16: Uint8Array): Uint8Array {
  const x = block(key, n16);
  rounds(x);
  const out = new Uint8Array(32);
  const dv = new DataView(out.buffer);
  [0, 5, 10, 15, 6, 7, 8, 9].forEach((w, i) => dv.setUint32(4 * i, x[w]!, true));
  return out;
}

/** Salsa20 keystream XOR with an 8-byte nonce, counter from 0. */
function salsa20Xor(key: Uint8Array, nonce8: Uint8Array, data: Uint8Array): Uint8Array {
  const out = new Uint8Array(data.length);
  const input = new Uint8Array(16);
  input.set(nonce8, 0);
  const ks = new Uint8Array(64);
  const ksv = new DataView(ks.buffer);
  for (let off = 0, counter = 0; off < data.length; off += 64, counter++) {
    new DataView(input.buffer).setUint32(8, counter >>> 0, true);
    new DataView(input.buffer).setUint32(12, Math.floor(counter / 2 ** 32), true);
    const s = block(key, input);
    const x = Uint32Array.from(s);
    rounds(x);
    for (let i = 0; i < 16; i++) ksv.setUint32(4 * i, (x[i]! + s[i]!) >>> 0, true);
    const n = Math.min(64, data.length - off);
    for (let i = 0; i < n; i++) out[off + i] = data[off + i]! ^ ks[i]!;
  }
  return out;
}

const P = (1n << 130n) - 5n;

function leBig(b: Uint8Array): bigint {
  let v = 0n;
  for (let i = b.length - 1; i >= 0; i--) v = (v << 8n) | BigInt(b[i]!);
  return v;
}

/** Poly1305 one-time authenticator (32-byte one-time key). */
export function poly1305(key: Uint8Array, msg: Uint8Array): Uint8Array {
  const r = leBig(key.subarray(0, 16)) & 0x0ffffffc0ffffffc0ffffffc0fffffffn;
  const s = leBig(key.subarray(16, 32));
  let acc = 0n;
  for (let i = 0; i < msg.length; i += 16) {
    const chunk = msg.subarray(i, i + 16);
    const n = leBig(chunk) + (1n << BigInt(8 * chunk.length));
    acc = ((acc + n) * r) % P;
  }
  acc = (acc + s) & ((1n << 128n) - 1n);
  const out = new Uint8Array(16);
  for (let i = 0; i < 16; i++) {
    out[i] = Number(acc & 0xffn);
    acc >>= 8n;
  }
  return out;
}

function xsalsaStream(key: Uint8Array, nonce24: Uint8Array, data: Uint8Array): Uint8Array {
  return salsa20Xor(hsalsa20(key, nonce24.subarray(0, 16)), nonce24.subarray(16, 24), data);
}

/** secretbox.Seal: tag(16) || ciphertext. */
export function secretboxSeal(message: Uint8Array, nonce24: Uint8Array, key: Uint8Array): Uint8Array {
  // the first 32 bytes of the stream are the Poly1305 key; the message is XORed with the rest
  const stream = xsalsaStream(key, nonce24, new Uint8Array(32 + message.length));
  const ct = new Uint8Array(message.length);
  for (let i = 0; i < message.length; i++) ct[i] = message[i]! ^ stream[32 + i]!;
  const out = new Uint8Array(16 + ct.length);
  out.set(poly1305(stream.subarray(0, 32), ct), 0);
  out.set(ct, 16);
  return out;
}

/** secretbox.Open; undefined when the tag does not verify. */
export function secretboxOpen(box: Uint8Array, nonce24: Uint8Array, key: Uint8Array): Uint8Array | undefined {
  if (box.length < 16) return undefined;
  const ct = box.subarray(16);
  const stream = xsalsaStream(key, nonce24, new Uint8Array(32 + ct.length));
  const tag = poly1305(stream.subarray(0, 32), ct);
  let diff = 0;
  for (let i = 0; i < 16; i++) diff |= tag[i]! ^ box[i]!;
  if (diff !== 0) return undefined;
  const out = new Uint8Array(ct.length);
  for (let i = 0; i < ct.length; i++) out[i] = ct[i]! ^ stream[32 + i]!;
  return out;
}
