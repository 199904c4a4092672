/**
 * The writes with a body: create, update and patch (one actor operation each, admission and
 * the pre-write checks having run in the chain), and the legacy `bindings` create.
 */
import { errors } from '../api/status.js';
import type { Body } from '../actors/protocol.js';
import type { OpInput } from '../actors/pool.js';
import { decodeRequestBody } from '../codec/body-decoder.js';
import type { Request, Services } from '../http/context.js';
import { writeOp } from '../http/request-ops.js';
import { run, withBody } from './run.js';

/** A create, update or patch: the body read in its format, then one actor operation. */
export function serveWrite(r: Request, s: Services): void {
  withBody(r, s, (body) => run(r, s, writeOp(r, s, body)), false, r.info.verb === 'patch');
}

/** upstream LegacyBindingREST: POST bindings is POST pods/<metadata.name>/binding, never stored */
export function serveLegacyBinding(r: Request, s: Services): void {
  withBody(r, s, async (body) => run(r, s, await legacyBindingOp(r, s, body)));
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
