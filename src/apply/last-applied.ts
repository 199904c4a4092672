/**
 * The bridge from client-side to server-side apply, as upstream does it for the `kubectl`
 * manager only: conflicts on fields whose live value still equals the client-side
 * last-applied configuration are allowed (the object is being migrated, not fought over),
 * and a successful apply keeps that annotation in step with the applied configuration.
 */
import type { KubeObject } from '../api/object.js';
import type { SchemaNode } from '../schema/schema.js';
import { FieldSet, fieldsOf, isObj, type Path } from './fieldset.js';
import { compare } from './compare.js';

export const LAST_APPLIED = 'kubectl.kubernetes.io/last-applied-configuration';
export const MIGRATING_MANAGER = 'kubectl';

function lastApplied(live: KubeObject | undefined): Record<string, unknown> | undefined {
  const text = live?.metadata?.annotations?.[LAST_APPLIED];
  if (typeof text !== 'string' || !text) return undefined;
  try {
    const v = JSON.parse(text);
    return isObj(v) ? v : undefined;
  } catch {
    return undefined;
  }
}

/** Whether every conflicting path is a field of the last-applied configuration that live still matches. */
export function conflictsAllowedByLastApplied(
  live: KubeObject | undefined,
  conflicts: Path[],
  schema: SchemaNode | undefined,
): boolean {
  const last = lastApplied(live);
  if (!last) return false;
  const allowed = fieldsOf(last, schema).difference(compare(last, live, schema).modified);
  return FieldSet.of(conflicts).difference(allowed).empty();
}

/** After a successful apply by `kubectl`: the annotation, when present, records the applied configuration. */
export function syncLastApplied(live: KubeObject, merged: KubeObject, applied: KubeObject): void {
  if (!lastApplied(live) || !isObj(merged.metadata?.annotations)) return;
  const config = structuredClone(applied);
  if (isObj(config.metadata?.annotations)) delete config.metadata.annotations[LAST_APPLIED];
  merged.metadata = {
    ...merged.metadata,
    annotations: { ...merged.metadata.annotations, [LAST_APPLIED]: sortedJson(config) + '\n' },
  };
}

/** JSON with object keys sorted, as Go encodes maps. */
function sortedJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(sortedJson).join(',')}]`;
  if (isObj(v))
    return `{${Object.keys(v)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${sortedJson(v[k])}`)
      .join(',')}}`;
  return JSON.stringify(v);
}
