/**
 * Resource verbs on the front thread: each builds one actor operation from the request,
 * submits it and writes the actor's already-encoded bytes back. Never blocks on storage.
 */
import { errors, type Status } from '../api/status.js';
import { isRecord } from '../api/object.js';
import type { Body, DeleteOptions, Result } from '../actors/protocol.js';
import type { OpInput } from '../actors/pool.js';
import { bodyFormat, cborEnabled, isTruthy, toBody } from '../http/negotiation.js';
import { patchBody } from '../http/patch-request.js';
import { decodeRequestBody } from '../codec/body-decoder.js';
import { decodeBody } from '../codec/codec.js';
import { readBody, send, sendStatus } from '../http/exchange.js';
import type { BodyReader, Request, Services } from '../http/context.js';
import { serveWatch, submitWaitingForRV, type WrapSink } from './watch.js';
import { parseDuration } from '../api/duration.js';
import { checkUnsafeDelete, toDeleteOptions } from '../registry/deletion.js';
import { GZIP_THRESHOLD } from '../actors/pack.js';
import { evict } from './eviction.js';
import { typeKeyOf } from '../actors/routing.js';
import { firstPage, streamList, streamable, type ListOp } from './list-stream.js';
import { dryRun, listOptions, opEncoding, typeRef, writeOp } from '../http/request-ops.js';
import { headerQuoted, reply } from '../http/reply.js';
import { pinOf, retriedWrite } from '../http/pin.js';
import { servedByWebhookConversion } from './webhook-conversion.js';
import { actorEncoding, encodedOffActor, yamlReply } from '../http/yaml-reply.js';

/**
 * Submits the operation; the `timeout` query parameter (kubectl sends one on every request)
 * bounds how long the client waits: past it the reply is a 504 Timeout Status. The operation
 * itself is not cancelled (a write may still commit, as upstream); a YAML reply's encoding,
 * which runs here after the actor answered, stops at the same deadline.
 */
async function run(
  r: Request,
  s: Services,
  op: OpInput,
  done: (res: Result) => void | Promise<void> = (res) => {
    if (!retriedWrite(r, res)) reply(r, res);
  },
): Promise<void> {
  let limitMs: number | undefined;
  try {
    // validated before anything is submitted: a bad timeout must not leave a write behind
    limitMs = requestTimeoutMs(r.query.get('timeout'));
    // --request-timeout bounds every non-watch request; the parameter can only shorten it
    if (s.options.requestTimeoutMs > 0 && (limitMs === undefined || limitMs > s.options.requestTimeoutMs))
      limitMs = s.options.requestTimeoutMs;
  } catch (e) {
    return sendStatus(r.x, errorStatus(e), r.enc.pretty, r.enc);
  }
  const deadline = limitMs === undefined ? Infinity : performance.now() + limitMs;
  // YAML and pretty JSON are encoded off the shard actor, on the encoding thread (http/yaml-reply.ts)
  const wanted = op.enc;
  const offActor = encodedOffActor(wanted);
  if (offActor) op = { ...op, enc: actorEncoding(wanted) } as OpInput;
  const pending = op.op === 'get' || op.op === 'list' ? submitWaitingForRV(s, op) : s.pool.submit(op);
  let res: Result | 'timeout' | 'aborted';
  if (limitMs === undefined) res = await pending;
  else {
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<'timeout'>((resolve) => {
      timer = setTimeout(() => resolve('timeout'), limitMs);
    });
    res = await Promise.race([pending, timedOut]);
    clearTimeout(timer);
  }
  // an error passes through as it is (rendered, and a conflicting pinned write retried, by done)
  if (res !== 'timeout' && offActor) res = await yamlReply(r.x, res, wanted, deadline);
  if (res === 'timeout')
    sendStatus(
      r.x,
      errors.timeout(`request did not complete within requested timeout - context deadline exceeded`).status,
      r.enc.pretty,
      r.enc,
    );
  else if (res !== 'aborted') await done(res);
}

function requestTimeoutMs(v: string | null): number | undefined {
  if (v === null || v === '') return undefined;
  const ms = parseDuration(v);
  if (ms === undefined) throw errors.badRequest(`invalid timeout: "${v}": must be a duration such as 30s`);
  return ms > 0 ? ms : undefined;
}

/**
 * A GET of the newest state in plain JSON is answered from the front thread's read cache (the
 * actor-encoded bytes of the last committed change); a miss goes to the actor (404 and all).
 */
function servedFromCache(r: Request, s: Services): boolean {
  const { enc, info, query } = r;
  if (
    !s.readCache.servesGets ||
    info.subresource ||
    enc.format !== 'json' ||
    enc.pretty ||
    enc.view ||
    query.has('resourceVersion')
  )
    return false;
  const apiVersion = r.def.group ? `${r.def.group}/${r.def.version}` : r.def.version;
  const body = s.readCache.body(typeKeyOf(r.def.group, r.def.resource), info.namespace, info.name, apiVersion);
  if (body === undefined || (enc.gzip && body.byteLength >= GZIP_THRESHOLD)) return false;
  // a compact JSON body ends with a newline, as every serializer reply (cached with it)
  send(r.x, 200, 'application/json', body);
  return true;
}

/** Streaming subresources answered by the owning strategy whatever the method (no body needed). */
const CONNECT = new Set(['exec', 'attach', 'portforward', 'proxy']);

/** Dispatches a resource request by verb. */
export function handleResource(r: Request, s: Services): void {
  const { info, query } = r;
  const base = { type: typeRef(r), enc: opEncoding(r) };
  const ns = info.namespace;
  if (CONNECT.has(info.subresource) && info.verb !== 'get') {
    return void run(r, s, { ...base, op: 'get', namespace: ns, name: info.name });
  }
  if (info.subresource === 'eviction' && info.verb === 'create' && r.def.group === '' && r.def.resource === 'pods') {
    // budgets live in another type (maybe another shard): checked on the front thread
    return withBody(r, s, (body) => evict(r, s, body, dryRun(query)));
  }
  const parts = {
    withBody: (next: (b: Body) => Promise<void>) => withBody(r, s, next, false, info.verb === 'patch'),
    writeOpAs: (verb: 'create' | 'update', b: Body) => writeOp({ ...r, info: { ...info, verb } }, s, b),
    listOptions: () => listOptions(query),
    errorStatus,
    watch: (b: Parameters<typeof serveWatch>[2], wrap: WrapSink) => serveWatch(r, s, b, wrap),
    withDeleteOp: (submit: (op: OpInput) => Promise<void>) => withDeleteOp(r, s, submit),
    warn: (warnings: string[] | undefined) => {
      for (const w of warnings ?? []) r.x.headers.push(['Warning', `299 - ${headerQuoted(w)}`]);
    },
  };
  if (servedByWebhookConversion(r, s, parts)) return;
  if (info.verb === 'create' && r.def.group === '' && r.def.resource === 'bindings') {
    // upstream LegacyBindingREST: POST bindings is POST pods/<metadata.name>/binding, never stored
    return withBody(r, s, async (body) => run(r, s, await legacyBindingOp(r, s, body)));
  }
  switch (info.verb) {
    case 'get':
      if (servedFromCache(r, s)) return;
      return void run(r, s, {
        ...base,
        op: 'get',
        namespace: ns,
        name: info.name,
        resourceVersion: query.get('resourceVersion') ?? undefined,
      });
    case 'list':
      if (streamable(r)) {
        // the first page answers within the request's timeout; a list longer than a page then streams
        const op: ListOp = { ...base, op: 'list', namespace: ns, opts: listOptions(query) };
        return void run(r, s, firstPage(op), (first) => streamList(r, s, op, first)).catch((e) =>
          sendStatus(r.x, errorStatus(e), r.enc.pretty, r.enc),
        );
      }
      return void run(r, s, { ...base, op: 'list', namespace: ns, opts: listOptions(query) });
    case 'watch':
      return serveWatch(r, s, base);
    case 'create':
    case 'update':
    case 'patch':
      return withBody(r, s, (body) => run(r, s, writeOp(r, s, body)), false, info.verb === 'patch');
    case 'delete':
    case 'deletecollection':
      return withDeleteOp(r, s, (op) => run(r, s, op));
    default:
      throw errors.methodNotAllowed(`the server does not allow this method on the requested resource`);
  }
}

/** Reads a delete's or deletecollection's options (body and query), checks them, and hands on its operation. */
function withDeleteOp(r: Request, s: Services, submit: (op: OpInput) => Promise<void>): void {
  const { info, query } = r;
  withBody(
    r,
    s,
    async (body) => {
      const options = deleteOptions(body, query);
      const queryDryRun = dryRun(query);
      checkUnsafeDelete(
        options,
        queryDryRun,
        s.options.featureGates.AllowUnsafeMalformedObjectDeletion === true,
        info.verb === 'deletecollection',
      );
      if (options.ignoreStoreReadErrorWithClusterBreakingPotential) await authorizeUnsafeDelete(r, s);
      const write = { type: typeRef(r), enc: opEncoding(r), dryRun: queryDryRun || (options.dryRun?.length ?? 0) > 0 };
      if (info.verb === 'delete')
        return submit({ ...write, ...pinOf(r), op: 'delete', namespace: info.namespace, name: info.name, options });
      return submit({ ...write, op: 'deletecollection', namespace: info.namespace, opts: listOptions(query), options });
    },
    true,
  );
}

/** The create of `pods/<metadata.name>/binding` that a legacy `bindings` create stands for (writeOp's op, retargeted). */
async function legacyBindingOp(r: Request, s: Services, body: Body): Promise<OpInput> {
  const name = (await decodeRequestBody(body))?.metadata?.name;
  if (typeof name !== 'string' || !name)
    throw errors.invalid({ kind: 'Binding', name: '' }, [
      {
        reason: 'FieldValueRequired',
        message: 'Required value: name or generateName is required',
        field: 'metadata.name',
      },
    ]);
  const create = writeOp(r, s, body) as Extract<OpInput, { op: 'create' }>; // the verb is create
  return { ...create, type: { group: '', version: r.def.version, resource: 'pods', subresource: 'binding' }, name };
}

/** upstream: an unsafe delete also needs the verb `unsafe-delete-ignore-read-errors` on the resource */
async function authorizeUnsafeDelete(r: Request, s: Services): Promise<void> {
  const verb = 'unsafe-delete-ignore-read-errors';
  r.x.audit?.annotate(`apiserver.${s.options.apiDomain}/unsafe-delete-ignore-read-error`, '');
  const d = await s.authorize?.(r, verb);
  if (!d || d.decision === 'allow') return;
  const gr = r.def.group ? `${r.def.resource}.${r.def.group}` : r.def.resource;
  throw errors.forbidden(`${gr} "${r.info.name}" is forbidden: not permitted to do "${verb}", reason: ${d.reason}`, {
    group: r.def.group,
    kind: r.def.resource,
    name: r.info.name,
  });
}

/** Reads the body, then runs next; errors from next become Status replies. */
export function withBody(
  r: Request,
  s: Services,
  next: (body: Body) => Promise<void> | void,
  optional = false,
  patch = false,
): void {
  const format =
    optional || patch
      ? 'json'
      : bodyFormat(r.headers.contentType, r.def.custom ? undefined : s.protobufMediaType, cborEnabled(s.options));
  const read: BodyReader =
    r.body ?? ((done, fail) => readBody(r.x, s.options.maxRequestBodyBytes, r.headers.contentLength, done, fail));
  read(
    (buf) => {
      if (!optional && buf.length === 0)
        return sendStatus(r.x, errors.badRequest('request body must not be empty').status);
      Promise.resolve()
        .then(() => next(patch ? patchBody(r, buf) : optional ? optionsBody(r, s, buf) : toBody(format, buf)))
        .catch((e) => sendStatus(r.x, errorStatus(e), r.enc.pretty, r.enc));
    },
    (st) => sendStatus(r.x, st, r.enc.pretty, r.enc),
  );
}

function errorStatus(e: unknown) {
  return (e as { status?: unknown }).status ? (e as { status: Status }).status : errors.internal(String(e)).status;
}

/**
 * The body of a DELETE (DeleteOptions) in any encoding the server reads elsewhere: JSON, YAML,
 * Protobuf (the `k8s\0` envelope, custom resources included: the options are a meta type) and
 * CBOR when enabled; an empty body is no options. Another Content-Type is a 415.
 */
function optionsBody(r: Request, s: Services, buf: Buffer): Body {
  if (buf.length === 0) return toBody('json', buf);
  return toBody(bodyFormat(r.headers.contentType, s.protobufMediaType, cborEnabled(s.options)), buf);
}

function deleteOptions(body: Body | undefined, q: URLSearchParams): DeleteOptions {
  let o: Record<string, unknown> = {};
  const text = body?.text;
  if (body && body.contentType !== 'json') {
    const decoded: unknown = decodeBody(body);
    // decodeBody answers an object or throws its 400
    o = isRecord(decoded) ? decoded : {};
    if (o.kind !== undefined && o.kind !== 'DeleteOptions')
      throw errors.badRequest(`the body of a delete must be DeleteOptions, not ${String(o.kind)}`);
  } else if (text?.trim()) {
    try {
      o = JSON.parse(text);
    } catch (e) {
      throw errors.badRequest(`error decoding DeleteOptions: ${(e as Error).message}`);
    }
    if (!o || typeof o !== 'object' || Array.isArray(o)) throw errors.badRequest('DeleteOptions must be an object');
  }
  const grace = q.get('gracePeriodSeconds');
  if (grace !== null) o.gracePeriodSeconds = Number(grace);
  const policy = q.get('propagationPolicy');
  if (policy !== null) o.propagationPolicy = policy;
  if (isTruthy(q.get('orphanDependents'))) o.orphanDependents = true;
  if (isTruthy(q.get('ignoreStoreReadErrorWithClusterBreakingPotential')))
    o.ignoreStoreReadErrorWithClusterBreakingPotential = true;
  return toDeleteOptions(o);
}
