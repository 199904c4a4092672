/**
 * The scale subresource (autoscaling/v1 Scale) of kinds with spec.replicas: a view of the
 * main object, and the change a written Scale makes to it (only spec.replicas).
 */
import { errors } from '../api/status.js';
import { labelSelectorFromObject } from '../api/selectors.js';
import { schemaIndex } from '../schema/schema.js';
import { validateFields, type DecodeNotes } from '../schema/fields.js';

export const SCALE_TARGET = { kind: 'Scale', group: 'autoscaling', apiVersion: 'autoscaling/v1' };

export function toScale(obj: any): any {
  const m = obj.metadata;
  const metadata: Record<string, unknown> = {
    name: m.name,
    namespace: m.namespace,
    uid: m.uid,
    resourceVersion: m.resourceVersion,
    creationTimestamp: m.creationTimestamp,
  };
  const status: Record<string, unknown> = { replicas: obj.status?.replicas ?? 0 };
  const sel = obj.spec?.selector;
  if (sel)
    status.selector =
      sel.matchLabels || sel.matchExpressions
        ? labelSelectorFromObject(sel).toString()
        : Object.entries(sel)
            .map(([k, v]) => `${k}=${v}`)
            .join(',');
  return { kind: 'Scale', apiVersion: 'autoscaling/v1', metadata, spec: { replicas: obj.spec?.replicas ?? 0 }, status };
}

/** The main object after writing scale: only spec.replicas changes; resourceVersion is the precondition. */
export function fromScale(old: any, scale: any): any {
  if (!scale || typeof scale !== 'object' || Array.isArray(scale))
    throw errors.badRequest('the body must be a Scale object');
  if (scale.kind !== undefined && scale.kind !== 'Scale') {
    throw errors.badRequest(`the kind in the data (${scale.kind}) does not match the expected kind (Scale)`);
  }
  const replicas = scale.spec?.replicas ?? 0;
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
  next.spec = { ...(next.spec ?? {}), replicas };
  next.metadata.resourceVersion = scale.metadata?.resourceVersion || old.metadata.resourceVersion;
  return next;
}

/** A Scale body or patched Scale: field types and integer ranges as for any decoded object. */
export function checkedScale(scale: any, notes?: DecodeNotes): any {
  validateFields(scale, schemaIndex().forKind('autoscaling', 'v1', 'Scale'), 'Ignore', notes);
  return scale;
}
