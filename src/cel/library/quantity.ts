/**
 * Upstream's CEL `quantity` library (apiserver/pkg/cel/library/quantity.go): quantity(string),
 * isQuantity, sign, isInteger, asInteger, asApproximateFloat, add, sub, isLessThan,
 * isGreaterThan, compareTo. A quantity is kept exactly as a rational: nano-units (bigint),
 * rounded up past nanos as upstream rounds.
 */
import { CelScalar, celFunc, celMethod, type CelFunc } from '@bufbuild/cel';
import { OPAQUE, opaque, opaqueValue } from './opaque.js';

const { STRING, INT, BOOL, DOUBLE } = CelScalar;
const QUANTITY = /^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$/;
const BINARY: Record<string, bigint> = {
  Ki: 1n << 10n,
  Mi: 1n << 20n,
  Gi: 1n << 30n,
  Ti: 1n << 40n,
  Pi: 1n << 50n,
  Ei: 1n << 60n,
};
const DECIMAL: Record<string, number> = { n: -9, u: -6, m: -3, '': 0, k: 3, M: 6, G: 9, T: 12, P: 15, E: 18 };
export const QUANTITY_ERROR =
  "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";

const pow10 = (n: number): bigint => 10n ** BigInt(n);
const ceilDiv = (a: bigint, b: bigint): bigint => (a >= 0n ? (a + b - 1n) / b : a / b);

/** The quantity in nano-units, or undefined when s is not a quantity. */
export function parseQuantity(s: string): bigint | undefined {
  const m = QUANTITY.exec(s.trim());
  if (!m || !/^[+-]?(\d+\.?\d*|\.\d+)$/.test(m[1]!)) return undefined;
  const [, num, suffix] = m as unknown as [string, string, string];
  const neg = num.startsWith('-');
  const [int = '', frac = ''] = num.replace(/^[+-]/, '').split('.');
  const digits = BigInt((int || '0') + frac);
  let exp10 = -frac.length;
  let mult = 1n;
  if (suffix in BINARY) mult = BINARY[suffix]!;
  else if (suffix in DECIMAL) exp10 += DECIMAL[suffix]!;
  else if (/^[eE][-+]?\d+$/.test(suffix)) exp10 += Number(suffix.slice(1));
  else return undefined;
  const scaled = exp10 + 9 >= 0 ? digits * mult * pow10(exp10 + 9) : ceilDiv(digits * mult, pow10(-(exp10 + 9)));
  return neg ? -scaled : scaled;
}

const NANO = 1_000_000_000n;
function nanosOf(v: unknown): bigint {
  return BigInt(opaqueValue(v as never, 'Quantity'));
}
const q = (nanos: bigint) => opaque('Quantity', nanos.toString());

export const QUANTITIES: CelFunc[] = [
  celFunc('quantity', [STRING], OPAQUE, (s) => {
    const n = parseQuantity(s);
    if (n === undefined) throw new Error(QUANTITY_ERROR);
    return q(n);
  }),
  celFunc('isQuantity', [STRING], BOOL, (s) => parseQuantity(s) !== undefined),
  celMethod('sign', OPAQUE, [], INT, function () {
    const n = nanosOf(this);
    return n > 0n ? 1n : n < 0n ? -1n : 0n;
  }),
  celMethod('isInteger', OPAQUE, [], BOOL, function () {
    const n = nanosOf(this);
    return n % NANO === 0n && n / NANO <= 9223372036854775807n && n / NANO >= -9223372036854775808n;
  }),
  celMethod('asInteger', OPAQUE, [], INT, function () {
    const n = nanosOf(this);
    if (n % NANO !== 0n || n / NANO > 9223372036854775807n || n / NANO < -9223372036854775808n)
      throw new Error('cannot convert value to integer');
    return n / NANO;
  }),
  celMethod('asApproximateFloat', OPAQUE, [], DOUBLE, function () {
    return Number(nanosOf(this)) / 1e9;
  }),
  celMethod('add', OPAQUE, [OPAQUE], OPAQUE, function (o) {
    return q(nanosOf(this) + nanosOf(o));
  }),
  celMethod('add', OPAQUE, [INT], OPAQUE, function (o) {
    return q(nanosOf(this) + o * NANO);
  }),
  celMethod('sub', OPAQUE, [OPAQUE], OPAQUE, function (o) {
    return q(nanosOf(this) - nanosOf(o));
  }),
  celMethod('sub', OPAQUE, [INT], OPAQUE, function (o) {
    return q(nanosOf(this) - o * NANO);
  }),
  celMethod('isLessThan', OPAQUE, [OPAQUE], BOOL, function (o) {
    return nanosOf(this) < nanosOf(o);
  }),
  celMethod('isGreaterThan', OPAQUE, [OPAQUE], BOOL, function (o) {
    return nanosOf(this) > nanosOf(o);
  }),
  celMethod('compareTo', OPAQUE, [OPAQUE], INT, function (o) {
    const a = nanosOf(this);
    const b = nanosOf(o);
    return a < b ? -1n : a > b ? 1n : 0n;
  }),
];
