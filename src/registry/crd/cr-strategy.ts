/**
 * The strategy of a custom resource version, built from its CRD: defaulting, schema
 * validation (422 with upstream field paths), status reset on create when a status
 * subresource exists, and the scale subresource over the CRD's replica paths.
 */
import { errors } from '../../api/status.js';
import { labelSelectorFromObject } from '../../api/selectors.js';
import { DEFAULT_STRATEGY, type ResourceStrategy } from '../strategy.js';
import { compileDefaults } from './schema-defaults.js';
import { atPath, rootSchema, setPath, validateCustom } from './structural.js';
import type { CustomType, CustomVersion } from './types.js';
import { ruleTree, validateRules } from './rules.js';
import { withTypeAndObjectMeta } from './rule-specs.js';

/** The autoscaling/v1 Scale of a custom resource (upstream's scale subresource for CRDs). */
export function toScale(obj: any, paths: NonNullable<CustomVersion['scale']>): any {
  const m = obj.metadata;
  const status: Record<string, unknown> = { replicas: atPath(obj, paths.statusReplicasPath) ?? 0 };
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
    spec: { replicas: atPath(obj, paths.specReplicasPath) ?? 0 },
    status,
  };
}

export function fromScale(old: any, scale: any, paths: NonNullable<CustomVersion['scale']>): any {
  if (!scale || typeof scale !== 'object' || Array.isArray(scale))
    throw errors.badRequest('the body must be a Scale object');
  if (scale.kind !== undefined && scale.kind !== 'Scale')
    throw errors.badRequest(`the kind in the data (${scale.kind}) does not match the expected kind (Scale)`);
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
  setPath(next, paths.specReplicasPath, replicas);
  next.metadata.resourceVersion = scale.metadata?.resourceVersion || old.metadata.resourceVersion;
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
  const check = (obj: any, old: any) => {
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
      ? { scale: { to: (obj: any) => toScale(obj, scale), from: (old: any, s: any) => fromScale(old, s, scale) } }
      : {}),
  };
}
