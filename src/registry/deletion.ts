/**
 * Delete semantics shared by delete and deletecollection: options validation, preconditions,
 * propagation policy (Orphan and Foreground become the `orphan` and `foregroundDeletion`
 * finalizers the garbage collector honours), graceful deletion, and what to reply.
 */
import { fieldAt, type Stored } from '../api/object.js';
import { errors } from '../api/status.js';
import type { DeleteOptions } from './ops.js';
import type { ResourceStrategy, StrategyConfig } from './strategy.js';
import { copyValue } from '../schema/deep-value.js';

export const ORPHAN_FINALIZER = 'orphan';
export const FOREGROUND_FINALIZER = 'foregroundDeletion';
const POLICIES = ['Orphan', 'Background', 'Foreground'];

export type DeletePlan = { action: 'remove' } | { action: 'pending'; next: Stored } | { action: 'unchanged' };

interface Target {
  group: string;
  kind: string;
  resource: string;
  name: string;
}

/** DeleteOptions as decoded, once checkTypes has checked each known field's JSON type (null: no value). */
interface DecodedDeleteOptions {
  gracePeriodSeconds?: number | null;
  preconditions?: { uid?: string | null; resourceVersion?: string | null } | null;
  propagationPolicy?: string | null;
  orphanDependents?: boolean | null;
  dryRun?: string[] | null;
  ignoreStoreReadErrorWithClusterBreakingPotential?: boolean | null;
}

/** DeleteOptions from a decoded body (only the known fields, typed), validated. */
export function toDeleteOptions(o: unknown): DeleteOptions {
  checkTypes(o);
  const options: DeleteOptions = {
    gracePeriodSeconds: typeof o.gracePeriodSeconds === 'number' ? o.gracePeriodSeconds : undefined,
    preconditions: o.preconditions ?? undefined,
    // JSON null is no value (a nil pointer upstream), not a policy named "null"
    propagationPolicy: o.propagationPolicy ?? undefined,
    orphanDependents: o.orphanDependents ?? undefined,
    dryRun: Array.isArray(o.dryRun) ? o.dryRun : undefined,
  };
  if (o.ignoreStoreReadErrorWithClusterBreakingPotential === true)
    options.ignoreStoreReadErrorWithClusterBreakingPotential = true;
  checkDeleteOptions(options);
  return options;
}

const JSON_TYPES: Record<string, [string, string]> = {
  propagationPolicy: ['string', 'v1.DeletionPropagation'],
  orphanDependents: ['boolean', 'bool'],
  gracePeriodSeconds: ['number', 'int64'],
  preconditions: ['object', 'v1.Preconditions'],
  dryRun: ['array', '[]string'],
  ignoreStoreReadErrorWithClusterBreakingPotential: ['boolean', 'bool'],
};

/** A field of the wrong JSON type is a decoding error (400), as upstream's decoder says it. */
function checkTypes(o: unknown): asserts o is DecodedDeleteOptions {
  for (const [field, [want, goType]] of Object.entries(JSON_TYPES)) {
    const v = fieldAt(o, field);
    if (v === undefined || v === null) continue;
    const got = Array.isArray(v) ? 'array' : typeof v;
    if (got !== want || (want === 'object' && Array.isArray(v))) {
      throw errors.badRequest(
        `json: cannot unmarshal ${goKind(v)} into Go struct field DeleteOptions.${field} of type ${goType}`,
      );
    }
  }
  // nested strings: preconditions.uid (a types.UID) / .resourceVersion, dryRun items
  const pre = fieldAt(o, 'preconditions');
  for (const [f, goType] of [
    ['uid', 'types.UID'],
    ['resourceVersion', 'string'],
  ] as const) {
    const v = fieldAt(pre, f);
    if (v !== undefined && v !== null && typeof v !== 'string') {
      throw errors.badRequest(
        `json: cannot unmarshal ${goKind(v)} into Go struct field Preconditions.preconditions.${f} of type ${goType}`,
      );
    }
  }
  const dryRun = fieldAt(o, 'dryRun');
  for (const v of Array.isArray(dryRun) ? dryRun : []) {
    if (typeof v !== 'string')
      throw errors.badRequest(
        `json: cannot unmarshal ${goKind(v)} into Go struct field DeleteOptions.dryRun of type string`,
      );
  }
}

function goKind(v: unknown): string {
  if (Array.isArray(v)) return 'array';
  if (v === null) return 'null';
  return typeof v === 'boolean' ? 'bool' : typeof v;
}

export function checkDeleteOptions(o: DeleteOptions): void {
  const causes = [];
  if (o.propagationPolicy !== undefined && !POLICIES.includes(o.propagationPolicy)) {
    causes.push({
      reason: 'FieldValueNotSupported',
      field: 'propagationPolicy',
      message: `Unsupported value: "${o.propagationPolicy}": supported values: "Foreground", "Background", "Orphan"`,
    });
  }
  if (o.propagationPolicy !== undefined && o.orphanDependents !== undefined) {
    causes.push({
      reason: 'FieldValueInvalid',
      field: 'propagationPolicy',
      message: `Invalid value: "${o.propagationPolicy}": orphanDependents and deletionPropagation cannot be both set`,
    });
  }
  if (o.gracePeriodSeconds !== undefined && (!Number.isInteger(o.gracePeriodSeconds) || o.gracePeriodSeconds < 0)) {
    causes.push({
      reason: 'FieldValueInvalid',
      field: 'gracePeriodSeconds',
      message: `Invalid value: ${o.gracePeriodSeconds}: must be greater than or equal to 0`,
    });
  }
  if (causes.length) throw errors.invalid({ group: 'meta.plat.io', kind: 'DeleteOptions', name: '' }, causes);
}

/**
 * The unsafe delete of a corrupt object (gate AllowUnsafeMalformedObjectDeletion): without the
 * gate the option is dropped (a normal delete, which fails on a corrupt object); with it, every
 * other option must be unset (400) and deletecollection is refused.
 */
export function checkUnsafeDelete(o: DeleteOptions, dryRun: boolean, gate: boolean, collection: boolean): void {
  if (!o.ignoreStoreReadErrorWithClusterBreakingPotential) return;
  if (!gate) {
    delete o.ignoreStoreReadErrorWithClusterBreakingPotential;
    return;
  }
  const f = 'ignoreStoreReadErrorWithClusterBreakingPotential';
  if (collection)
    throw errors.badRequest(
      `${f}: Invalid value: true: is not allowed with DELETECOLLECTION, try again after removing the option`,
    );
  const set: string[] = [];
  if (dryRun || (o.dryRun?.length ?? 0) > 0)
    set.push(`dryRun: Invalid value: ${JSON.stringify(o.dryRun ?? ['All'])}: can not be set together with ${f}`);
  if (o.gracePeriodSeconds !== undefined)
    set.push(`gracePeriodSeconds: Invalid value: ${o.gracePeriodSeconds}: can not be set together with ${f}`);
  if (o.orphanDependents !== undefined)
    set.push(`orphanDependents: Invalid value: ${o.orphanDependents}: can not be set together with ${f}`);
  if (o.preconditions !== undefined)
    set.push(`preconditions: Invalid value: ${JSON.stringify(o.preconditions)}: can not be set together with ${f}`);
  if (o.propagationPolicy !== undefined)
    set.push(`propagationPolicy: Invalid value: "${o.propagationPolicy}": can not be set together with ${f}`);
  if (set.length) throw errors.badRequest(set.length === 1 ? set[0]! : `[${set.join(', ')}]`);
}

/**
 * The delete preconditions, checked in the transaction that removes the object. The 409 is
 * upstream's rest.BeforeDelete one: it names the object's kind (and group), not its resource.
 */
export function checkPreconditions(obj: Stored, o: DeleteOptions, t: Target, rv: number): void {
  const pre = o.preconditions;
  const byKind = { ...t, resource: t.kind };
  if (pre?.uid && pre.uid !== obj.metadata.uid) {
    throw errors.conflict(
      byKind,
      `the UID in the precondition (${pre.uid}) does not match the UID in record (${obj.metadata.uid}). The object might have been deleted and then recreated`,
    );
  }
  if (pre?.resourceVersion && pre.resourceVersion !== String(rv)) {
    throw errors.conflict(
      byKind,
      `the ResourceVersion in the precondition (${pre.resourceVersion}) does not match the ResourceVersion in record (${rv}). The object might have been modified`,
    );
  }
}

function policyFinalizer(o: DeleteOptions): string | undefined {
  const policy = o.propagationPolicy ?? (o.orphanDependents === true ? 'Orphan' : undefined);
  if (policy === 'Orphan') return ORPHAN_FINALIZER;
  if (policy === 'Foreground') return FOREGROUND_FINALIZER;
  return undefined;
}

/** What a DELETE does to obj: remove it now, mark it pending (finalizers, grace), or nothing. */
export function planDelete(
  obj: Stored,
  o: DeleteOptions,
  strategy: ResourceStrategy,
  now: number,
  t: Target,
  config: StrategyConfig,
): DeletePlan {
  const forbidden = strategy.forbidDelete(obj, config);
  // upstream NewForbidden: details name the resource (plural) as kind
  if (forbidden)
    throw errors.forbidden(`${t.resource} "${t.name}" is forbidden: ${forbidden}`, {
      name: t.name,
      group: t.group,
      kind: t.resource,
    });
  const meta = obj.metadata;
  const add = policyFinalizer(o);
  const grace = strategy.gracePeriod(obj, o.gracePeriodSeconds);
  const finalizers: string[] = meta.finalizers ?? [];
  const held = finalizers.length > 0 || strategy.holdsDeletion(obj);
  if (meta.deletionTimestamp) {
    // a pending deletion: a shorter grace period or a new policy finalizer may still apply
    if (!held && grace === 0) return { action: 'remove' };
    if (add && !finalizers.includes(add))
      return { action: 'pending', next: { ...obj, metadata: { ...meta, finalizers: [...finalizers, add] } } };
    return { action: 'unchanged' };
  }
  if (!held && !add && grace === 0) return { action: 'remove' };
  const next = copyValue(obj);
  next.metadata.deletionTimestamp = new Date(Math.floor(now / 1000) * 1000 + grace * 1000)
    .toISOString()
    .replace('.000Z', 'Z');
  next.metadata.deletionGracePeriodSeconds = grace;
  if (add && !finalizers.includes(add)) next.metadata.finalizers = [...finalizers, add];
  strategy.prepareForDelete(next);
  return { action: 'pending', next };
}
