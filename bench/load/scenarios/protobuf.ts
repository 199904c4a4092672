/**
 * Just enough protobuf to page through a list: the `continue` token of a List answered as
 * `application/vnd.kubernetes.protobuf` (4-byte magic, runtime.Unknown{raw = 2}, the list's
 * ListMeta = 1, its continue = 3).
 */
function varint(b: Buffer, at: { i: number }): number {
  let v = 0;
  let mul = 1;
  for (let n = 0; n < 10 && at.i < b.length; n++) {
    const byte = b[at.i++]!;
    v += (byte & 0x7f) * mul;
    if (byte < 0x80) return v;
    mul *= 128;
  }
  throw new Error('bad varint');
}

/** The length-delimited field `field` of the message in b[start, end), or undefined. */
function field(b: Buffer, start: number, end: number, want: number): [number, number] | undefined {
  const at = { i: start };
  while (at.i < end) {
    const key = varint(b, at);
    const wire = key & 7;
    const num = Math.floor(key / 8);
    if (wire === 2) {
      const len = varint(b, at);
      if (num === want) return [at.i, at.i + len];
      at.i += len;
    } else if (wire === 0) varint(b, at);
    else if (wire === 1) at.i += 8;
    else if (wire === 5) at.i += 4;
    else throw new Error(`wire type ${wire}`);
  }
  return undefined;
}

export function protobufContinue(body: Buffer): string {
  if (body.length < 4 || body.readUInt32BE(0) !== 0x6b387300) return '';
  try {
    const raw = field(body, 4, body.length, 2);
    if (!raw) return '';
    const meta = field(body, raw[0], raw[1], 1);
    if (!meta) return '';
    const cont = field(body, meta[0], meta[1], 3);
    return cont ? body.toString('utf8', cont[0], cont[1]) : '';
  } catch {
    return '';
  }
}
