/**
 * The generic store: every verb for every kind, in one place. Per-kind behaviour comes from
 * a ResourceStrategy. The per-version state, the view/encode helpers and the read verbs are
 * ReadStore's (read-store.ts); the write verbs are here. Runs inside the shard actor that owns
 * the type; reads see committed state, writes are staged on the batch transaction and
 * acknowledged after commit.
 */
import { errors, successStatus } from '../api/status.js';
import type { Encoding } from '../codec/types.js';
import type { DeleteOptions, Op, TypeRef } from './ops.js';
import { decodeBody, encodeList, contentTypeOf } from '../codec/codec.js';
import type { Entry } from '../storage/cacher/type-cache.js';
import type { Stored } from '../api/object.js';
import type { Requester } from './strategy.js';
import { nextFor, prepareCreate, strategyContext } from './prepare.js';
import type { StagedWrite, Txn } from './txn.js';
import { schemaIndex } from '../schema/schema.js';
import { patchBase, patchObject, strategicRestoreError } from './patch.js';
import { validateFields, type DecodeNotes } from '../schema/fields.js';
import {
  PATCH_DECODED_AS,
  decodeNotes,
  decodeObject,
  generateName,
  identifyPatched,
  rfc3339,
  unchangedWrite,
} from './objects.js';
import { SCALE_TARGET, checkedScale, fromScale, scaleOwners, withScaleOwners, type OwnedScale } from './scale.js';
import { checkPreconditions, planDelete } from './deletion.js';
import { copyValue, stringifyValue } from '../schema/deep-value.js';
import { recordUpdateNoErrors } from './depth-guard.js';
import { ReadStore } from './read-store.js';
import { CONFLICT, withWarnings, type Ok } from './store-context.js';

export { apiVersionOf, type StoreContext } from './store-context.js';

export class Store extends ReadStore {
  create(op: Extract<Op, { op: 'create' }>, txn: Txn): Ok {
    if (op.type.subresource) return this.createSubresource(op, txn);
    const notes = decodeNotes(op.body);
    const obj = this.decodeQuantities(decodeObject(this.ctx.def, this.apiVersion, op.body, op.namespace, notes));
    const warnings = validateFields(obj, this.schema, op.fieldValidation ?? 'Warn', notes);
    const meta = obj.metadata;
    if (!meta.name && meta.generateName) {
      const name = generateName(
        meta.generateName,
        (n) => !!txn.read(this.ctx.cache, this.ctx.typeKey, op.namespace, n),
      );
      if (name === undefined) throw errors.alreadyExists(this.target(meta.generateName));
      meta.name = name;
    }
    if (op.namespaceTerminating) {
      const message = `unable to create new content in namespace ${op.namespace} because it is being terminated`;
      throw errors.forbidden(
        `${this.ctx.def.resource} "${meta.name ?? ''}" is forbidden: ${message}`,
        this.target(meta.name),
        [{ reason: 'NamespaceTerminating', message, field: 'metadata.namespace' }],
      );
    }
    return withWarnings(
      this.createObject(obj, op.namespace, op.dryRun, op.enc, txn, op.fieldManager, op.user),
      warnings,
    );
  }

  /** POST to a subresource (binding, eviction): the strategy computes the main object's next state. */
  private createSubresource(op: Extract<Op, { op: 'create' }>, txn: Txn): Ok {
    const old = this.read(txn, op.namespace, op.name ?? '');
    if (!old) throw errors.notFound(this.target(op.name));
    const body = decodeBody(op.body);
    const out = this.ctx.strategy.createSubresource(
      op.type.subresource!,
      body,
      old.obj,
      strategyContext(this.ctx, txn, op.dryRun),
    );
    if (!out) throw errors.methodNotAllowed('the server does not allow this method on the requested resource');
    if (out.next === undefined) this.remove(old, copyValue(old.obj), op.dryRun, op.enc, txn);
    else this.commitUpdate(out.next, old, op.dryRun, op.enc, txn);
    return this.reply(out.reply, op.enc, 201);
  }

  /** manager: record an Update entry for it; undefined when managedFields are already set (apply). */
  private createObject(
    obj: Stored,
    namespace: string,
    dryRun: boolean,
    enc: Encoding,
    txn: Txn,
    manager: string | undefined,
    user?: Requester,
  ): Ok {
    // the namespace's existence is checked on the front thread, which owns the namespace index
    prepareCreate(this.prep, obj, txn, dryRun, user);
    const meta = obj.metadata;
    if (manager !== undefined)
      recordUpdateNoErrors(obj, undefined, this.schema, manager, this.apiVersion, rfc3339(txn.now));
    if (txn.read(this.ctx.cache, this.ctx.typeKey, namespace, meta.name))
      throw errors.alreadyExists(this.target(meta.name));
    if (dryRun) delete meta.resourceVersion;
    else meta.resourceVersion = String(txn.nextRV());
    const entry = this.stored(obj);
    if (!dryRun) this.stage('ADDED', entry, txn);
    return this.replyWritten(obj, entry, enc, 201);
  }

  /** A write pinned to the version its checks saw (Op `pin`, src/http/pin.ts): any other state is a 409. */
  private checkPin(op: { pin?: string; namespace: string; name: string }, txn: Txn): void {
    const e = op.pin === undefined ? undefined : this.read(txn, op.namespace, op.name);
    if (op.pin !== undefined && (e ? String(e.rv) : '') !== op.pin)
      throw errors.conflict(this.target(op.name), CONFLICT);
  }

  update(op: Extract<Op, { op: 'update' }>, txn: Txn): Ok {
    this.checkPin(op, txn);
    if (op.type.subresource === 'scale') return this.scaleWrite(checkedScale(decodeBody(op.body)), op, txn, false);
    const notes = decodeNotes(op.body);
    const obj = this.decodeQuantities(decodeObject(this.ctx.def, this.apiVersion, op.body, op.namespace, notes));
    const warnings = validateFields(obj, this.schema, op.fieldValidation ?? 'Warn', notes);
    return withWarnings(this.updateDecoded(obj, op, txn), warnings);
  }

  private updateDecoded(obj: Stored, op: Extract<Op, { op: 'update' }>, txn: Txn): Ok {
    if (obj.metadata.name !== op.name) {
      throw errors.badRequest(
        `the name of the object (${obj.metadata.name ?? ''}) does not match the name on the URL (${op.name})`,
      );
    }
    const old = this.read(txn, op.namespace, op.name);
    if (!old) {
      if (!this.ctx.strategy.allowCreateOnUpdate || op.type.subresource) throw errors.notFound(this.target(op.name));
      return this.createObject(obj, op.namespace, op.dryRun, op.enc, txn, op.fieldManager);
    }
    return this.updateFrom(obj, old, op, txn, op.fieldManager);
  }

  /**
   * Writes a Scale: the main object changes spec.replicas; the reply is the new Scale. Field
   * ownership is tracked on the Scale (an apply computed it already) and mapped to the parent.
   */
  private scaleWrite(
    scale: Record<string, unknown>,
    op: { type: TypeRef; namespace: string; name: string; dryRun: boolean; enc: Encoding; fieldManager?: string },
    txn: Txn,
    applied: boolean,
  ): Ok {
    const old = this.read(txn, op.namespace, op.name);
    if (!old) throw errors.notFound(this.target(op.name));
    const main = { ...op, type: { ...op.type, subresource: undefined } };
    const next = this.ctx.strategy.scale ? this.ctx.strategy.scale.from(old.obj, scale) : fromScale(old.obj, scale);
    const writer = applied ? undefined : op.fieldManager;
    const owners = { path: this.replicasPath(), apiVersion: this.apiVersion, now: rfc3339(txn.now) };
    next.metadata.managedFields = scaleOwners(scale, this.ownedScale(old.obj), old.obj, writer, owners);
    return this.updateFrom(next, old, main, txn, undefined, (o) => this.toScale(o));
  }

  /** The Scale of an object with the managedFields of the writers that own its replicas. */
  private ownedScale(obj: Stored): OwnedScale {
    return withScaleOwners(this.toScale(obj), obj, this.replicasPath());
  }

  private replicasPath(): string[] {
    return this.ctx.strategy.scale?.replicasPath ?? ['spec', 'replicas'];
  }

  /** Shared tail of update and patch: precondition, strategy, ownership, commit. */
  private updateFrom(
    obj: Stored,
    old: Entry,
    op: { type: TypeRef; dryRun: boolean; enc: Encoding },
    txn: Txn,
    manager: string | undefined,
    render?: (obj: Stored) => unknown,
  ): Ok {
    this.checkResourceVersion(obj, old);
    const next = nextFor(this.prep, op.type.subresource, obj, old.obj, txn, op.dryRun);
    // an apply to /status computed managedFields on obj; the status view would drop them
    if (manager === undefined && op.type.subresource === 'status')
      next.metadata.managedFields = obj.metadata.managedFields;
    if (manager !== undefined)
      recordUpdateNoErrors(next, old.obj, this.schema, manager, this.apiVersion, rfc3339(txn.now), op.type.subresource);
    return this.commitUpdate(next, old, op.dryRun, op.enc, txn, render);
  }

  /**
   * Upstream Store.Update: a resourceVersion that is unset or "0" (the versioner's zero) asks
   * for an unconditional update where the kind allows one (the stored version is taken), else
   * 422 `must be specified for an update`; any other value must match the stored one (409).
   */
  private checkResourceVersion(obj: Stored, old: Entry): void {
    const rv = obj.metadata.resourceVersion;
    if (!rv || rv === '0') {
      if (!this.ctx.strategy.allowUnconditionalUpdate) {
        const { def } = this.ctx;
        // upstream names the GroupKind {group, kind: resource} here
        throw errors.invalid({ group: def.group, kind: def.resource, name: old.name }, [
          {
            reason: 'FieldValueInvalid',
            message: 'Invalid value: 0x0: must be specified for an update',
            field: 'metadata.resourceVersion',
          },
        ]);
      }
      delete obj.metadata.resourceVersion;
      return;
    }
    if (rv !== String(old.rv)) {
      throw errors.conflict(
        this.target(old.name),
        'the object has been modified; please apply your changes to the latest version and try again',
      );
    }
  }

  patch(op: Extract<Op, { op: 'patch' }>, txn: Txn): Ok {
    this.checkPin(op, txn);
    const { def } = this.ctx;
    const old = this.read(txn, op.namespace, op.name);
    const notes = patchNotes(op.patchType, op.text);
    const input = {
      patchType: op.patchType,
      text: op.text,
      force: op.force,
      fieldManager: op.fieldManager,
      subresource: op.type.subresource,
      duplicates: notes.duplicates,
    };
    const target = { kind: def.kind, group: def.group, apiVersion: this.apiVersion, name: op.name };
    const now = rfc3339(txn.now);
    if (op.type.subresource === 'scale') {
      if (!old) throw errors.notFound(this.target(op.name));
      const scale = patchObject(
        this.ownedScale(old.obj),
        input,
        schemaIndex().forKind('autoscaling', 'v1', 'Scale'),
        { ...SCALE_TARGET, name: op.name },
        now,
      );
      return this.scaleWrite(checkedScale(scale, notes), op, txn, op.patchType === 'apply');
    }
    if (!old) {
      if (op.patchType !== 'apply' || op.type.subresource) throw errors.notFound(this.target(op.name));
      const obj = this.decodeQuantities(
        identifyPatched(
          this.ctx.def,
          this.apiVersion,
          patchObject(undefined, input, this.schema, target, now),
          op.namespace,
        ),
      );
      obj.metadata.name = op.name;
      const warnings = validateFields(obj, this.schema, op.fieldValidation ?? 'Warn', notes);
      return withWarnings(this.createObject(obj, op.namespace, op.dryRun, op.enc, txn, undefined, op.user), warnings);
    }
    // the stored object, copied on write by every step (see patchBase)
    const obj = this.decodeQuantities(
      identifyPatched(
        this.ctx.def,
        this.apiVersion,
        patchObject(patchBase(old, op.patchType, !!this.ctx.def.custom), input, this.schema, target, now),
        op.namespace,
      ),
    );
    const warnings = validateFields(obj, this.schema, op.fieldValidation ?? 'Warn', notes, old.obj);
    if (obj.metadata.name !== op.name) {
      throw errors.badRequest(
        `the name of the object (${obj.metadata.name ?? ''}) does not match the name on the URL (${op.name})`,
      );
    }
    return withWarnings(
      this.updateFrom(obj, old, op, txn, op.patchType === 'apply' ? undefined : op.fieldManager),
      warnings,
    );
  }

  /** render: what the reply shows of the written object (a subresource view), default the object. */
  private commitUpdate(
    next: Stored,
    old: Entry,
    dryRun: boolean,
    enc: Encoding,
    txn: Txn,
    render?: (obj: Stored) => unknown,
  ): Ok {
    // a deleting object goes once no finalizer holds it and its grace period (pods) is over
    if (
      next.metadata.deletionTimestamp &&
      !next.metadata.finalizers?.length &&
      !this.ctx.strategy.holdsDeletion(next) &&
      !((next.metadata.deletionGracePeriodSeconds ?? 0) > 0)
    ) {
      return this.remove(old, next, dryRun, enc, txn);
    }
    if (unchangedWrite(next, old.obj)) return render ? this.reply(render(old.obj), enc) : this.replyEntry(old, enc);
    next.metadata.resourceVersion = dryRun ? old.obj.metadata.resourceVersion : String(txn.nextRV());
    const entry = this.stored(next, old);
    if (!dryRun) this.stage('MODIFIED', entry, txn);
    return render ? this.reply(render(next), enc) : this.replyWritten(next, entry, enc);
  }

  delete(op: Extract<Op, { op: 'delete' }>, txn: Txn): Ok {
    this.checkPin(op, txn);
    const old = this.read(txn, op.namespace, op.name);
    if (!old) throw errors.notFound(this.target(op.name));
    if (op.type.subresource) {
      // DELETE on a subresource (proxy) never deletes the object: the strategy answers or 405
      this.ctx.strategy.getSubresource(op.type.subresource, old.obj);
      throw errors.methodNotAllowed('the server does not allow this method on the requested resource');
    }
    return this.deleteEntry(old, op.options, op.dryRun, op.enc, txn);
  }

  private deleteEntry(old: Entry, options: DeleteOptions, dryRun: boolean, enc: Encoding, txn: Txn): Ok {
    const { obj, removed } = this.deleteOne(old, options, dryRun, txn);
    if (!removed || this.ctx.strategy.returnDeletedObject) return this.reply(obj, enc);
    const { def } = this.ctx;
    return this.reply(
      successStatus({
        name: old.name,
        ...(def.group ? { group: def.group } : {}),
        kind: def.resource,
        uid: obj.metadata.uid,
      }),
      enc,
    );
  }

  /** Deletes or marks one object; returns its resulting state and whether it is gone. */
  private deleteOne(old: Entry, options: DeleteOptions, dryRun: boolean, txn: Txn): { obj: Stored; removed: boolean } {
    const t = { ...this.target(old.name), name: old.name };
    checkPreconditions(old.obj, options, t, old.rv);
    const plan = planDelete(old.obj, options, this.ctx.strategy, txn.now, t, this.ctx.config);
    if (plan.action === 'unchanged') return { obj: old.obj, removed: false };
    if (plan.action === 'pending') {
      this.commitUpdate(plan.next, old, dryRun, { format: 'json', pretty: false }, txn);
      return { obj: plan.next, removed: false };
    }
    const last = copyValue(old.obj);
    this.remove(old, last, dryRun, { format: 'json', pretty: false }, txn);
    return { obj: last, removed: true };
  }

  /** Stages a write; a kind with a TTL gets a fresh lease on every create and update. */
  private stage(type: StagedWrite['type'], entry: Entry, txn: Txn): void {
    const ttl = this.ctx.strategy.ttl(entry.obj, this.ctx.config);
    const expiresAt = ttl > 0 ? (type === 'DELETED' ? 0 : txn.now + ttl) : undefined;
    txn.stage({ typeKey: this.ctx.typeKey, type, entry, ...(expiresAt !== undefined ? { expiresAt } : {}) });
  }

  /** Removes the object; the DELETED event carries its final state at a new revision. */
  private remove(old: Entry, last: Stored, dryRun: boolean, enc: Encoding, txn: Txn): Ok {
    if (dryRun) return this.reply(last, enc);
    last.metadata.resourceVersion = String(txn.nextRV());
    const entry = this.stored(last, old);
    this.stage('DELETED', entry, txn);
    return this.replyWritten(last, entry, enc);
  }

  deleteCollection(op: Extract<Op, { op: 'deletecollection' }>, txn: Txn): Ok {
    const sel = this.selectors(op.opts);
    const deleted: string[] = [];
    for (const [, e] of this.ctx.cache.scan(op.namespace, undefined)) {
      if (!(sel.label.empty || sel.label.matches(e.labels)) || !(sel.field.empty || sel.field.matches(e.fields)))
        continue;
      deleted.push(stringifyValue(this.deleteOne(this.view(e), op.options, op.dryRun, txn).obj));
    }
    const body = encodeList(
      {
        kind: this.ctx.def.listKind,
        apiVersion: this.apiVersion,
        metadata: { resourceVersion: String(txn.currentRV()) },
      },
      deleted,
      op.enc,
    );
    return { code: 200, body, contentType: contentTypeOf(op.enc) };
  }
}

/** What decoding a patch notes: the format it is read as, repeated keys, and a strategic patch's restore error. */
function patchNotes(patchType: Extract<Op, { op: 'patch' }>['patchType'], text: string): DecodeNotes {
  const notes: DecodeNotes = { as: PATCH_DECODED_AS[patchType], duplicates: [] };
  if (patchType === 'strategic') notes.restoreError = (why) => strategicRestoreError(text, why);
  return notes;
}
