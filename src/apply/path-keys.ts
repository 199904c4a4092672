/**
 * Paths in joined form: the elements of a path joined with SEP, the form a FieldSet holds
 * (src/apply/fieldset.ts), interned.
 */
/** Path elements are joined with SEP inside a FieldSet (and by walkers building paths as strings). */
export const SEP = '\u0001';

/**
 * Joined keys, interned: per prefix, the key of each element (`joined`) and of each field name
 * (`fields`, so `f:<name>` is not built either). Every walk of an apply builds the same paths
 * again (the applied set, the comparison, the stored sets): interned, a path costs two lookups
 * of strings whose hashes are cached instead of a concatenation, and equal paths are one string,
 * so the sets' lookups compare pointers instead of characters. Only a cache: a string built
 * after a reset equals the one before it. Bounded by MAX_INTERNED paths, then started over.
 */
const joined = new Map<string, Map<string, string>>();
const fields = new Map<string, Map<string, string>>();
const MAX_INTERNED = 20_000;
let interned = 0;

/** The table of `prefix`'s keys in `table` (made when missing; the tables start over when full). */
function keysOf(table: Map<string, Map<string, string>>, prefix: string): Map<string, string> {
  if (interned >= MAX_INTERNED) resetInterned();
  let byElement = table.get(prefix);
  if (byElement === undefined) table.set(prefix, (byElement = new Map()));
  return byElement;
}

/** Forgets the interned keys (when full; tests): later keys are new strings equal to the old ones. */
export function resetInterned(): void {
  joined.clear();
  fields.clear();
  interned = 0;
}

/** How many keys are interned now (tests). */
export const internedKeys = (): number => interned;

/** The joined form of `prefix` extended by element `e` (`prefix` is already joined, '' for the root). */
export function joinKey(prefix: string, e: string): string {
  const byElement = keysOf(joined, prefix);
  let key = byElement.get(e);
  if (key === undefined) {
    interned++;
    byElement.set(e, (key = prefix ? prefix + SEP + e : e));
  }
  return key;
}

/** joinKey(prefix, 'f:' + name), without building the element. */
export function fieldKey(prefix: string, name: string): string {
  const byName = keysOf(fields, prefix);
  let key = byName.get(name);
  if (key === undefined) {
    interned++;
    byName.set(name, (key = prefix ? prefix + SEP + 'f:' + name : 'f:' + name));
  }
  return key;
}
