/**
 * List reads: resourceVersion rules, chunking with continue tokens, selectors.
 * Implements the spec's "resourceVersion semantics for list" table.
 */
import { errors, type StatusError } from '../api/status.js';
import { isRecord } from '../api/object.js';
import type { ListOptions } from './ops.js';
import type { Entry, TypeCache } from '../storage/cacher/type-cache.js';
import { parseLabelSelector, SelectorError, type LabelSelector } from '../api/selectors.js';
import { parseFieldSelector, type FieldSelector } from '../api/field-selectors.js';

export interface ContinueToken {
  rv: number;
  start: string;
  issued: number;
}

export function encodeContinue(t: ContinueToken): string {
  return Buffer.from(JSON.stringify({ v: 'meta.plat.io/v1', rv: t.rv, start: t.start, t: t.issued })).toString(
    'base64url',
  );
}

/**
 * The 410 of a read at a version older than the retained history, with upstream's etcd3
 * messages: a continue that cannot be resumed gets `continueExpired` (no fresh token is offered).
 */
export function historyExpired(continuing: boolean): StatusError {
  return errors.gone(
    continuing
      ? 'The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter.'
      : 'The resourceVersion for the provided list is too old.',
  );
}

export function decodeContinue(s: string, now: number, ttlMs: number): ContinueToken {
  let t: unknown;
  try {
    t = JSON.parse(Buffer.from(s, 'base64url').toString('utf8'));
  } catch {
    throw errors.badRequest('continue key is not valid: illegal base64 data or JSON');
  }
  if (!isRecord(t) || typeof t.rv !== 'number' || typeof t.start !== 'string' || typeof t.t !== 'number') {
    throw errors.badRequest(
      'continue key is not valid: incorrect encoded start resourceVersion (version meta.plat.io/v1)',
    );
  }
  if (now - t.t > ttlMs) {
    throw errors.gone(
      'The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.',
    );
  }
  return { rv: t.rv, start: t.start, issued: t.t };
}

export function parseRV(s: string, what = 'resourceVersion'): number {
  if (!/^[0-9]+$/.test(s)) throw errors.badRequest(`invalid ${what}: "${s}"`);
  return Number(s);
}

export interface Selectors {
  label: LabelSelector;
  field: FieldSelector;
}

export function parseSelectors(opts: ListOptions, allowedFields: readonly string[]): Selectors {
  try {
    const label = parseLabelSelector(opts.labelSelector ?? '');
    const field = parseFieldSelector(opts.fieldSelector ?? '');
    for (const f of field.fieldNames()) {
      if (!allowedFields.includes(f)) throw new SelectorError(`field label not supported: ${f}`);
    }
    return { label, field };
  } catch (e) {
    if (e instanceof SelectorError) throw errors.badRequest(e.message);
    throw e;
  }
}

export function matches(sel: Selectors, e: Pick<Entry, 'labels' | 'fields'>): boolean {
  return (sel.label.empty || sel.label.matches(e.labels)) && (sel.field.empty || sel.field.matches(e.fields));
}

/** Which snapshot a list reads: undefined = newest committed state; number = exact revision. */
export interface ListPlan {
  atRV: number | undefined;
  after: string | undefined;
  notOlderThan?: number;
}

/** Applies the list resourceVersion table; throws the spec's 400/410 for invalid combinations. */
export function planList(opts: ListOptions, now: number, ttlMs: number): ListPlan {
  const rv = opts.resourceVersion;
  const match = opts.resourceVersionMatch;
  const hasRV = rv !== undefined && rv !== '';
  if (match && !hasRV) throw errors.badRequest('resourceVersionMatch is forbidden unless resourceVersion is provided');
  if (match && match !== 'Exact' && match !== 'NotOlderThan') {
    throw errors.badRequest(
      `resourceVersionMatch: Unsupported value: "${match}": supported values: "Exact", "NotOlderThan"`,
    );
  }
  if (opts.continue) {
    if (match) throw errors.badRequest('resourceVersionMatch is forbidden when continue is provided');
    if (hasRV && rv !== '0') throw errors.badRequest('specifying resource version is not allowed when using continue');
    const t = decodeContinue(opts.continue, now, ttlMs);
    return { atRV: t.rv, after: t.start };
  }
  if (!hasRV) return { atRV: undefined, after: undefined };
  const n = parseRV(rv!);
  if (match === 'Exact') {
    if (n === 0) throw errors.badRequest('resourceVersionMatch "Exact" is forbidden for resourceVersion "0"');
    return { atRV: n, after: undefined };
  }
  if (n === 0) return { atRV: undefined, after: undefined };
  if (match === 'NotOlderThan' || !opts.limit) return { atRV: undefined, after: undefined, notOlderThan: n };
  return { atRV: n, after: undefined };
}

export interface Chunk {
  items: Entry[];
  continueKey?: string;
  remaining?: number;
}

/** Collects one chunk of matching entries from the snapshot. */
/** countRemaining: scan past the page to count what is left (remainingItemCount); streamed pages skip it. */
export function readChunk(
  cache: TypeCache,
  namespace: string,
  plan: ListPlan,
  sel: Selectors,
  limit: number | undefined,
  countRemaining = true,
): Chunk {
  const items: Entry[] = [];
  const filtered = !sel.label.empty || !sel.field.empty;
  let lastKey: string | undefined;
  let more = false;
  let remaining = 0;
  for (const [k, e] of cache.scan(namespace, plan.after, plan.atRV)) {
    if (!matches(sel, e)) continue;
    if (limit && items.length >= limit) {
      more = true;
      if (filtered || !countRemaining) break;
      // unfiltered: what is left is a difference of indexes unless keys changed since the snapshot
      const counted =
        remaining === 0 && lastKey !== undefined ? cache.countAfter(namespace, lastKey, plan.atRV) : undefined;
      if (counted !== undefined) {
        remaining = counted;
        break;
      }
      remaining++;
      continue;
    }
    items.push(e);
    lastKey = k;
  }
  if (!more) return { items };
  return { items, continueKey: lastKey, remaining: filtered || !countRemaining ? undefined : remaining };
}
