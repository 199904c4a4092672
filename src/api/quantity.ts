/**
 * resource.Quantity, exactly as upstream's apimachinery parses and prints it: a value is an
 * integer mantissa times a power of ten (BigInt, never a float) plus the format family of the
 * suffix it was written with (BinarySI for Ki..Ei, DecimalExponent for e/E<n>, DecimalSI
 * otherwise). `quantityString` is upstream's Quantity.String(): canonical form, except that an
 * input upstream's fast parse path recognises as already canonical is echoed verbatim (so
 * "+1", "01" and "5." come back as written, as they do from upstream).
 */
export const QUANTITY_FORMAT_ERROR =
  "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";
export const QUANTITY_SUFFIX_ERROR = "unable to parse quantity's suffix";
export const QUANTITY_NUMERIC_ERROR = 'unable to parse numeric part of quantity';

export type QuantityFormat = 'DecimalSI' | 'BinarySI' | 'DecimalExponent';

/** value = mantissa * 10^exponent; text is upstream's cached string when the input was canonical. */
export interface Quantity {
  mantissa: bigint;
  exponent: number;
  format: QuantityFormat;
  text?: string;
}

export type QuantityResult = { quantity: Quantity } | { error: string };

const NANO = -9;
/** upstream maxInt64Factors: the decimal digits an int64 always holds */
const MAX_INT64_FACTORS = 18;
/** upstream caps BinarySI values at MaxInt64 */
const MAX_BINARY = (1n << 63n) - 1n;
const SUFFIX_CHARS = 'eEinumkKMGTP';

const DECIMAL_SUFFIXES: Record<string, number> = { '': 0, n: -9, u: -6, m: -3, k: 3, M: 6, G: 9, T: 12, P: 15, E: 18 };
const BINARY_SUFFIXES: Record<string, number> = { Ki: 10, Mi: 20, Gi: 30, Ti: 40, Pi: 50, Ei: 60 };
const DECIMAL_BY_EXPONENT = new Map(Object.entries(DECIMAL_SUFFIXES).map(([s, e]) => [e, s]));
const BINARY_BY_POWER = ['', 'Ki', 'Mi', 'Gi', 'Ti', 'Pi', 'Ei'];

interface Scanned {
  positive: boolean;
  value: string;
  num: string;
  denom: string;
  suffix: string;
}

const isDigit = (c: string | undefined) => c !== undefined && c >= '0' && c <= '9';

/** upstream parseQuantityString: sign, number (leading zeros dropped), fraction, suffix; undefined when malformed. */
function scan(str: string): Scanned | undefined {
  const end = str.length;
  let pos = 0;
  let positive = true;
  if (str[0] === '-') {
    positive = false;
    pos++;
  } else if (str[0] === '+') pos++;
  while (pos < end && str[pos] === '0') pos++;
  if (pos >= end) return { positive, value: '0', num: '0', denom: '', suffix: '' };
  const numStart = pos;
  while (pos < end && isDigit(str[pos])) pos++;
  const num = pos > numStart ? str.slice(numStart, pos) : '0';
  if (pos >= end) return { positive, value: str, num, denom: '', suffix: '' };
  let denom = '';
  if (str[pos] === '.') {
    const denomStart = ++pos;
    while (pos < end && isDigit(str[pos])) pos++;
    denom = str.slice(denomStart, pos);
    if (pos >= end) return { positive, value: str, num, denom, suffix: '' };
  }
  const value = str.slice(0, pos);
  const suffixStart = pos;
  while (pos < end && SUFFIX_CHARS.includes(str[pos]!)) pos++;
  if (pos < end && (str[pos] === '-' || str[pos] === '+')) pos++;
  while (pos < end && isDigit(str[pos])) pos++;
  return pos < end ? undefined : { positive, value, num, denom, suffix: str.slice(suffixStart) };
}

interface Suffix {
  base: 2 | 10;
  exponent: number;
  format: QuantityFormat;
}

/** upstream suffixer.interpret; an e/E exponent is read as int64 and narrowed to int32 as upstream does. */
function interpret(s: string): Suffix | undefined {
  const dec = DECIMAL_SUFFIXES[s];
  if (dec !== undefined) return { base: 10, exponent: dec, format: 'DecimalSI' };
  const bin = BINARY_SUFFIXES[s];
  if (bin !== undefined) return { base: 2, exponent: bin, format: 'BinarySI' };
  if (s.length > 1 && (s[0] === 'e' || s[0] === 'E') && /^[+-]?\d+$/.test(s.slice(1))) {
    const parsed = BigInt(s.slice(1));
    if (parsed > 0x7fffffffffffffffn || parsed < -0x8000000000000000n) return undefined;
    return { base: 10, exponent: Number(BigInt.asIntN(32, parsed)), format: 'DecimalExponent' };
  }
  return undefined;
}

/** Parses a quantity string as upstream's ParseQuantity (no surrounding whitespace allowed). */
export function parseQuantityString(str: string): QuantityResult {
  if (str.length === 0) return { error: QUANTITY_FORMAT_ERROR };
  if (str === '0') return { quantity: { mantissa: 0n, exponent: 0, format: 'DecimalSI', text: str } };
  const s = scan(str);
  if (!s) return { error: QUANTITY_FORMAT_ERROR };
  const suffix = interpret(s.suffix);
  if (!suffix) return { error: QUANTITY_SUFFIX_ERROR };
  const fast = fastPath(str, s, suffix);
  if (fast) return { quantity: fast };
  return slowPath(s, suffix);
}

/** upstream's int64 path: short numbers at nano scale or coarser, reusing the input when it is canonical. */
function fastPath(str: string, s: Scanned, suffix: Suffix): Quantity | undefined {
  const digits = s.num.length + s.denom.length;
  let precision: number;
  if (suffix.format !== 'BinarySI') precision = MAX_INT64_FACTORS - digits;
  else if (s.denom.length === 0) precision = 15 - s.num.length - Math.trunc((suffix.exponent * 3) / 10) - 1;
  else precision = -1;
  if (precision < 0) return undefined;
  const scale = (suffix.base === 10 ? suffix.exponent : 0) - s.denom.length;
  if (scale < NANO) return undefined;
  const shifted = s.num + s.denom;
  const value = BigInt(shifted);
  const magnitude = suffix.base === 2 ? value << BigInt(suffix.exponent) : value;
  const q: Quantity = { mantissa: s.positive ? magnitude : -magnitude, exponent: scale, format: suffix.format };
  const canonical =
    suffix.base === 2 ? (value & 7n) !== 0n : scale % 3 === 0 && !shifted.endsWith('000') && shifted[0] !== '0';
  if (canonical) q.text = str;
  return q;
}

/** upstream's inf.Dec path: exact value, rounded away from zero to nano, BinarySI capped at MaxInt64. */
function slowPath(s: Scanned, suffix: Suffix): QuantityResult {
  const m = /^[+-]?(\d*)(?:\.(\d*))?$/.exec(s.value);
  if (!m || (m[1]!.length === 0 && (m[2] ?? '').length === 0)) return { error: QUANTITY_NUMERIC_ERROR };
  const frac = m[2] ?? '';
  let mantissa = BigInt((m[1] || '0') + frac);
  let exponent = -frac.length;
  if (suffix.base === 10) exponent += suffix.exponent;
  else mantissa <<= BigInt(suffix.exponent);
  if (mantissa !== 0n && exponent < NANO) {
    const drop = NANO - exponent;
    mantissa = mantissa.toString().length <= drop ? 1n : ceilDiv(mantissa, 10n ** BigInt(drop));
    exponent = NANO;
  }
  let format = suffix.format;
  if (format === 'BinarySI') {
    if (exceeds(mantissa, exponent, MAX_BINARY)) {
      mantissa = MAX_BINARY;
      exponent = 0;
    }
    if (mantissa !== 0n && exceeds(10n ** BigInt(Math.max(0, -exponent)), 0, mantissa)) format = 'DecimalSI';
  }
  return { quantity: { mantissa: s.positive ? mantissa : -mantissa, exponent, format } };
}

/** ceil(a / b) for a, b > 0 */
function ceilDiv(a: bigint, b: bigint): bigint {
  return (a + b - 1n) / b;
}

/** mantissa * 10^exponent > limit, for a non-negative mantissa and an exponent not above 0 or small */
function exceeds(mantissa: bigint, exponent: number, limit: bigint): boolean {
  return exponent >= 0 ? mantissa * 10n ** BigInt(exponent) > limit : mantissa > limit * 10n ** BigInt(-exponent);
}

/** upstream Quantity.String() (CanonicalizeBytes, or the string cached at parse). */
export function quantityString(q: Quantity): string {
  if (q.text !== undefined) return q.text;
  if (q.mantissa === 0n) return '0';
  if (q.format === 'BinarySI') {
    const whole = binaryWhole(q);
    if (whole !== undefined) return binaryString(whole);
  }
  return decimalString(q.mantissa, q.exponent, q.format === 'DecimalExponent');
}

/**
 * The integer value of a BinarySI quantity printed with a binary suffix, or undefined when
 * upstream prints it as DecimalSI: magnitudes below 1024 and values that are not whole.
 */
function binaryWhole(q: Quantity): bigint | undefined {
  const abs = q.mantissa < 0n ? -q.mantissa : q.mantissa;
  if (q.exponent >= 0) {
    const whole = abs * 10n ** BigInt(q.exponent);
    return whole < 1024n ? undefined : q.mantissa < 0n ? -whole : whole;
  }
  const div = 10n ** BigInt(-q.exponent);
  if (abs % div !== 0n || abs / div < 1024n) return undefined;
  return q.mantissa / div;
}

/** Largest power of 1024 dividing the value; upstream has no suffix past Ei (parsing caps below it). */
function binaryString(whole: bigint): string {
  let power = 0;
  while (power < BINARY_BY_POWER.length - 1 && whole % 1024n === 0n) {
    whole /= 1024n;
    power++;
  }
  return `${whole}${BINARY_BY_POWER[power]}`;
}

/**
 * Base-10 canonical form: trailing zeros move into the exponent, which then drops to the
 * multiple of three at or below it. DecimalSI names it by suffix (n..E), falling back to
 * e-notation where none exists; DecimalExponent writes e<n> (nothing for 0).
 */
function decimalString(mantissa: bigint, exponent: number, asExponent: boolean): string {
  while (mantissa % 10n === 0n) {
    mantissa /= 10n;
    exponent++;
  }
  const down = ((exponent % 3) + 3) % 3;
  if (down) {
    mantissa *= 10n ** BigInt(down);
    exponent -= down;
  }
  const named = asExponent ? undefined : DECIMAL_BY_EXPONENT.get(exponent);
  if (named !== undefined) return `${mantissa}${named}`;
  return exponent === 0 ? `${mantissa}` : `${mantissa}e${exponent}`;
}

/** Go's strings.TrimSpace set (upstream trims a quantity before parsing it). */
const SPACE =
  /^[\t\n\v\f\r \u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]+|[\t\n\v\f\r \u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]+$/g;

/**
 * A quantity as it arrives in a decoded object: a string (trimmed, as UnmarshalJSON does) or a
 * JSON number (its shortest decimal text standing in for the JSON literal upstream reads).
 * Anything else fails to match the format, as it does upstream.
 */
export function parseQuantityValue(input: unknown): QuantityResult {
  if (typeof input === 'number')
    return Number.isFinite(input) ? parseQuantityString(String(input)) : { error: QUANTITY_FORMAT_ERROR };
  if (typeof input !== 'string') return { error: QUANTITY_FORMAT_ERROR };
  return parseQuantityString(input.replace(SPACE, ''));
}

/** The canonical string of a decoded quantity value, or the upstream decode error. */
export function canonicalQuantity(input: unknown): { value: string } | { error: string } {
  const r = parseQuantityValue(input);
  return 'error' in r ? r : { value: quantityString(r.quantity) };
}

/** The value as a double (approximate: for comparisons and sums, never for printing). */
export function quantityNumber(q: Quantity): number {
  return Number.parseFloat(`${q.mantissa}e${q.exponent}`);
}
