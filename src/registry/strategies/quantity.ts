/**
 * resource.Quantity: `<signed decimal><suffix>` where the suffix is binary (Ki..Ei), decimal
 * SI (n u m "" k M G T P E) or a decimal exponent (e3, E-2). JSON numbers are quantities too.
 * Values are approximated as doubles, which is enough for validation and comparison.
 */
export const QUANTITY_FORMAT_ERROR = "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";
export const QUANTITY_SUFFIX_ERROR = "unable to parse quantity's suffix";

const SHAPE = /^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$/;
const NUMBER = /^[+-]?(\d+\.?\d*|\.\d+)$/;

const SUFFIXES: Record<string, number> = {
  '': 1, n: 1e-9, u: 1e-6, m: 1e-3, k: 1e3, M: 1e6, G: 1e9, T: 1e12, P: 1e15, E: 1e18,
  Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, Ti: 2 ** 40, Pi: 2 ** 50, Ei: 2 ** 60,
};

export type ParsedQuantity = { value: number } | { error: string };

export function parseQuantity(input: unknown): ParsedQuantity {
  const s = typeof input === 'number' && Number.isFinite(input) ? String(input) : input;
  if (typeof s !== 'string') return { error: QUANTITY_FORMAT_ERROR };
  const m = SHAPE.exec(s);
  if (!m || !NUMBER.test(m[1]!)) return { error: QUANTITY_FORMAT_ERROR };
  const suffix = m[2]!;
  let scale = SUFFIXES[suffix];
  if (scale === undefined) {
    const exp = /^[eE]([+-]?\d+)$/.exec(suffix);
    if (!exp) return { error: QUANTITY_SUFFIX_ERROR };
    scale = 10 ** Number(exp[1]);
  }
  return { value: Number(m[1]) * scale };
}

/** The numeric value, or undefined when unparseable. */
export function quantityValue(input: unknown): number | undefined {
  const q = parseQuantity(input);
  return 'value' in q ? q.value : undefined;
}
