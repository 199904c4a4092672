/**
 * DELETE of one object or of a collection: DeleteOptions from the body (any encoding the
 * server reads) and the query, the unsafe-delete checks, then one actor operation.
 */
import { errors } from '../api/status.js';
import { isRecord } from '../api/object.js';
import type { Body, DeleteOptions } from '../actors/protocol.js';
import type { OpInput } from '../actors/pool.js';
import { isTruthy } from '../http/negotiation.js';
import { decodeBody } from '../codec/codec.js';
import type { Request, Services } from '../http/context.js';
import { checkUnsafeDelete, toDeleteOptions } from '../registry/deletion.js';
import { dryRun, listOptions, opEncoding, typeRef } from '../http/request-ops.js';
import { pinOf } from '../http/pin.js';
import { withBody } from './run.js';

/** Reads a delete's or deletecollection's options (body and query), checks them, and hands on its operation. */
export function withDeleteOp(r: Request, s: Services, submit: (op: OpInput) => Promise<void>): void {
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
