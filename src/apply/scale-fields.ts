/**
 * Field ownership across the scale subresource (upstream managedfields.ScaleHandler). A write of
 * a Scale is tracked on the Scale itself (autoscaling/v1, field spec.replicas), by the same
 * apply and update rules as any object; the parent keeps those managers' entries with
 * subresource "scale", the parent's apiVersion and the parent's replicas path.
 */
import { isRecord } from '../api/object.js';
import { order, type ManagedFieldsEntry } from './managed-fields.js';

type Fields = Record<string, unknown>;

const SCALE_REPLICAS = ['spec', 'replicas'];
const SCALE_VERSION = 'autoscaling/v1';

function owns(fields: unknown, path: string[]): boolean {
  let at: unknown = fields;
  for (const seg of path) {
    if (!isRecord(at)) return false;
    at = at[`f:${seg}`];
  }
  return at !== undefined;
}

/** The fields of an entry without `path` (and the parents it leaves empty); undefined when none remain. */
function without(fields: Fields, path: string[]): Fields | undefined {
  const [head, ...rest] = path;
  const key = `f:${head}`;
  const out: Fields = { ...fields };
  const child = out[key];
  if (!rest.length || !isRecord(child)) delete out[key];
  else {
    const inner = without(child, rest);
    if (inner) out[key] = inner;
    else delete out[key];
  }
  return Object.keys(out).length ? out : undefined;
}

function only(path: string[]): Fields {
  return path.reduceRight<Fields>((inner, seg) => ({ [`f:${seg}`]: inner }), {});
}

/** The same writer: manager, operation and subresource (an Update's apiVersion differs across the two views). */
const writer = (e: ManagedFieldsEntry): string => `${e.manager}\0${e.operation}\0${e.subresource ?? ''}`;

/** The parent's entries as the Scale sees them: those that own the replicas, as owners of spec.replicas. */
export function toSubresource(parent: unknown, replicasPath: string[]): ManagedFieldsEntry[] {
  if (!Array.isArray(parent)) return [];
  return (parent as ManagedFieldsEntry[])
    .filter((e) => owns(e.fieldsV1, replicasPath))
    .map((e) => ({ ...e, apiVersion: SCALE_VERSION, fieldsV1: only(SCALE_REPLICAS) }));
}

/**
 * The parent's entries after a Scale write left `scale` as the Scale's entries: an entry that
 * owned the replicas keeps them while its writer still owns them on the Scale, else loses them
 * (dropped when nothing is left); a writer new to the replicas gets an entry of its own.
 */
export function toParent(
  parent: unknown,
  scale: unknown,
  replicasPath: string[],
  apiVersion: string,
): ManagedFieldsEntry[] {
  const left = new Map<string, ManagedFieldsEntry>();
  if (Array.isArray(scale)) for (const e of scale as ManagedFieldsEntry[]) left.set(writer(e), e);
  const out: ManagedFieldsEntry[] = [];
  for (const e of Array.isArray(parent) ? (parent as ManagedFieldsEntry[]) : []) {
    if (!owns(e.fieldsV1, replicasPath) || left.delete(writer(e))) {
      out.push(e);
      continue;
    }
    const rest = isRecord(e.fieldsV1) ? without(e.fieldsV1, replicasPath) : undefined;
    if (rest) out.push({ ...e, fieldsV1: rest });
  }
  for (const e of left.values())
    if (owns(e.fieldsV1, SCALE_REPLICAS)) out.push({ ...e, apiVersion, fieldsV1: only(replicasPath) });
  return out.sort(order);
}
