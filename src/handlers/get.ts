/**
 * GET of one object: the newest state in plain JSON from the front thread's read cache, else
 * the actor's read (a resourceVersion, another encoding, a subresource view, a miss).
 */
import { send } from '../http/exchange.js';
import type { Request, Services } from '../http/context.js';
import type { ResourceDef } from '../registry/types.js';
import { GZIP_THRESHOLD } from '../actors/pack.js';
import { typeKeyOf } from '../actors/routing.js';
import { opEncoding, typeRef } from '../http/request-ops.js';
import { run } from './run.js';

/** Per served definition: the read cache's type key and the apiVersion a GET asks for (built once). */
const CACHE_KEYS = new WeakMap<ResourceDef, { typeKey: string; apiVersion: string }>();

function cacheKeyOf(def: ResourceDef): { typeKey: string; apiVersion: string } {
  let k = CACHE_KEYS.get(def);
  if (!k) {
    const apiVersion = def.group ? `${def.group}/${def.version}` : def.version;
    CACHE_KEYS.set(def, (k = { typeKey: typeKeyOf(def.group, def.resource), apiVersion }));
  }
  return k;
}

/**
 * A GET of the newest state in plain JSON is answered from the front thread's read cache (the
 * actor-encoded bytes of the last committed change); a miss goes to the actor (404 and all).
 */
export function servedFromCache(r: Request, s: Services): boolean {
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
  const { typeKey, apiVersion } = cacheKeyOf(r.def);
  const body = s.readCache.body(typeKey, info.namespace, info.name, apiVersion);
  if (body === undefined || (enc.gzip && body.byteLength >= GZIP_THRESHOLD)) return false;
  // a compact JSON body ends with a newline, as every serializer reply (cached with it)
  send(r.x, 200, 'application/json', body);
  return true;
}

/** The actor's read of one object (after the read cache missed or could not answer). */
export function serveGet(r: Request, s: Services): void {
  void run(r, s, {
    type: typeRef(r),
    enc: opEncoding(r),
    op: 'get',
    namespace: r.info.namespace,
    name: r.info.name,
    resourceVersion: r.query.get('resourceVersion') ?? undefined,
  });
}
