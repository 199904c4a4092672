/**
 * The scale subresource (autoscaling/v1 Scale) of kinds with spec.replicas: a view of the
 * main object, and the change a written Scale makes to it (only spec.replicas).
 */
import type { Scale } from '../api/kinds.js';
import { fieldAt, isRecord, type Stored } from '../api/object.js';
import { errors } from '../api/status.js';
import { labelSelectorFromObject } from '../api/selectors.js';
import { schemaIndex } from '../schema/schema.js';
import { validateFields, type DecodeNotes } from '../schema/fields.js';
import type { ManagedFieldsEntry } from '../apply/managed-fields.js';
import { toParent, toSubresource } from '../apply/scale-fields.js';
import { recordUpdateNoErrors } from './depth-guard.js';

export const SCALE_TARGET = { kind: 'Scale', group: 'autoscaling', apiVersion: 'autoscaling/v1' };

export function toScale(obj: Stored): Scale {
  const m = obj.metadata;
  const metadata: Record<string, unknown> = {
    name: m.name,
    namespace: m.namespace,
    uid: m.uid,
    resourceVersion: m.resourceVersion,
    creationTimestamp: m.creationTimestamp,
  };
  const status: NonNullable<Scale['status']> = { replicas: fieldAt(obj, 'status', 'replicas') ?? 0 };
  const sel = fieldAt(obj, 'spec', 'selector');
  if (isRecord(sel))
    status.selector =
      sel.matchLabels || sel.matchExpressions
        ? labelSelectorFromObject(sel).toString()
        : Object.entries(sel)
            .map(([k, v]) => `${k}=${v}`)
            .join(',');
  const replicas = fieldAt(obj, 'spec', 'replicas') ?? 0;
  return { kind: 'Scale', apiVersion: 'autoscaling/v1', metadata, spec: { replicas }, status };
}

/** The main object after writing scale: only spec.replicas changes; resourceVersion is the precondition. */
export function fromScale(old: Stored, scale: unknown): Stored {
  if (!isRecord(scale)) throw errors.badRequest('the body must be a Scale object');
  if (scale.kind !== undefined && scale.kind !== 'Scale') {
    throw errors.badRequest(`the kind in the data (${scale.kind}) does not match the expected kind (Scale)`);
  }
  const replicas = fieldAt(scale, 'spec', 'replicas') ?? 0;
  if (typeof replicas !== 'number' || !Number.isInteger(replicas) || replicas < 0) {
    throw errors.invalid({ kind: 'Scale', group: 'autoscaling', name: old.metadata.name }, [
      {
        reason: 'FieldValueInvalid',
        message: `Invalid value: ${JSON.stringify(replicas)}: must be greater than or equal to 0`,
        field: 'spec.replicas',
      },
    ]);
  }
  const next = structuredClone(old);
  next.spec = { ...(isRecord(next.spec) ? next.spec : {}), replicas };
  // a resourceVersion of another type was a 400 already (checkedScale)
  const rv = fieldAt(scale, 'metadata', 'resourceVersion');
  next.metadata.resourceVersion = (typeof rv === 'string' && rv) || old.metadata.resourceVersion;
  return next;
}

/** A Scale body or patched Scale: field types and integer ranges as for any decoded object. */
export function checkedScale(scale: unknown, notes?: DecodeNotes): Record<string, unknown> {
  if (!isRecord(scale)) throw errors.badRequest('the body must be a Scale object');
  validateFields(scale, scaleSchema(), 'Ignore', notes);
  return scale;
}

const scaleSchema = () => schemaIndex().forKind('autoscaling', 'v1', 'Scale');

export type OwnedScale = Scale & { metadata: { managedFields: ManagedFieldsEntry[] } };

/** A Scale view of `obj` with the managedFields of the writers that own the replicas (upstream ToSubresource). */
export function withScaleOwners(scale: Scale, obj: Stored, replicasPath: string[]): OwnedScale {
  return {
    ...scale,
    metadata: { ...scale.metadata, managedFields: toSubresource(obj.metadata.managedFields, replicasPath) },
  };
}

/**
 * The parent's managedFields after writing `scale` over `before`: an apply computed the Scale's
 * entries already (writer undefined); any other write records its writer's Update on the Scale.
 */
export function scaleOwners(
  scale: Record<string, unknown>,
  before: OwnedScale,
  parent: Stored,
  writer: string | undefined,
  at: { path: string[]; apiVersion: string; now: string },
): ManagedFieldsEntry[] {
  const meta = isRecord(scale.metadata) ? scale.metadata : {};
  const after = {
    ...scale,
    metadata: { ...meta, managedFields: writer ? before.metadata.managedFields : meta.managedFields },
  };
  if (writer !== undefined)
    recordUpdateNoErrors(after, before, scaleSchema(), writer, SCALE_TARGET.apiVersion, at.now, 'scale');
  return toParent(parent.metadata.managedFields, after.metadata.managedFields, at.path, at.apiVersion);
}
