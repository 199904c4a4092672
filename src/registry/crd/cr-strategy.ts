/**
 * The strategy of a custom resource version, built from its CRD: defaulting, schema
 * validation (422 with upstream field paths), status reset on create when a status
 * subresource exists, and the scale subresource over the CRD's replica paths.
 */
import type { Scale } from '../../api/kinds.js';
import { fieldAt, isRecord, type ObjectMeta, type Stored } from '../../api/object.js';
import { errors } from '../../api/status.js';
import { labelSelectorFromObject } from '../../api/selectors.js';
import { DEFAULT_STRATEGY, type ResourceStrategy } from '../strategy.js';
import { compileDefaults } from './schema-defaults.js';
import { atPath, rootSchema, setPath, validateCustom } from './structural.js';
import type { CustomType, CustomVersion } from './types.js';
import { ruleTree, validateRules } from './rules.js';
import { withTypeAndObjectMeta } from './rule-specs.js';

/** The replica count at a CRD's path: whatever value is there (the schema types it), 0 when absent. */
const replicasAt = (obj: ScaledObject, path: string): unknown => atPath(obj, path) ?? 0;

/** A custom resource as the scale subresource reads it (stored, or converted by a webhook). */
type ScaledObject = { metadata?: unknown };

/** The autoscaling/v1 Scale of a custom resource (upstream's scale subresource for CRDs). */
export function toScale(obj: ScaledObject, paths: NonNullable<CustomVersion['scale']>): Scale {
  // a stored or converted custom resource: its metadata is an object (the store checks it)
  const m = (isRecord(obj.metadata) ? obj.metadata : {}) as ObjectMeta;
  const status: NonNullable<Scale['status']> = { replicas: replicasAt(obj, paths.statusReplicasPath) };
  if (paths.labelSelectorPath) {
    const sel = atPath(obj, paths.labelSelectorPath);
    if (typeof sel === 'string') status.selector = sel;
    else if (sel && typeof sel === 'object') status.selector = labelSelectorFromObject(sel as never).toString();
  }
  const metadata = {
    name: m.name,
    namespace: m.namespace,
    uid: m.uid,
    resourceVersion: m.resourceVersion,
    creationTimestamp: m.creationTimestamp,
  };
  return {
    kind: 'Scale',
    apiVersion: 'autoscaling/v1',
    metadata,
    spec: { replicas: replicasAt(obj, paths.specReplicasPath) },
    status,
  };
}

export function fromScale<O extends ScaledObject>(
  old: O,
  scale: unknown,
  paths: NonNullable<CustomVersion['scale']>,
): O {
  const oldMeta: Record<string, unknown> = isRecord(old.metadata) ? old.metadata : {};
  if (!isRecord(scale)) throw errors.badRequest('the body must be a Scale object');
  if (scale.kind !== undefined && scale.kind !== 'Scale')
    throw errors.badRequest(`the kind in the data (${scale.kind}) does not match the expected kind (Scale)`);
  const replicas = fieldAt(scale, 'spec', 'replicas') ?? 0;
  if (typeof replicas !== 'number' || !Number.isInteger(replicas) || replicas < 0) {
    throw errors.invalid({ kind: 'Scale', group: 'autoscaling', name: oldMeta.name as string | undefined }, [
      {
        reason: 'FieldValueInvalid',
        message: `Invalid value: ${JSON.stringify(replicas)}: must be greater than or equal to 0`,
        field: 'spec.replicas',
      },
    ]);
  }
  const next = structuredClone(old);
  setPath(next, paths.specReplicasPath, replicas);
  // a resourceVersion of another type was a 400 already (checkedScale)
  const rv = fieldAt(scale, 'metadata', 'resourceVersion');
  if (isRecord(next.metadata))
    next.metadata.resourceVersion = (typeof rv === 'string' && rv) || oldMeta.resourceVersion;
  return next;
}

const NOT_CHECKED = {
  reason: 'FieldValueInvalid',
  field: '',
  message:
    'Invalid value: "null": some validation rules were not checked because the object was invalid; correct the existing errors to complete validation',
};

export function customResourceStrategy(_t: CustomType, v: CustomVersion): ResourceStrategy {
  const schema = rootSchema(v.schema ?? {});
  const defaults = compileDefaults(v.schema ?? {});
  // compiled once per CRD version (the store keeps this strategy until the CRD changes)
  const rules = ruleTree(withTypeAndObjectMeta(v.schema ?? {}));
  const check = (obj: Stored, old?: Stored) => {
    const causes = validateCustom(obj, schema, old);
    if (!rules) return causes;
    // upstream skips the rules when a value has the wrong type (they are typed by the schema)
    if (causes.some((c) => c.reason === 'FieldValueTypeInvalid')) return [...causes, NOT_CHECKED];
    return [...causes, ...validateRules(rules, obj, old)];
  };
  const scale = v.scale;
  return {
    ...DEFAULT_STRATEGY,
    // upstream customResourceStrategy: a PUT must name the version it replaces
    allowUnconditionalUpdate: false,
    prepareForCreate(obj) {
      if (v.status) delete obj.status;
      defaults(obj);
    },
    prepareForUpdate(obj) {
      defaults(obj);
    },
    validate(obj, _config, old) {
      return check(obj, old);
    },
    prepareForStatusUpdate(next) {
      defaults(next);
    },
    validateSubresourceUpdate(_name, next, old) {
      return check(next, old);
    },
    ...(scale
      ? {
          scale: {
            to: (obj: Stored) => toScale(obj, scale),
            from: (old: Stored, s: unknown) => fromScale(old, s, scale),
            replicasPath: scale.specReplicasPath.split('.').filter(Boolean),
          },
        }
      : {}),
  };
}
