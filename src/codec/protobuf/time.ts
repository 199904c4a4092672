/**
 * metav1.Time and metav1.MicroTime in their protobuf form ({seconds, nanos}) and their JSON form
 * (RFC 3339 in UTC; Time with whole seconds, MicroTime with exactly six fractional digits).
 * As upstream, decoding a Time drops nanos, and an empty message is the zero time (JSON null,
 * here: the field is omitted).
 */
import { FieldError } from './errors.js';

export interface LongLike {
  toNumber(): number;
}

const RFC3339 = /^(\d{4}-\d{2}-\d{2})T(\d{2}:\d{2}:\d{2})(?:\.(\d{1,9}))?(Z|[+-]\d{2}:\d{2})$/;

/** int64 values arrive as Long (when long.js is present) or number. */
export function toNumber(v: number | LongLike): number {
  return typeof v === 'number' ? v : v.toNumber();
}

export function parseTime(v: unknown, micro: boolean): { seconds: number; nanos?: number } {
  const m = typeof v === 'string' ? RFC3339.exec(v) : null;
  const ms = m ? Date.parse(`${m[1]}T${m[2]}Z`) : NaN;
  if (!m || Number.isNaN(ms)) {
    throw new FieldError(`expected an RFC 3339 ${micro ? 'micro' : ''}time string, got ${JSON.stringify(v)}`);
  }
  let seconds = ms / 1000;
  const zone = m[4]!;
  if (zone !== 'Z') {
    const sign = zone[0] === '-' ? -1 : 1;
    seconds -= sign * (Number(zone.slice(1, 3)) * 3600 + Number(zone.slice(4, 6)) * 60);
  }
  const nanos = m[3] ? Number(m[3].padEnd(9, '0')) : 0;
  return nanos ? { seconds, nanos } : { seconds };
}

/** a decoded Timestamp message (protobuf.js: fields left at their default are absent) */
export type TimeMessage = { seconds?: number | LongLike; nanos?: number };

function present(m: TimeMessage, name: string): boolean {
  return Object.hasOwn(m, name);
}

function iso(seconds: number): string {
  return new Date(seconds * 1000).toISOString().slice(0, 19);
}

export function formatTime(m: TimeMessage): string | undefined {
  if (!present(m, 'seconds') && !present(m, 'nanos')) return undefined;
  return `${iso(present(m, 'seconds') ? toNumber(m.seconds!) : 0)}Z`;
}

export function formatMicroTime(m: TimeMessage): string | undefined {
  if (!present(m, 'seconds') && !present(m, 'nanos')) return undefined;
  const seconds = present(m, 'seconds') ? toNumber(m.seconds!) : 0;
  const micros = Math.floor((present(m, 'nanos') ? m.nanos! : 0) / 1000);
  return `${iso(seconds)}.${String(micros).padStart(6, '0')}Z`;
}
