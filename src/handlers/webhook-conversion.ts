/**
 * conversion.strategy Webhook (upstream webhook_converter.go): a request in a version other
 * than the CRD's storage version is served by the storage version's store, the objects
 * converted through ConversionReviews (conversion-review.ts): request bodies to the storage
 * version, replies (objects, list items in one batch, watch events) to the requested version,
 * rendered in the requested encoding and view (a Table prints the requested version's columns).
 * Writes that need the object in the requested version (merge and JSON patches, server-side
 * apply, the scale subresource) read it, convert it, change it here, convert it back and write
 * it as an update pinned to the version read (a conflict with another writer runs them again,
 * as upstream's patcher). Strategic merge patches stay 415 (custom resources have none).
 */
import type { Status } from '../api/status.js';
import type { Body, ListOptions, Result, TypeRef } from '../actors/protocol.js';
import type { OpInput } from '../actors/pool.js';
import type { Encoding } from '../codec/types.js';
import type { WatchSink } from '../http/watch-hub.js';
import { decodeBody, encode, contentTypeOf } from '../codec/codec.js';
import { renderView } from '../codec/table.js';
import { send, sendStatus } from '../http/exchange.js';
import { applyMergePatch } from '../patch/merge-patch.js';
import { applyJsonPatch } from '../patch/json-patch.js';
import { patchObject } from '../registry/patch.js';
import { recordUpdate } from '../apply/managed-fields.js';
import { compileCustomSchema } from '../registry/crd/structural.js';
import { fromScale, toScale } from '../registry/crd/cr-strategy.js';
import { customVersion, type CustomType } from '../registry/crd/types.js';
import type { SchemaNode } from '../schema/schema.js';
import { isTruthy } from '../http/negotiation.js';
import { MAX_ATTEMPTS } from '../http/pin.js';
import type { Request, Services } from '../http/context.js';
import {
  ConversionFailed,
  conversionFailure,
  convertObject,
  convertObjects,
  isObj,
  type Obj,
} from './conversion-review.js';
import { ConvertingSink, watchConversionStatus } from './conversion-watch.js';

/** What the resource handler lends: its body reader, operations, list options, error rendering and warnings. */
export interface HandlerParts {
  withBody(next: (body: Body) => Promise<void>): void;
  /** the write operation of the request's body as verb (create or update) would build it */
  writeOpAs(verb: 'create' | 'update', body: Body): OpInput;
  listOptions(): ListOptions;
  errorStatus(e: unknown): Status;
  warn(warnings: string[] | undefined): void;
  /** reads and checks a delete's or deletecollection's options, then submits its operation */
  withDeleteOp(submit: (op: OpInput) => Promise<void>): void;
  /** serves a watch of base through wrap's sink (the resource handler's serveWatch) */
  watch(base: { type: TypeRef; enc: Encoding }, wrap: (stream: WatchSink) => WatchSink): void;
}

type Change = (current: Obj) => Obj;

const PATCHES: Record<string, (doc: unknown, patch: unknown) => unknown> = {
  'application/merge-patch+json': applyMergePatch,
  'application/json-patch+json': applyJsonPatch,
};
const APPLY = new Set(['application/apply-patch+yaml', 'application/apply-patch+json']);

const bodyText = (b: string | Uint8Array): string => (typeof b === 'string' ? b : Buffer.from(b).toString('utf8'));
/** managedFields time: seconds, as the store writes it */
const now = () => new Date().toISOString().replace(/\.\d+Z$/, 'Z');

/** The requested version's schema for apply, compiled once per served CRD generation. */
const schemas = new WeakMap<object, SchemaNode>();
function schemaOf(t: CustomType, version: string): SchemaNode | undefined {
  const v = customVersion(t, version);
  if (!v) return undefined;
  let node = schemas.get(v);
  if (!node) schemas.set(v, (node = compileCustomSchema(v.schema)));
  return node;
}

/** Serves the request through conversion when the CRD converts by webhook; false: not such a request. */
export function servedByWebhookConversion(r: Request, s: Services, h: HandlerParts): boolean {
  if (!r.def.custom) return false;
  const t = s.customType?.(r.def.group, r.def.resource);
  if (!t?.webhook || t.storageVersion === r.def.version) return false;
  const c = new Converting(r, s, h, t);
  return c.serve();
}

class Converting {
  private readonly requested: string;
  private readonly stored: string;
  private readonly sub: string;

  constructor(
    private readonly r: Request,
    private readonly s: Services,
    private readonly h: HandlerParts,
    private readonly t: CustomType,
  ) {
    this.requested = `${r.def.group}/${r.def.version}`;
    this.stored = `${r.def.group}/${t.storageVersion}`;
    this.sub = r.info.subresource;
  }

  /** Dispatch by verb and subresource; false leaves the request to the None path. */
  serve(): boolean {
    const { r, sub } = this;
    const verb = r.info.verb;
    if (sub && sub !== 'status' && sub !== 'scale') return false;
    const contentType = (r.headers.contentType ?? '').split(';')[0]!.trim().toLowerCase();
    if (verb === 'watch' && !sub) this.watch();
    else if (verb === 'get')
      void this.read(
        { op: 'get', name: r.info.name, resourceVersion: r.query.get('resourceVersion') ?? undefined },
        sub === 'scale' ? (o) => this.scaleOf(o) : undefined,
      );
    else if (verb === 'list' && !sub) void this.read({ op: 'list', opts: this.h.listOptions() });
    else if ((verb === 'delete' || verb === 'deletecollection') && !sub)
      this.h.withDeleteOp((op) => this.read({ ...op, type: this.type(), enc: this.enc }));
    else if ((verb === 'create' && !sub) || (verb === 'update' && sub !== 'scale'))
      this.h.withBody((b) => this.write(b));
    else if (verb === 'update') this.h.withBody((b) => this.scaleWrite(decodeBody(b)));
    else if (verb === 'patch' && PATCHES[contentType]) this.h.withBody((b) => this.patch(PATCHES[contentType]!, b));
    else if (verb === 'patch' && APPLY.has(contentType) && sub !== 'scale') this.h.withBody((b) => this.apply(b));
    else return false;
    return true;
  }

  private type(sub?: string): TypeRef {
    return {
      group: this.r.def.group,
      version: this.t.storageVersion,
      resource: this.r.def.resource,
      ...(sub ? { subresource: sub } : {}),
    };
  }

  private get enc() {
    return { format: 'json' as const, pretty: false };
  }

  private fail(e: unknown, from: string): void {
    const st = e instanceof ConversionFailed ? conversionFailure(this.t, from, e) : this.h.errorStatus(e);
    sendStatus(this.r.x, st, this.r.enc.pretty, this.r.enc);
  }

  /** The actor's answer, or undefined after sending its error. */
  private async submit(op: Record<string, unknown>): Promise<(Result & { code: number }) | undefined> {
    const res = await this.s.pool.submit({
      type: this.type(),
      enc: this.enc,
      namespace: this.r.info.namespace,
      ...op,
    } as OpInput);
    if ('error' in res) return void sendStatus(this.r.x, res.error, this.r.enc.pretty, this.r.enc);
    return 'code' in res ? res : undefined;
  }

  /** A storage-version reply converted to the requested version and sent in the requested encoding (render: a subresource view). */
  private async answer(res: Result & { code: number }, render?: (o: Obj) => unknown): Promise<void> {
    if (!('body' in res)) return;
    let body = JSON.parse(bodyText(res.body)) as Obj;
    const enc = this.r.enc;
    const kindKey = `${this.requested}/${this.t.kind}`;
    if (Array.isArray(body.items)) {
      const items = await convertObjects(this.s, this.t, body.items as Obj[], this.requested);
      body = enc.view
        ? renderView(kindKey, items, body.metadata as Record<string, unknown>, enc.view, Date.now(), true)
        : { ...body, apiVersion: this.requested, items };
    } else if (body.kind === this.t.kind) {
      const obj = await convertObject(this.s, this.t, body, this.requested);
      body = render
        ? (render(obj) as Obj)
        : enc.view
          ? renderView(kindKey, [obj], {}, enc.view, Date.now(), false)
          : obj;
    }
    this.h.warn('warnings' in res ? res.warnings : undefined);
    send(this.r.x, res.code, contentTypeOf(enc), encode(body, { ...enc, view: undefined }));
  }

  /** get, list, delete: the storage version's reply, converted. */
  private async read(op: Record<string, unknown>, render?: (o: Obj) => unknown): Promise<void> {
    try {
      const res = await this.submit(op);
      if (res) await this.answer(res, render);
    } catch (e) {
      this.fail(e, this.stored);
    }
  }

  /**
   * create: the body's field ownership recorded in the requested version, then converted to the
   * storage version and written. An update (of the object or its status) replaces what is read,
   * so its ownership is computed against the stored object in the requested version.
   */
  private async write(body: Body): Promise<void> {
    const obj = decodeBody(body) as Obj;
    if (this.r.info.verb === 'update')
      return this.modify(() => obj, { pinned: true, manager: true, sub: this.sub || undefined });
    const op = this.h.writeOpAs('create', { text: '{}', contentType: 'json' }) as Record<string, unknown>;
    let converted: Obj;
    try {
      this.own(obj, undefined, op.fieldManager);
      converted = await convertObject(this.s, this.t, obj, this.stored);
    } catch (e) {
      return this.fail(e, isObj(obj) ? String(obj.apiVersion) : this.requested);
    }
    delete op.fieldManager;
    try {
      const res = await this.submit({
        ...op,
        body: { text: JSON.stringify(converted), contentType: 'json' },
        type: this.type(),
        enc: this.enc,
      });
      if (res) await this.answer(res);
    } catch (e) {
      this.fail(e, this.stored);
    }
  }

  /** An Update entry for manager in the requested version (sub: the subresource written), as the store records one. */
  private own(next: Obj, old: Obj | undefined, manager: unknown, sub?: string): void {
    if (typeof manager !== 'string') return;
    recordUpdate(next, old, schemaOf(this.t, this.r.def.version), manager, this.requested, now(), sub);
  }

  /**
   * Read, convert, change, convert back, update (of the main object, or of /status). A conflict
   * runs it again while the change itself did not ask for a resourceVersion (at most
   * MAX_ATTEMPTS). manager: record an Update entry (false: apply computed managedFields).
   */
  private async modify(
    change: Change,
    o: {
      pinned: boolean;
      manager: boolean;
      sub?: string;
      render?: (o: Obj) => unknown;
      create?: () => Obj;
      ownedAs?: string;
    },
  ): Promise<void> {
    const { r } = this;
    try {
      for (let attempt = 1; ; attempt++) {
        const cur = await this.s.pool.submit({
          type: this.type(),
          enc: this.enc,
          op: 'get',
          namespace: r.info.namespace,
          name: r.info.name,
        });
        let next: Obj;
        let old: Obj | undefined;
        if ('error' in cur && cur.error.code === 404 && o.create) next = o.create();
        else if ('error' in cur || !('body' in cur))
          return void ('error' in cur && sendStatus(r.x, cur.error, r.enc.pretty, r.enc));
        else {
          old = await convertObject(this.s, this.t, JSON.parse(bodyText(cur.body)) as Obj, this.requested);
          next = change(structuredClone(old));
        }
        const verb = 'error' in cur ? 'create' : 'update';
        const op = this.h.writeOpAs(verb, { text: '{}', contentType: 'json' }) as Record<string, unknown>;
        // ownership in the requested version's terms (the store would record the storage version's)
        if (o.manager) this.own(next, old, op.fieldManager, o.ownedAs ?? o.sub);
        delete op.fieldManager;
        op.body = { text: JSON.stringify(await convertObject(this.s, this.t, next, this.stored)), contentType: 'json' };
        const res = await this.s.pool.submit({
          ...op,
          type: this.type(verb === 'update' ? o.sub : undefined),
          enc: this.enc,
        } as OpInput);
        if ('error' in res && res.error.code === 409 && !o.pinned && attempt < MAX_ATTEMPTS) continue;
        if ('error' in res) return sendStatus(r.x, res.error, r.enc.pretty, r.enc);
        if ('code' in res) await this.answer(res, o.render);
        return;
      }
    } catch (e) {
      this.fail(e, this.stored);
    }
  }

  /** merge and JSON patches: of the object (or its status) as the requested version shows it, or of its Scale. */
  private async patch(patchWith: (doc: unknown, patch: unknown) => unknown, body: Body): Promise<void> {
    const patch = JSON.parse(body.text) as unknown;
    const pinned = /"resourceVersion"|\/metadata\/resourceVersion/.test(body.text);
    if (this.sub === 'scale') {
      const paths = this.scalePaths();
      return this.modify((cur) => fromScale(cur, patchWith(toScale(cur, paths), patch), paths), {
        pinned,
        manager: true,
        ownedAs: 'scale',
        render: (o) => toScale(o, paths),
      });
    }
    return this.modify((cur) => patchWith(cur, patch) as Obj, { pinned, manager: true, sub: this.sub || undefined });
  }

  /** A written Scale: the requested version's replicas path of the converted object. */
  private async scaleWrite(scale: unknown): Promise<void> {
    const paths = this.scalePaths();
    const pinned = isObj(scale) && isObj(scale.metadata) && !!scale.metadata.resourceVersion;
    return this.modify((cur) => fromScale(cur, scale, paths), {
      pinned,
      manager: true,
      ownedAs: 'scale',
      render: (o) => toScale(o, paths),
    });
  }

  /** Server-side apply in the requested version (its schema, managedFields under its apiVersion). */
  private async apply(body: Body): Promise<void> {
    const { r, t } = this;
    const input = {
      patchType: 'apply' as const,
      text: body.text,
      force: isTruthy(r.query.get('force')),
      fieldManager: r.query.get('fieldManager') ?? undefined,
      subresource: this.sub || undefined,
    };
    const target = { kind: t.kind, group: t.group, apiVersion: this.requested, name: r.info.name };
    const schema = schemaOf(t, r.def.version);
    const applied = (cur: Obj | undefined) =>
      patchObject(cur, input, schema, target, new Date().toISOString().replace(/\.\d+Z$/, 'Z')) as Obj;
    const create = this.sub
      ? undefined
      : () => {
          const obj = applied(undefined);
          obj.metadata = { ...(isObj(obj.metadata) ? obj.metadata : {}), name: r.info.name };
          return obj;
        };
    return this.modify(applied, {
      pinned: /resourceVersion/.test(body.text),
      manager: false,
      sub: this.sub || undefined,
      create,
    });
  }

  private scalePaths() {
    const paths = customVersion(this.t, this.r.def.version)?.scale;
    if (!paths) throw new Error('the version has no scale subresource');
    return paths;
  }

  private scaleOf(o: Obj): unknown {
    return toScale(o, this.scalePaths());
  }

  /** The storage version's events, each batch converted (conversion-watch.ts). */
  private watch(): void {
    const { r, s, t } = this;
    this.h.watch(
      { type: this.type(), enc: this.enc },
      (stream) =>
        new ConvertingSink(stream, {
          apiVersion: this.requested,
          kind: t.kind,
          enc: r.enc,
          convert: (objects) => convertObjects(s, t, objects, this.requested),
          failure: (e) =>
            watchConversionStatus(
              e instanceof ConversionFailed
                ? `conversion webhook for ${this.stored}, Kind=${t.kind} failed: ${e.message}`
                : String(e),
            ),
        }),
    );
  }
}
