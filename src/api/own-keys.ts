/**
 * Keys that come from input are ordinary keys, `__proto__`, `constructor` and `prototype`
 * included, as in upstream's maps and structs (which have no prototype). Two JavaScript traps
 * stand in the way: `obj[k] = v` with k = "__proto__" sets the object's prototype instead of a
 * key, and `obj[k]` for a key the object lacks reads what the prototype has (Object.prototype's
 * `constructor`, `__proto__`, `toString`). Code that builds or reads objects from request data
 * (patches, apply, decoders, schema lookups) goes through these helpers.
 */

/** obj[k] when k is an own key of obj; undefined otherwise (never an inherited member). */
export function ownValue(obj: object, k: string): unknown {
  return Object.hasOwn(obj, k) ? (obj as Record<string, unknown>)[k] : undefined;
}

/** Sets k on obj as an own, enumerable data property: `__proto__` never reaches the prototype setter. */
export function setOwn(obj: object, k: string, v: unknown): void {
  if (k === '__proto__')
    Object.defineProperty(obj, k, { value: v, writable: true, enumerable: true, configurable: true });
  else (obj as Record<string, unknown>)[k] = v;
}
