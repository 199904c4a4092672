/**
 * One ConversionReview round trip (upstream webhook_converter.go): objects POSTed to a CRD's
 * conversion webhook (HTTPS, `webhook.clientConfig`), the answer checked (uid, count and order,
 * apiVersion, metadata other than labels and annotations unchanged). Any failure throws
 * ConversionFailed; callers render it as `conversion webhook for <gvk> failed: <reason>`.
 */
import { randomUUID } from 'node:crypto';
import { errors, type Status } from '../api/status.js';
import { callWebhook, resolveTarget } from '../http/webhook-client.js';
import type { CustomType } from '../registry/crd/types.js';
import type { Services } from '../http/context.js';

const TIMEOUT_SECONDS = 30;

export class ConversionFailed extends Error {}

export type Obj = Record<string, unknown> & { apiVersion?: unknown; metadata?: unknown };

export const isObj = (v: unknown): v is Obj => !!v && typeof v === 'object' && !Array.isArray(v);

/** The 500 a failed conversion answers with (the message names the version converted from). */
export function conversionFailure(t: CustomType, from: string, e: ConversionFailed): Status {
  const message = `conversion webhook for ${from}, Kind=${t.kind} failed: ${e.message}`;
  return errors.internalAs(message).status;
}

/** Metadata a webhook may change: labels and annotations only. */
function checkMetadata(before: Obj, after: Obj, i: number): void {
  const strip = (m: unknown) => {
    const { labels: _l, annotations: _a, ...rest } = isObj(m) ? m : {};
    return JSON.stringify(
      Object.keys(rest)
        .sort()
        .map((k) => [k, rest[k]]),
    );
  };
  if (strip(before.metadata) !== strip(after.metadata)) {
    throw new ConversionFailed(
      `invalid metadata in converted object at index ${i}: only labels and annotations may be changed`,
    );
  }
}

interface ReviewResponse {
  uid?: unknown;
  result?: { status?: unknown; message?: unknown };
  convertedObjects?: unknown;
}

/** objects converted to apiVersion by the CRD's webhook, in order (those already there are not sent). */
export async function convertObjects(s: Services, t: CustomType, objects: Obj[], apiVersion: string): Promise<Obj[]> {
  const todo = objects.filter((o) => o.apiVersion !== apiVersion);
  if (!todo.length || !t.webhook) return objects;
  const uid = randomUUID();
  const version = t.webhook.reviewVersions.includes('v1') ? 'v1' : 'v1beta1';
  const review = {
    apiVersion: `${s.apiextensionsGroup ?? 'apiextensions.plat.io'}/${version}`,
    kind: 'ConversionReview',
    request: { uid, desiredAPIVersion: apiVersion, objects: todo },
  };
  let answer: unknown;
  try {
    answer = await callWebhook(resolveTarget(t.webhook.clientConfig, s.readCache), review, TIMEOUT_SECONDS);
  } catch (e) {
    throw new ConversionFailed((e as Error).message);
  }
  const res = (isObj(answer) && isObj(answer.response) ? answer.response : {}) as ReviewResponse;
  if (res.uid !== uid)
    throw new ConversionFailed(`expected response uid ${JSON.stringify(uid)}, got ${JSON.stringify(res.uid ?? '')}`);
  if (res.result?.status !== 'Success')
    throw new ConversionFailed(`conversion request failed: ${String(res.result?.message ?? 'no result')}`);
  const out: unknown[] = Array.isArray(res.convertedObjects) ? res.convertedObjects : [];
  if (out.length !== todo.length) throw new ConversionFailed(`returned ${out.length} objects, expected ${todo.length}`);
  const converted = out.map((o, i): Obj => {
    const got = isObj(o) ? o.apiVersion : undefined;
    if (!isObj(o) || got !== apiVersion)
      throw new ConversionFailed(
        `invalid converted object at index ${i}: invalid apiVersion ${JSON.stringify(got ?? '')}, expected ${JSON.stringify(apiVersion)}`,
      );
    checkMetadata(todo[i]!, o, i);
    return o;
  });
  let next = 0;
  return objects.map((o) => (o.apiVersion === apiVersion ? o : converted[next++]!));
}

/** One object converted (see convertObjects). */
export async function convertObject(s: Services, t: CustomType, obj: Obj, apiVersion: string): Promise<Obj> {
  return (await convertObjects(s, t, [obj], apiVersion))[0]!;
}
