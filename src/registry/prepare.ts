/**
 * The strategy steps of the generic store's writes: what runs between decoding a body and
 * staging the result. A create gets its system metadata, the kind's PrepareForCreate, validation
 * and admission; an update (main resource or a subresource) gets its next state from the stored
 * object and the kind's PrepareForUpdate / status / subresource hooks, then validation.
 * Free functions over the store's context: the store (store.ts) keeps the verbs and the staging.
 */
import { randomUUID } from 'node:crypto';
import { errors, type StatusCause } from '../api/status.js';
import { metadataCauses } from './validation.js';
import { requiredCauses } from '../schema/required.js';
import type { SchemaNode } from '../schema/schema.js';
import { rfc3339, specChanged, tracksGeneration } from './objects.js';
import type { ObjectMeta, Stored } from '../api/object.js';
import type { Requester, StrategyContext } from './strategy.js';
import type { Txn } from './txn.js';
import type { StoreContext } from './store-context.js';
import { copyValue } from '../schema/deep-value.js';
import { markValidated, validatedOrUndefined } from './validated.js';

/** What the steps read of a store: its context, whether it has a status subresource, its schema. */
export interface PrepareContext {
  readonly ctx: StoreContext;
  /** PUT on the main resource keeps status when a status subresource exists */
  readonly hasStatus: boolean;
  /** the structural schema (required fields); undefined for kinds without one */
  readonly schema: SchemaNode | undefined;
}

/** The read-only view strategies get: this type's objects including staged writes. */
export function strategyContext(ctx: StoreContext, txn: Txn, dryRun: boolean, user?: Requester): StrategyContext {
  const { cache, typeKey, config } = ctx;
  return {
    dryRun,
    config,
    now: txn.now,
    user,
    *existing() {
      const staged = txn.staged(typeKey);
      for (const [k, e] of cache.scan('', undefined)) if (!staged.has(k)) yield e.obj;
      for (const e of staged.values()) if (e) yield e.obj;
    },
  };
}

/** upstream NewForbidden(groupResource, name, err), as validating admission answers. */
function forbidden(ctx: StoreContext, name: string, why: string) {
  const { group, resource } = ctx.def;
  return errors.forbidden(`${resource}${group ? '.' + group : ''} ${JSON.stringify(name ?? '')} is forbidden: ${why}`, {
    group,
    kind: resource,
    name,
  });
}

/**
 * A new object's system metadata (uid, creationTimestamp, generation; client values dropped),
 * then the kind's PrepareForCreate, validation and create admission. Throws Invalid or Forbidden.
 */
export function prepareCreate(p: PrepareContext, obj: Stored, txn: Txn, dryRun: boolean, user?: Requester): void {
  const { strategy, def, config } = p.ctx;
  const meta = obj.metadata;
  for (const f of [
    'uid',
    'resourceVersion',
    'creationTimestamp',
    'deletionTimestamp',
    'deletionGracePeriodSeconds',
    'generation',
    'selfLink',
  ] as const)
    delete meta[f];
  meta.uid = randomUUID();
  meta.creationTimestamp = rfc3339(txn.now);
  if (tracksGeneration(def, obj)) meta.generation = 1;
  const sctx = strategyContext(p.ctx, txn, dryRun, user);
  strategy.prepareForCreate(obj, sctx);
  validateObject(p, obj, undefined, metadataCauses(meta, strategy.nameRule), strategy.validate(obj, config));
  const refused = strategy.admitCreate(obj, sctx);
  if (refused) throw forbidden(p.ctx, meta.name, refused);
}

/** The next state of `old` after a PUT/PATCH of `obj` to the main resource or a subresource. */
export function nextFor(
  p: PrepareContext,
  subresource: string | undefined,
  obj: Stored,
  old: Stored,
  txn: Txn,
  dryRun: boolean,
): Stored {
  if (!subresource) return mainUpdate(p, obj, old, txn, dryRun);
  const { strategy, def } = p.ctx;
  const ctx = strategyContext(p.ctx, txn, dryRun);
  let next: Stored | undefined;
  if (subresource === 'status') {
    next = statusUpdate(obj, old);
    strategy.prepareForStatusUpdate(next, old, ctx);
  } else {
    next = strategy.updateSubresource(subresource, obj, old, ctx);
    if (next === undefined)
      throw errors.methodNotAllowed('the server does not allow this method on the requested resource');
  }
  const causes = strategy.validateSubresourceUpdate(subresource, next, old);
  if (causes.length) throw errors.invalid({ group: def.group, kind: def.kind, name: old.metadata.name }, causes);
  return next;
}

function mainUpdate(p: PrepareContext, obj: Stored, old: Stored, txn: Txn, dryRun: boolean): Stored {
  const { strategy, def, config } = p.ctx;
  keepSystemMeta(obj.metadata, old.metadata);
  if (p.hasStatus) {
    if (old.status === undefined) delete obj.status;
    else obj.status = old.status;
  }
  strategy.prepareForUpdate(obj, old, strategyContext(p.ctx, txn, dryRun));
  validateObject(
    p,
    obj,
    p.ctx.def.custom ? undefined : validatedOrUndefined(old),
    metadataCauses(obj.metadata, strategy.nameRule),
    strategy.validate(obj, config, old),
    strategy.validateUpdate(obj, old),
  );
  if (tracksGeneration(def, obj) && specChanged(obj, old)) obj.metadata.generation = (old.metadata.generation ?? 1) + 1;
  return obj;
}

/** The status subresource changes only status; everything else stays as stored. */
function statusUpdate(obj: Stored, old: Stored): Stored {
  const next = copyValue(old);
  if (obj.status === undefined) delete next.status;
  else next.status = obj.status;
  return next;
}

function keepSystemMeta(meta: ObjectMeta, old: ObjectMeta): void {
  for (const f of [
    'uid',
    'creationTimestamp',
    'deletionTimestamp',
    'deletionGracePeriodSeconds',
    'generation',
    'namespace',
  ] as const)
    keepField(meta, old, f);
}

function keepField<K extends keyof ObjectMeta>(meta: ObjectMeta, old: ObjectMeta, f: K): void {
  if (old[f] === undefined) delete meta[f];
  else meta[f] = old[f];
}

/**
 * The kind's causes, then Required for schema-required fields it did not already report on
 * (not looked for again in the subtrees obj shares with `previous`, a validated object it
 * replaces: src/registry/validated.ts). A built-in object that passes is marked validated.
 */
function validateObject(p: PrepareContext, obj: Stored, previous: Stored | undefined, ...lists: StatusCause[][]): void {
  const causes = lists.flat();
  const reported = new Set(causes.map((c) => c.field));
  for (const c of requiredCauses(obj, p.schema, previous)) if (!reported.has(c.field)) causes.push(c);
  if (causes.length)
    throw errors.invalid({ group: p.ctx.def.group, kind: p.ctx.def.kind, name: obj.metadata?.name }, causes);
  if (!p.ctx.def.custom) markValidated(obj);
}
