/**
 * conversion.strategy Webhook (upstream webhook_converter.go): a request in a version other
 * than the CRD's storage version is served by the storage version's store, with the objects
 * converted through a ConversionReview POSTed to the CRD's webhook (HTTPS): request bodies to
 * the storage version, replies (objects, list items in one batch) to the requested version.
 * The webhook's answer is checked (uid, count and order, apiVersion, metadata other than
 * labels and annotations unchanged); any failure is a 500 `conversion webhook for <gvk>
 * failed: <reason>`. Watches, patches, subresources and Table views use the None strategy.
 */
import { randomUUID } from 'node:crypto';
import type { Status } from '../api/status.js';
import type { Body, ListOptions, Result, TypeRef } from '../actors/protocol.js';
import type { OpInput } from '../actors/pool.js';
import { decodeBody } from '../codec/codec.js';
import { send, sendStatus } from '../http/exchange.js';
import { callWebhook, resolveTarget } from '../admission/webhook/client.js';
import { applyMergePatch } from '../patch/merge-patch.js';
import { applyJsonPatch } from '../patch/json-patch.js';
import type { CustomType } from '../registry/crd/types.js';
import type { Request, Services } from '../http/context.js';

const VERBS = new Set(['get', 'list', 'create', 'update', 'delete', 'patch']);
const PATCHES: Record<string, (doc: unknown, patch: unknown) => unknown> = {
  'application/merge-patch+json': applyMergePatch, 'application/json-patch+json': applyJsonPatch,
};
const TIMEOUT_SECONDS = 30;

class ConversionFailed extends Error {}

const bodyText = (b: string | Uint8Array): string => (typeof b === 'string' ? b : Buffer.from(b).toString('utf8'));

function failure(message: string): Status {
  return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason: 'InternalError', code: 500 } as Status;
}

const isObj = (v: unknown): v is Record<string, any> => !!v && typeof v === 'object' && !Array.isArray(v);

/** Metadata a webhook may change: labels and annotations only. */
function checkMetadata(before: any, after: any, i: number): void {
  const strip = (m: any) => { const { labels: _l, annotations: _a, ...rest } = isObj(m) ? m : {}; return JSON.stringify(Object.keys(rest).sort().map((k) => [k, rest[k]])); };
  if (strip(before.metadata) !== strip(after?.metadata)) {
    throw new ConversionFailed(`invalid metadata in converted object at index ${i}: only labels and annotations may be changed`);
  }
}

/** objects converted to apiVersion by the CRD's webhook (in order); throws ConversionFailed. */
async function convert(s: Services, t: CustomType, objects: any[], apiVersion: string): Promise<any[]> {
  const todo = objects.filter((o) => o.apiVersion !== apiVersion);
  if (!todo.length) return objects;
  const uid = randomUUID();
  const version = t.webhook!.reviewVersions.includes('v1') ? 'v1' : 'v1beta1';
  const review = { apiVersion: `${s.apiextensionsGroup ?? 'apiextensions.plat.io'}/${version}`, kind: 'ConversionReview', request: { uid, desiredAPIVersion: apiVersion, objects: todo } };
  let answer: any;
  try {
    answer = await callWebhook(resolveTarget(t.webhook!.clientConfig, s.readCache), review, TIMEOUT_SECONDS);
  } catch (e) {
    throw new ConversionFailed((e as Error).message);
  }
  const res = answer?.response;
  if (res?.uid !== uid) throw new ConversionFailed(`expected response uid ${JSON.stringify(uid)}, got ${JSON.stringify(res?.uid ?? '')}`);
  if (res.result?.status !== 'Success') throw new ConversionFailed(`conversion request failed: ${res.result?.message ?? 'no result'}`);
  const out: unknown[] = Array.isArray(res.convertedObjects) ? res.convertedObjects : [];
  if (out.length !== todo.length) throw new ConversionFailed(`returned ${out.length} objects, expected ${todo.length}`);
  out.forEach((o: any, i) => {
    if (o?.apiVersion !== apiVersion) throw new ConversionFailed(`invalid converted object at index ${i}: invalid apiVersion ${JSON.stringify(o?.apiVersion ?? '')}, expected ${JSON.stringify(apiVersion)}`);
    checkMetadata(todo[i], o, i);
  });
  let next = 0;
  return objects.map((o) => (o.apiVersion === apiVersion ? o : out[next++]));
}

/** Serves the request through conversion when the CRD converts by webhook; false: not such a request. */
/** What the resource handler lends: its body reader, write operation, list options and error rendering. */
export interface HandlerParts {
  withBody(next: (body: Body) => Promise<void>): void;
  writeOp(body: Body): OpInput;
  listOptions(): ListOptions;
  errorStatus(e: unknown): Status;
}

export function servedByWebhookConversion(r: Request, s: Services, h: HandlerParts): boolean {
  if (!r.def.custom || r.info.subresource || r.enc.view || !VERBS.has(r.info.verb)) return false;
  const patchWith = r.info.verb === 'patch' ? PATCHES[(r.headers.contentType ?? '').split(';')[0]!.trim()] : undefined;
  if (r.info.verb === 'patch' && !patchWith) return false;
  const t = s.customType?.(r.def.group, r.def.resource);
  if (!t?.webhook || t.storageVersion === r.def.version) return false;
  const gvk = (apiVersion: string) => `${apiVersion}, Kind=${t.kind}`;
  const requested = `${r.def.group}/${r.def.version}`;
  const stored = `${r.def.group}/${t.storageVersion}`;
  const type: TypeRef = { group: r.def.group, version: t.storageVersion, resource: r.def.resource };
  const enc = { format: 'json' as const, pretty: r.enc.pretty };
  const fail = (e: unknown, from: string) => sendStatus(r.x, e instanceof ConversionFailed ? failure(`conversion webhook for ${gvk(from)} failed: ${e.message}`) : h.errorStatus(e), r.enc.pretty, r.enc);
  /** the storage version's reply, converted to the requested version */
  const answer = async (res: Result): Promise<void> => {
    if ('error' in res || !('code' in res)) return res && 'error' in res ? sendStatus(r.x, res.error, r.enc.pretty, r.enc) : undefined;
    const body = JSON.parse(bodyText(res.body));
    if (Array.isArray(body.items)) {
      body.items = await convert(s, t, body.items, requested);
      body.apiVersion = requested;
    } else if (body.kind === t.kind) Object.assign(body, (await convert(s, t, [body], requested))[0]);
    send(r.x, res.code, 'application/json', JSON.stringify(body));
  };
  const submit = (op: OpInput) => s.pool.submit(op).then(answer).catch((e) => fail(e, stored));
  const ns = r.info.namespace;
  if (r.info.verb === 'get') void submit({ type, enc, op: 'get', namespace: ns, name: r.info.name });
  else if (r.info.verb === 'list') void submit({ type, enc, op: 'list', namespace: ns, opts: h.listOptions() });
  else if (r.info.verb === 'delete') void submit({ type, enc, op: 'delete', namespace: ns, name: r.info.name, dryRun: false, options: {} });
  else if (patchWith) {
    // the patch applies to the object as the requested version shows it; the result is written as an update
    h.withBody(async (body) => {
      const res = await s.pool.submit({ type, enc, op: 'get', namespace: ns, name: r.info.name });
      if ('error' in res || !('code' in res)) return void (res && 'error' in res ? sendStatus(r.x, res.error, r.enc.pretty, r.enc) : undefined);
      let next: any;
      try {
        const [current] = await convert(s, t, [JSON.parse(bodyText(res.body))], requested);
        [next] = await convert(s, t, [patchWith(current, JSON.parse(body.text))], stored);
      } catch (e) { return fail(e, stored); }
      const update = { type, enc, op: 'update', namespace: ns, name: r.info.name, dryRun: r.query.has('dryRun'), body: { text: JSON.stringify(next), contentType: 'json' } };
      await submit(update as OpInput);
    });
  } else {
    h.withBody(async (body) => {
      const obj = decodeBody(body);
      let converted: any;
      try { [converted] = await convert(s, t, [obj], stored); } catch (e) { return fail(e, isObj(obj) ? String(obj.apiVersion) : requested); }
      const op = h.writeOp({ text: JSON.stringify(converted), contentType: 'json' });
      await submit({ ...op, type, enc } as OpInput);
    });
  }
  return true;
}
