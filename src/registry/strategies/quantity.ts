/**
 * Quantity values for strategies and admission: the exact parser of api/quantity.ts, with the
 * value as a double (enough for validation, comparison and sums; printing uses the exact form).
 */
import { parseQuantityValue, quantityNumber } from '../../api/quantity.js';

export {
  QUANTITY_FORMAT_ERROR,
  QUANTITY_SUFFIX_ERROR,
  canonicalQuantity,
  parseQuantityValue,
  quantityString,
} from '../../api/quantity.js';

export type ParsedQuantity = { value: number } | { error: string };

export function parseQuantity(input: unknown): ParsedQuantity {
  const r = parseQuantityValue(input);
  return 'error' in r ? r : { value: quantityNumber(r.quantity) };
}

/** The numeric value, or undefined when unparseable. */
export function quantityValue(input: unknown): number | undefined {
  const q = parseQuantity(input);
  return 'value' in q ? q.value : undefined;
}
