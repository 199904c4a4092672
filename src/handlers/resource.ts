/**
 * Resource requests on the front thread, dispatched by verb: each verb's handler (get.ts,
 * list.ts, watch.ts, write.ts, delete.ts) builds one actor operation from the request, submits
 * it and writes the actor's already-encoded bytes back (run.ts). Subresources with handlers of
 * their own (connect, eviction, bindings, webhook conversion) are recognised first. Never blocks on storage.
 */
import { errors } from '../api/status.js';
import type { Body } from '../actors/protocol.js';
import type { OpInput } from '../actors/pool.js';
import type { Request, Services } from '../http/context.js';
import { serveWatch, type WrapSink } from './watch.js';
import { evict } from './eviction.js';
import { dryRun, listOptions, opEncoding, typeRef, writeOp } from '../http/request-ops.js';
import { headerQuoted } from '../http/reply.js';
import { servedByWebhookConversion } from './webhook-conversion.js';
import { errorStatus, run, withBody } from './run.js';
import { serveGet, servedFromCache } from './get.js';
import { serveList } from './list.js';
import { serveLegacyBinding, serveWrite } from './write.js';
import { withDeleteOp } from './delete.js';

/** Streaming subresources answered by the owning strategy whatever the method (no body needed). */
const CONNECT = new Set(['exec', 'attach', 'portforward', 'proxy']);

/**
 * Dispatches a resource request by verb. Hot path first: a built-in resource's plain GET is
 * answered from the read cache before anything else is built for the request (a custom
 * resource's may need webhook conversion: checked below).
 */
export function handleResource(r: Request, s: Services): void {
  const { info, query } = r;
  if (info.verb === 'get' && !r.def.custom && servedFromCache(r, s)) return;
  if (CONNECT.has(info.subresource) && info.verb !== 'get') {
    const op = { type: typeRef(r), enc: opEncoding(r), op: 'get', namespace: info.namespace, name: info.name } as const;
    return void run(r, s, op);
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
    return serveLegacyBinding(r, s);
  }
  if (info.verb === 'get' && r.def.custom && servedFromCache(r, s)) return;
  const verb = VERBS[info.verb];
  if (!verb) throw errors.methodNotAllowed(`the server does not allow this method on the requested resource`);
  verb(r, s);
}

/** One handler per verb (get.ts, list.ts, watch.ts, write.ts, delete.ts). */
const VERBS: Record<string, ((r: Request, s: Services) => void) | undefined> = {
  get: serveGet,
  list: serveList,
  watch: (r, s) => serveWatch(r, s, { type: typeRef(r), enc: opEncoding(r) }),
  create: serveWrite,
  update: serveWrite,
  patch: serveWrite,
  delete: (r, s) => withDeleteOp(r, s, (op) => run(r, s, op)),
  deletecollection: (r, s) => withDeleteOp(r, s, (op) => run(r, s, op)),
};
