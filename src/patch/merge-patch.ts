/** RFC 7386 JSON merge patch. Returns a new value; inputs are not mutated. */
import { ownValue, setOwn } from '../api/own-keys.js';

/** Every key is an ordinary key (`__proto__` too: see src/api/own-keys.ts). */
export function applyMergePatch(target: unknown, patch: unknown): unknown {
  if (patch === null || typeof patch !== 'object' || Array.isArray(patch)) return structuredClone(patch);
  const out: Record<string, unknown> =
    target && typeof target === 'object' && !Array.isArray(target) ? { ...(target as Record<string, unknown>) } : {};
  for (const [k, v] of Object.entries(patch as Record<string, unknown>)) {
    if (v === null) delete out[k];
    else setOwn(out, k, applyMergePatch(ownValue(out, k), v));
  }
  return out;
}
