/**
 * The read half of the generic store: its per-version state (schema, version view, selectable
 * fields, table kind), the helpers every verb uses to view and encode entries, and the
 * read verbs (get, list). Store (store.ts) adds the write verbs on top.
 */
import type { Scale } from '../api/kinds.js';
import type { Stored } from '../api/object.js';
import { errors } from '../api/status.js';
import type { Encoding } from '../codec/types.js';
import type { Op, PageMeta } from './ops.js';
import { encode, encodeEntries, encodeEntry, contentTypeOf } from '../codec/codec.js';
import { customFieldSet, fieldSetFor, renameFields, SELECTABLE_FIELDS } from '../api/field-selectors.js';
import type { Entry } from '../storage/cacher/type-cache.js';
import { CachedEntry } from '../storage/cacher/cached-entry.js';
import type { PrepareContext } from './prepare.js';
import type { Txn } from './txn.js';
import { VersionView } from './version-view.js';
import { schemaIndex, type SchemaNode } from '../schema/schema.js';
import { canonicalizeQuantities, quantityPlan, type QuantityPlan } from '../schema/quantities.js';
import { toScale } from './scale.js';
import { renderView, tableJson } from '../codec/table.js';
import {
  encodeContinue,
  historyExpired,
  matches,
  parseSelectors,
  planList,
  readChunk,
  parseRV,
  type Selectors,
} from './list.js';
import { pageBody } from './list-page.js';
import { stringifyValue } from '../schema/deep-value.js';
import { encodeSharing } from './shared-json.js';
import { checkStorable } from './depth-guard.js';
import { apiVersionOf, type Ok, type StoreContext } from './store-context.js';

export class ReadStore {
  readonly apiVersion: string;
  protected readonly allowedFields: readonly string[];
  /** what the write steps of prepare.ts read of this store */
  protected readonly prep: PrepareContext;
  /** the structural schema (merge keys, list types); undefined for kinds without one */
  protected readonly schema: SchemaNode | undefined;
  /** this version's view of the cached (stored) entries */
  protected readonly versions: VersionView;
  /** the key of the Table columns (custom resources have their own per version) */
  protected readonly tableKind: string;
  /** the kind's resource.Quantity paths; undefined for kinds without any and custom resources */
  protected readonly quantities: QuantityPlan | undefined;

  constructor(readonly ctx: StoreContext) {
    this.apiVersion = apiVersionOf(ctx.def);
    const extra = SELECTABLE_FIELDS[ctx.def.kind] ?? [];
    this.allowedFields = [
      'metadata.name',
      ...(ctx.def.namespaced ? ['metadata.namespace'] : []),
      ...(ctx.def.custom ? (ctx.selectableFields?.served ?? []) : extra),
    ];
    this.schema =
      ctx.schema ?? schemaIndex().forKind(ctx.referenceGroup ?? ctx.def.group, ctx.def.version, ctx.def.kind);
    this.quantities = ctx.def.custom ? undefined : quantityPlan(this.schema);
    this.prep = { ctx, hasStatus: ctx.def.subresources.some((s) => s.name === 'status'), schema: this.schema };
    this.tableKind = ctx.def.custom ? `${this.apiVersion}/${ctx.def.kind}` : ctx.def.kind;
    this.versions = new VersionView(ctx.converter, ctx.typeKey, this.apiVersion, ctx.conversion);
  }

  /**
   * Upstream decodes Quantity fields: the object with canonical strings (copied on write, never
   * written into: see canonicalizeQuantities), or 400 for an unparseable one.
   */
  protected decodeQuantities(obj: Stored): Stored {
    if (!this.quantities) return obj;
    const { kind, version } = this.ctx.def;
    return canonicalizeQuantities(obj, this.quantities, (m) => {
      throw errors.badRequest(`${kind} in version "${version}" cannot be handled as a ${kind}: ${m}`);
    });
  }

  /** Makes a cache entry from an object, in the type's storage version (computes its encoded form and selectable state). */
  entryOf(written: Stored): Entry {
    return this.encodedEntry(written).entry;
  }

  /**
   * entryOf, and the number of `{` and `[` in the entry's text when known. `prev`: the cached
   * object the written one replaces: an object stored as it is then reuses the texts of the
   * subtrees it shares with it (shared-json.ts), counting the brackets on the way.
   */
  private encodedEntry(written: Stored, prev?: Stored): { entry: Entry; openers?: number } {
    const obj = this.versions.toStorage(written);
    const piece = prev && obj === written && prev.apiVersion === obj.apiVersion ? encodeSharing(obj, prev) : undefined;
    const entry = new CachedEntry(
      obj.metadata.namespace ?? '',
      obj.metadata.name,
      Number(obj.metadata.resourceVersion),
      piece ? piece.text : stringifyValue(obj),
      obj.apiVersion ?? '',
      obj.metadata.labels,
      this.ctx.def.custom
        ? customFieldSet(obj, this.ctx.selectableFields?.stored ?? [], this.ctx.def.namespaced)
        : fieldSetFor(this.ctx.def.kind, obj),
      obj,
    );
    return { entry, openers: piece?.openers };
  }

  /** The entry to stage for an object of this store's version (`old`: the one it replaces); see checkStorable. */
  protected stored(obj: Stored, old?: Entry): Entry {
    const { entry, openers } = this.encodedEntry(obj, old?.obj);
    entry.own = true;
    checkStorable(entry, old, openers);
    return entry;
  }

  /** A cached (storage version) entry as this store's version: the form every verb works on. */
  view(e: Entry): Entry;
  view(e: Entry | undefined): Entry | undefined;
  view(e: Entry | undefined): Entry | undefined {
    return this.versions.entry(e);
  }

  /** An entry's JSON as this store's version (lists and watch replay). */
  jsonOf(e: Entry): string {
    return this.versions.jsonOf(e);
  }

  protected read(txn: Txn, namespace: string, name: string): Entry | undefined {
    return this.view(txn.read(this.ctx.cache, this.ctx.typeKey, namespace, name));
  }

  /** The reply to a write: what was written, its JSON reused when it is stored as this version. */
  protected replyWritten(obj: Stored, entry: Entry, enc: Encoding, code = 200): Ok {
    if (entry.obj === obj) return this.reply(obj, enc, code, entry.json);
    const v = this.view(entry);
    return this.reply(v.obj, enc, code, v.json);
  }

  protected target(name?: string) {
    return { group: this.ctx.def.group, kind: this.ctx.def.kind, resource: this.ctx.def.resource, name };
  }

  protected reply(value: unknown, enc: Encoding, code = 200, json?: string): Ok {
    return { code, body: encode(value, enc, json), contentType: contentTypeOf(enc) };
  }

  /** Encodes a stored object as the requested version. */
  protected replyEntry(e: Entry, enc: Encoding, code = 200): Ok {
    if (enc.format === 'protobuf' || enc.format === 'cbor')
      return { code, body: encodeEntry(e, enc, this.apiVersion, this.ctx.def.kind), contentType: contentTypeOf(enc) };
    // the JSON is the reply's source in every encoding (encode): the object is not parsed for it
    if (e.apiVersion === this.apiVersion) return this.reply(undefined, enc, code, e.json);
    return this.reply(this.view(e).obj, enc, code);
  }

  get(op: Extract<Op, { op: 'get' }>, txn: Txn): Ok {
    if (op.resourceVersion && op.resourceVersion !== '0') this.checkNotTooLarge(parseRV(op.resourceVersion), txn);
    const e = this.view(this.ctx.cache.get(op.namespace, op.name));
    if (!e) throw errors.notFound(this.target(op.name));
    if (op.type.subresource === 'scale') return this.reply(this.toScale(e.obj), op.enc);
    if (op.type.subresource && op.type.subresource !== 'status') {
      const view = this.ctx.strategy.getSubresource(op.type.subresource, e.obj);
      if (typeof view === 'string') return { code: 200, body: view, contentType: 'text/plain' };
      if (view !== undefined) return this.reply(view, op.enc);
    }
    if (op.enc.view)
      return this.reply(
        renderView(this.tableKind, [e.obj], { resourceVersion: String(e.rv) }, op.enc.view, txn.now, false),
        op.enc,
      );
    return this.replyEntry(e, op.enc);
  }

  protected toScale(obj: Stored): Scale {
    return this.ctx.strategy.scale ? this.ctx.strategy.scale.to(obj) : toScale(obj);
  }

  checkNotTooLarge(rv: number, txn: Txn): void {
    if (rv > txn.currentRV()) throw errors.tooLargeResourceVersion(String(rv), String(txn.currentRV()));
  }

  list(op: Extract<Op, { op: 'list' }>, txn: Txn): Ok {
    const plan = planList(op.opts, txn.now, this.ctx.continueTtlMs);
    if (plan.notOlderThan !== undefined) this.checkNotTooLarge(plan.notOlderThan, txn);
    if (plan.atRV !== undefined) this.checkAvailable(plan.atRV, txn, plan.after !== undefined);
    const sel = this.selectors(op.opts);
    const snapshotRV = plan.atRV ?? txn.currentRV();
    const chunk = readChunk(this.ctx.cache, op.namespace, plan, sel, op.opts.limit, !op.page);
    const metadata: Record<string, unknown> = { resourceVersion: String(snapshotRV) };
    if (chunk.continueKey !== undefined) {
      metadata.continue = encodeContinue({ rv: snapshotRV, start: chunk.continueKey, issued: txn.now });
      if (chunk.remaining !== undefined) metadata.remainingItemCount = chunk.remaining;
    }
    const view = op.enc.view;
    // each stored object as this version (itself when stored so; converted for events.<domain>/v1 and HPA)
    const items = chunk.items.map((e) => this.view(e));
    if (op.page && (metadata.continue || op.opts.continue)) {
      // a streamed LIST's page (a whole list in its first page is an ordinary reply)
      const page: PageMeta = { resourceVersion: String(snapshotRV), items: items.length };
      if (metadata.continue) page.continue = metadata.continue as string;
      const head = {
        kind: this.ctx.def.listKind,
        apiVersion: this.apiVersion,
        metadata: { resourceVersion: page.resourceVersion },
      };
      // the first page sizes every matching entry of this snapshot (a Protobuf envelope's length comes first)
      const all = op.opts.continue ? undefined : () => this.matching(op.namespace, sel);
      const { body, size } = pageBody(items, op.enc, head, all);
      if (size !== undefined) page.size = size;
      return { code: 200, body, contentType: contentTypeOf(op.enc), page };
    }
    if (
      view?.as === 'Table' &&
      op.enc.format === 'json' &&
      !op.enc.pretty &&
      items.every((e) => e.apiVersion === this.apiVersion)
    ) {
      return {
        code: 200,
        body: tableJson(this.tableKind, items, metadata, view.groupVersion, view.includeObject, txn.now) + '\n',
        contentType: contentTypeOf(op.enc),
      };
    }
    if (view)
      return this.reply(
        renderView(
          this.tableKind,
          items.map((e) => e.obj),
          metadata,
          view,
          txn.now,
          true,
        ),
        op.enc,
      );
    const body = encodeEntries({ kind: this.ctx.def.listKind, apiVersion: this.apiVersion, metadata }, items, op.enc);
    return { code: 200, body, contentType: contentTypeOf(op.enc) };
  }

  /** The entries of the newest state a list with these selectors holds, as this version. */
  private *matching(namespace: string, sel: Selectors): Generator<Entry> {
    for (const [, e] of this.ctx.cache.scan(namespace, undefined)) if (matches(sel, e)) yield this.view(e);
  }

  /** Parsed selectors; a converted version's field labels are renamed to the stored field set's. */
  selectors(opts: { labelSelector?: string; fieldSelector?: string }): Selectors {
    const conv = this.ctx.conversion;
    if (!conv) return parseSelectors(opts, this.allowedFields);
    const sel = parseSelectors(opts, Object.keys(conv.fieldLabels));
    return { ...sel, field: renameFields(sel.field, conv.fieldLabels) };
  }

  /** An exact read at rv (resourceVersionMatch=Exact, or a continue token's snapshot) needs the
   * retained history from rv on; otherwise 410 Expired (list.ts historyExpired). */
  checkAvailable(rv: number, txn: Txn, continuing = false): void {
    this.checkNotTooLarge(rv, txn);
    if (rv < this.ctx.cache.oldestRV(txn.now)) throw historyExpired(continuing);
  }
}
