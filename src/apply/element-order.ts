/**
 * Upstream's order of path elements in a fieldsV1 tree (structured-merge-diff's PathElement
 * ordering): "." first, then fields, keys, values, indexes; keys and values by their value.
 */
const isObj = (v: unknown): v is Record<string, unknown> => !!v && typeof v === 'object' && !Array.isArray(v);

/** Sorts elements in upstream order, decoding each key or value element once (not per comparison). */
export function sortElements(keys: string[]): void {
  const decoded = new Map<string, unknown>();
  const value = (e: string): unknown => {
    if (decoded.has(e)) return decoded.get(e);
    const v = JSON.parse(e.slice(2));
    decoded.set(e, v);
    return v;
  };
  keys.sort((a, b) => compareElements(a, b, value));
}

/** Upstream element order: "." first, then fields, keys, values, indexes; keys and values by value. */
function compareElements(a: string, b: string, value: (e: string) => unknown = (e) => JSON.parse(e.slice(2))): number {
  if (a === b) return 0;
  if (a === '.' || b === '.') return a === '.' ? -1 : 1;
  const rank = (e: string) => 'fkvi'.indexOf(e[0]!);
  if (rank(a) !== rank(b)) return rank(a) - rank(b);
  if (a[0] === 'f') return a < b ? -1 : 1;
  if (a[0] === 'i') return Number(a.slice(2)) - Number(b.slice(2));
  return compareValues(value(a), value(b));
}

function compareValues(a: unknown, b: unknown): number {
  if (typeof a === 'number' && typeof b === 'number') return a - b;
  if (isObj(a) && isObj(b)) {
    for (const k of [...new Set([...Object.keys(a), ...Object.keys(b)])].sort()) {
      const c = compareValues(a[k], b[k]);
      if (c !== 0) return c;
    }
    return 0;
  }
  const sa = JSON.stringify(a) ?? '';
  const sb = JSON.stringify(b) ?? '';
  return sa < sb ? -1 : sa > sb ? 1 : 0;
}
