/**
 * The admission chain (upstream's mutating then validating admission), on the front thread,
 * after authorization and before the write reaches its actor.
 *
 * Why here: mutating webhooks are HTTP calls, and a shard actor must never wait on the network
 * (it owns a whole shard's writes). So the front thread asks the owning actor for the object
 * the write would store — the same operation as a dry run, which runs decoding, defaulting,
 * the patch merge and the strategy — runs the plugins on it, then submits the write: the
 * original request when nothing changed it, else the mutated object as a create, or as an
 * update carrying the previewed resourceVersion (a concurrent write in between is a 409
 * Conflict, never a lost update). Validating plugins see the final object (a mutated object is
 * previewed once more). Dry runs take the same path; the final write is then a dry run too.
 * A request no plugin handles skips all of this (no extra read, no extra actor trip).
 */
import { StatusError, toStatus } from '../api/status.js';
import { bodyText } from '../actors/pack.js';
import type { Result } from '../actors/protocol.js';
import type { OpInput } from '../actors/pool.js';
import { readBody, sendStatus } from '../http/exchange.js';
import type { BodyReader, Request, Services } from '../http/context.js';
import { writeBody, writeOp } from '../http/request-ops.js';
import { isApplyPatch } from '../http/patch-request.js';
import { isRecord } from '../api/object.js';
import { decodeRequestBody } from '../codec/body-decoder.js';
import type { UserInfo } from '../api/user.js';
import type { AdmissionAttributes, AdmissionPlugin, Operation, RequestAttributes } from './attributes.js';
import { pinTo, retried } from '../http/pin.js';

const JSON_ENC = { format: 'json' as const, pretty: false };

type KindRef = RequestAttributes['kind'];
/** Each definition's own kind for the attributes, made once (frozen: shared by every request to it). */
const KINDS = new WeakMap<object, KindRef>();
function kindOf(def: { group: string; version: string; kind: string }): KindRef {
  let k = KINDS.get(def);
  if (!k) KINDS.set(def, (k = Object.freeze({ group: def.group, version: def.version, kind: def.kind })));
  return k;
}
/** streaming subresources: CONNECT (not admitted here, see docs/admission.md) */
const CONNECT = new Set(['exec', 'attach', 'portforward', 'proxy']);
/** server-set metadata a create must not carry */
const SERVER_SET = ['uid', 'resourceVersion', 'creationTimestamp', 'generation', 'managedFields', 'selfLink'];

export class AdmissionChain {
  private readonly mutating: AdmissionPlugin[];
  private readonly validating: AdmissionPlugin[];

  constructor(
    plugins: AdmissionPlugin[],
    private readonly services: Services,
    private readonly anonymous: UserInfo,
  ) {
    this.mutating = plugins.filter((p) => p.admit);
    this.validating = plugins.filter((p) => p.validate);
  }

  /** The request's admission attributes, or undefined for requests admission never sees. */
  requestAttributes(r: Request): RequestAttributes | undefined {
    const { info, def } = r;
    const operation = operationOf(info.verb, info.subresource);
    if (!operation) return undefined;
    const sub = info.subresource ? def.subresources.find((s) => s.name === info.subresource) : undefined;
    const kind = sub
      ? { group: sub.group ?? def.group, version: sub.version ?? def.version, kind: sub.kind ?? def.kind }
      : kindOf(def);
    return {
      operation,
      group: def.group,
      version: def.version,
      resource: def.resource,
      subresource: info.subresource,
      kind,
      namespace: info.namespace,
      name: info.name,
      namespaced: def.namespaced,
      dryRun: r.query.has('dryRun'),
      user: r.user ?? this.anonymous,
    };
  }

  /** Whether any plugin handles the request (cheap: no body, no object). */
  applies(r: Request): boolean {
    const a = this.requestAttributes(r);
    if (!a) return false;
    // an apply may create the object: then it is admitted as a CREATE (see isApplyCreate)
    return this.handled(a) || (!a.subresource && isApplyPatch(r) && this.handled({ ...a, operation: 'CREATE' }));
  }

  private handled(a: RequestAttributes): boolean {
    for (const p of this.mutating) if (p.handles(a)) return true;
    for (const p of this.validating) if (p.handles(a)) return true;
    return false;
  }

  /** Reads the body, admits, then hands the (possibly rewritten) request on; a refusal is its Status. */
  admit(r: Request, next: (r: Request) => void): void {
    const read: BodyReader =
      r.body ??
      ((done, fail) => readBody(r.x, this.services.options.maxRequestBodyBytes, r.headers.contentLength, done, fail));
    read(
      (buf) => {
        this.run(r, buf)
          .then((out) => {
            if (r.x.aborted) return;
            for (const w of out.warnings)
              r.x.headers.push(['Warning', `299 - ${JSON.stringify(w).replace(/[^\x20-\x7e]/g, '?')}`]);
            for (const [k, v] of Object.entries(out.annotations)) r.x.audit?.annotate(k, v);
            next(out.request);
          })
          .catch((e) => retried(r, e) || sendStatus(r.x, toStatus(e), r.enc.pretty, r.enc));
      },
      (st) => sendStatus(r.x, st, r.enc.pretty, r.enc),
    );
  }

  private async run(
    r: Request,
    buf: Buffer,
  ): Promise<{ request: Request; warnings: string[]; annotations: Record<string, string> }> {
    const base = this.requestAttributes(r)!;
    const a: AdmissionAttributes = {
      ...base,
      object: undefined,
      oldObject: undefined,
      options: optionsOf(r, base.operation),
      warnings: [],
      annotations: {},
    };
    const original: Request = { ...r, body: (done) => done(buf) };
    await this.load(a, r, buf);
    if (isApplyCreate(r, a)) {
      // upstream patcher.applyAdmission: an apply that finds no object is admitted as a CREATE
      a.operation = 'CREATE';
      a.options = optionsOf(r, 'CREATE');
    }
    let changed = false;
    if (a.operation !== 'DELETE') {
      for (const p of this.mutating) if (p.handles(a) && (await p.admit!(a))) changed = true;
    }
    const validating = this.validating.filter((p) => p.handles(a));
    if (changed && validating.length && a.object !== undefined && !a.subresource)
      a.object = pinned(r, await this.preview(rewrite(r, a)));
    for (const p of validating) await p.validate!(a);
    return { request: changed ? rewrite(r, a) : original, warnings: a.warnings, annotations: a.annotations };
  }

  /** The object the write would store (a dry run of it) and the stored one. */
  private async load(a: AdmissionAttributes, r: Request, buf: Buffer): Promise<void> {
    if (a.operation !== 'CREATE') a.oldObject = pinned(r, await this.stored(r));
    if (a.operation === 'DELETE') return;
    if (a.operation === 'CREATE' && a.subresource) {
      // a POST to a subresource (binding, eviction): the object is the body itself, in any encoding the handler takes
      try {
        a.object = await decodeRequestBody(writeBody(r, this.services, buf));
      } catch {
        a.object = undefined;
      }
      return;
    }
    a.object = await this.preview({ ...r, body: (done) => done(buf) }, buf);
    // an update stores its body (its resourceVersion is the client's); a patch's preview is of the stored version
    if (r.info.verb === 'patch') pinned(r, a.object);
    if (a.operation === 'CREATE' && !a.name) a.name = '';
  }

  /** Runs the write as a dry run and returns the object it would store; its failure is the request's. */
  private async preview(r: Request, buf?: Buffer): Promise<unknown> {
    const bytes = buf ?? (await new Promise<Buffer>((done, fail) => r.body!(done, (st) => fail(st))));
    // unpinned: a preview that finds the object moved must restart the attempt (pinTo), not answer 409
    const op: OpInput = {
      ...writeOp({ ...r, pin: undefined }, this.services, writeBody(r, this.services, bytes)),
      enc: JSON_ENC,
      dryRun: true,
    } as OpInput;
    return parsed(await this.services.pool.submit(op));
  }

  private async stored(r: Request): Promise<unknown> {
    const type = {
      group: r.def.group,
      version: r.def.version,
      resource: r.def.resource,
      ...(r.info.subresource === 'scale' ? { subresource: 'scale' } : {}),
    };
    const res = await this.services.pool.submit({
      op: 'get',
      type,
      enc: JSON_ENC,
      namespace: r.info.namespace,
      name: r.info.name,
    });
    return 'code' in res ? JSON.parse(bodyText(res.body)) : undefined;
  }
}

/** The object a check looks at, pinned (see src/http/pin.ts). */
function pinned<T>(r: Request, obj: T): T {
  pinTo(r, obj);
  return obj;
}

function operationOf(verb: string, subresource: string): Operation | undefined {
  if (CONNECT.has(subresource)) return undefined;
  if (verb === 'create') return 'CREATE';
  if (verb === 'update' || verb === 'patch') return 'UPDATE';
  if (verb === 'delete') return 'DELETE';
  return undefined;
}

/** A server-side apply (PATCH, apply content type) of an object that does not exist yet. */
function isApplyCreate(r: Request, a: AdmissionAttributes): boolean {
  return !a.subresource && a.oldObject === undefined && a.object !== undefined && isApplyPatch(r);
}

function optionsOf(r: Request, op: Operation): Record<string, unknown> {
  const kind =
    op === 'CREATE'
      ? 'CreateOptions'
      : op === 'UPDATE'
        ? r.info.verb === 'patch'
          ? 'PatchOptions'
          : 'UpdateOptions'
        : 'DeleteOptions';
  // apiVersion: meta.<domain>/v1, filled in by the webhook plugin (which knows the domain)
  const o: Record<string, unknown> = { kind };
  const fm = r.query.get('fieldManager');
  if (fm) o.fieldManager = fm;
  if (r.query.getAll('dryRun').length) o.dryRun = ['All'];
  return o;
}

function parsed(res: Result): unknown {
  if ('error' in res) throw new StatusError(res.error);
  if (!('code' in res)) return undefined;
  return JSON.parse(bodyText(res.body));
}

/** The write carrying the admitted object: a create, or an update at the previewed resourceVersion. */
function rewrite(r: Request, a: AdmissionAttributes): Request {
  const obj = structuredClone(a.object);
  const applied = isApplyPatch(r);
  if (a.operation === 'CREATE' && !a.subresource && isRecord(obj) && isRecord(obj.metadata))
    for (const f of SERVER_SET) if (!(applied && f === 'managedFields')) delete obj.metadata[f];
  const bytes = Buffer.from(JSON.stringify(obj));
  const verb = a.operation === 'CREATE' ? 'create' : 'update';
  return {
    ...r,
    ...(applied ? { appliedFields: true as const } : {}),
    info: { ...r.info, verb },
    headers: { ...r.headers, contentType: 'application/json', contentLength: bytes.length },
    body: (done) => done(bytes),
  };
}
