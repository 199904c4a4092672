/**
 * The applied configuration as upstream types it before merging (structured-merge-diff's
 * ObjectToTyped in the field manager): an associative list (list-map) may not hold two items
 * with the same key, nor a set list the same value twice. Upstream's error is not a Status, so
 * the client gets a 500 without a reason: `failed to create typed patch object (<namespace>/<name>;
 * <group>/<version>, Kind=<kind>): <list path>: duplicate entries for key [name="x"]`, every
 * repeat listed (`errors:` and one line each when there are several). Live objects may hold
 * duplicates (created or updated without apply), as upstream allows.
 */
import { StatusError } from '../api/status.js';

/**
 * Throws upstream's 500 when the applied configuration repeats a list-map key or a set value;
 * `repeats` holds one line per repeat, in walk order (src/apply/tracked-paths.ts appliedFieldSet).
 */
export function refuseRepeats(applied: unknown, repeats: string[]): void {
  if (!repeats.length) return;
  const message = `failed to create typed patch object (${objectName(applied)}): ${repeats.length === 1 ? repeats[0] : `errors:\n  ${repeats.join('\n  ')}`}`;
  throw new StatusError({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, code: 500 });
}

/** upstream objectGVKNN of the applied object: `<namespace>/<name>; <group>/<version>, Kind=<kind>` */
function objectName(applied: unknown): string {
  const o = (applied ?? {}) as {
    apiVersion?: unknown;
    kind?: unknown;
    metadata?: { name?: unknown; namespace?: unknown };
  };
  const apiVersion = typeof o.apiVersion === 'string' ? o.apiVersion : '';
  const gv = apiVersion.includes('/') ? apiVersion : `/${apiVersion}`;
  return `${String(o.metadata?.namespace ?? '')}/${String(o.metadata?.name ?? '')}; ${gv}, Kind=${String(o.kind ?? '')}`;
}
