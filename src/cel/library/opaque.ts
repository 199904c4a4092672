/**
 * Opaque library values (Quantity, URL, IP, CIDR) on @bufbuild/cel, which has no custom value
 * types: a map holding the type's name under `@type` and its canonical text under `@value`.
 * Methods check the tag, so a plain map never passes for a Quantity.
 */
import { CelScalar, celMap, mapType, type CelMap, type CelValue } from '@bufbuild/cel';

export const OPAQUE = mapType(CelScalar.DYN, CelScalar.DYN);

export function opaque(type: string, value: string): CelMap {
  return celMap(
    new Map([
      ['@type', type],
      ['@value', value],
    ]),
  );
}

/** The canonical text of an opaque value of this type; throws `no such overload` for others. */
export function opaqueValue(v: CelValue, type: string): string {
  const m = v as CelMap;
  if (m?.get?.('@type') !== type) throw new Error('no such overload');
  return m.get('@value') as string;
}
