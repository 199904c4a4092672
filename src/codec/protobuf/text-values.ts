/**
 * Values written from their tokens in the UTF-8 bytes text-scan.ts reads (start and end of the
 * token): scalars validated as convert.ts's scalarEnc validates the parsed values, and the
 * special apimachinery forms' content as wire-encoder.ts writes them. A token of the wrong type
 * throws wire-writer's FALLBACK.
 */
import type protobuf from 'protobufjs';
import * as t from './text-scan.js';
import { parseTime } from './time.js';
import * as w from './wire-writer.js';
import type { SpecialWrite } from './text-plan.js';
import { BASE64, fieldTag, type SpecialKind } from './wire-plan.js';

const fail = w.fallback;

/** A string token's content as a string field's value (length and bytes). */
export function stringToken(s: number, e: number): void {
  const src = t.src;
  if (src[s] !== 0x22) fail();
  if (!w.utf8Token(src, s + 1, e - 1)) w.string(t.stringOf(s, e));
}

/** A string token's value. */
function stringAt(s: number, e: number): string {
  if (t.src[s] !== 0x22) fail();
  return t.stringOf(s, e);
}

/** A number token's value. */
export function numberToken(s: number, e: number): number {
  const c = t.src[s]!;
  if (c !== 0x2d && !(c >= 0x30 && c <= 0x39)) fail();
  return Number(t.src.toString('latin1', s, e));
}

/** An integer token's value: plain digits (at most 15, exact in a double) summed in place, anything else by Number. */
export function integerToken(s: number, e: number): number {
  const src = t.src;
  const negative = src[s] === 0x2d;
  let i = negative ? s + 1 : s;
  if (e - i > 15 || i === e) return checkedInteger(s, e);
  let v = 0;
  for (; i < e; i++) {
    const d = src[i]! - 0x30;
    if (d < 0 || d > 9) return checkedInteger(s, e);
    v = v * 10 + d;
  }
  return negative ? -v : v;
}

function checkedInteger(s: number, e: number): number {
  const n = numberToken(s, e);
  if (!Number.isInteger(n)) fail();
  return n;
}

export function boolToken(s: number, e: number): boolean {
  const src = t.src;
  if (e - s === 4 && src[s] === 0x74 && src[s + 1] === 0x72 && src[s + 2] === 0x75 && src[s + 3] === 0x65) return true;
  if (e - s === 5 && src.toString('latin1', s, e) === 'false') return false;
  return fail();
}

export function bytesToken(s: number, e: number): void {
  const v = stringAt(s, e);
  if (v.length % 4 !== 0 || !BASE64.test(v)) fail();
  w.bytes(Buffer.from(v, 'base64'));
}

/** The special forms' content writers (text-plan.ts KIND_SPECIAL). */
export function specialWrite(
  type: protobuf.Type,
  kind: SpecialKind,
  delegate: (type: protobuf.Type, v: unknown) => Uint8Array,
): SpecialWrite {
  switch (kind) {
    case 'time':
    case 'microTime':
      return timeContent(type, kind === 'microTime');
    case 'intOrString': {
      const [tag, intVal, strVal] = [fieldTag(type, 'type'), fieldTag(type, 'intVal'), fieldTag(type, 'strVal')];
      return (s, e) => {
        if (t.src[s] === 0x22) {
          w.raw(tag);
          w.int64(1);
          w.raw(strVal);
          stringToken(s, e);
        } else {
          const n = checkedInteger(s, e);
          w.raw(tag);
          w.int64(0);
          w.raw(intVal);
          w.int32(n);
        }
      };
    }
    case 'quantity': {
      const tag = fieldTag(type, 'string');
      return (s, e) => {
        w.raw(tag);
        if (t.src[s] === 0x22) stringToken(s, e);
        else w.string(String(numberToken(s, e)));
      };
    }
    case 'raw':
    case 'Raw': {
      const tag = fieldTag(type, kind);
      return (s, e) => {
        // Buffer.from(the value's JSON text): the text's own UTF-8 bytes (a well-formed text)
        w.raw(tag);
        w.bytesOf(t.src, s, e);
      };
    }
    case 'delegate':
      return (s, e) => w.raw(delegate(type, JSON.parse(t.src.toString('utf8', s, e))));
  }
}

interface Time {
  seconds: number;
  nanos?: number;
}

/** A Time or MicroTime from its RFC 3339 string (convert.ts parseTime; the usual UTC form read in place). */
function timeContent(type: protobuf.Type, micro: boolean): SpecialWrite {
  const [seconds, nanos] = [fieldTag(type, 'seconds'), fieldTag(type, 'nanos')];
  return (s, e) => {
    const time = utcSeconds(s, e) ?? parseTime(stringAt(s, e), micro);
    w.raw(seconds);
    w.int64(time.seconds);
    if (time.nanos !== undefined) {
      w.raw(nanos);
      w.int32(time.nanos);
    }
  };
}

/** The "YYYY-MM-DDTHH:MM:SSZ" token at s..e with day ≤ 28 and hour ≤ 23 (no doubt about its validity), else undefined. */
export function utcSeconds(s: number, e: number): Time | undefined {
  const src = t.src;
  const at = s + 1;
  if (e - s !== 22 || src[s] !== 0x22 || src[at + 19] !== 0x5a) return undefined;
  if (src[at + 4] !== 0x2d || src[at + 7] !== 0x2d || src[at + 10] !== 0x54) return undefined;
  if (src[at + 13] !== 0x3a || src[at + 16] !== 0x3a) return undefined;
  const y = digits(src, at, 4);
  const mo = digits(src, at + 5, 2);
  const d = digits(src, at + 8, 2);
  const h = digits(src, at + 11, 2);
  const mi = digits(src, at + 14, 2);
  const sec = digits(src, at + 17, 2);
  if (y < 0 || mo < 1 || mo > 12 || d < 1 || d > 28 || h < 0 || h > 23 || mi < 0 || mi > 59 || sec < 0 || sec > 59)
    return undefined;
  return { seconds: daysFromCivil(y, mo, d) * 86400 + h * 3600 + mi * 60 + sec };
}

/** The n decimal digits at src[at]; -1 when one is not a digit. */
function digits(src: Uint8Array, at: number, n: number): number {
  let v = 0;
  for (let k = 0; k < n; k++) {
    const d = src[at + k]! - 0x30;
    if (d < 0 || d > 9) return -1;
    v = v * 10 + d;
  }
  return v;
}

/** Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's days_from_civil). */
function daysFromCivil(year: number, month: number, day: number): number {
  const y = month <= 2 ? year - 1 : year;
  const era = Math.floor(y / 400);
  const yoe = y - era * 400;
  const doy = Math.floor((153 * (month + (month > 2 ? -3 : 9)) + 2) / 5) + day - 1;
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy;
  return era * 146097 + doe - 719468;
}
