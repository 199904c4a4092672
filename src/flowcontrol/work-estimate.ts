/**
 * How many seats a request occupies in API Priority and Fairness (upstream's list work
 * estimator): a LIST (or a WATCH that asks for initial events) costs one seat per 100 objects it
 * is expected to process, from 1 to 10 seats and no more than its priority level's `maxSeats`.
 * The objects processed are the stored objects of the resource (all namespaces, as upstream's
 * object count) when the list is served from the cache (no `limit`, or `resourceVersion=0`),
 * twice the limit when it is paged from storage, the count plus the limit when a paged list
 * also filters by selector. A write (create, update, patch, delete) of a resource with 10 or
 * more watchers (upstream's mutating work estimator) also pays for the events it fans out: one
 * final seat per 10 watchers, held 5 ms per seat after it is answered (capped at the level's
 * maximum seats, the same work held longer). Everything else costs one seat.
 */
import type { RequestInfo } from '../http/request-info.js';

export const MINIMUM_SEATS = 1;
export const MAXIMUM_SEATS_LIMIT = 10;
export const OBJECTS_PER_SEAT = 100;
export const WATCHES_PER_SEAT = 10;
export const EVENT_ADDITIONAL_MS = 5;

/** What a request costs: seats while it runs, and seats held for a while after it is answered. */
export interface WorkEstimate {
  initialSeats: number;
  finalSeats: number;
  additionalLatencyMs: number;
}

export interface Counts {
  objects(group: string, resource: string): number;
  watchers(group: string, resource: string): number;
}

const MUTATING = new Set(['create', 'update', 'patch', 'delete']);

/** The estimate of most requests (every get), shared: estimates are read, never modified. */
const ONE_SEAT: WorkEstimate = Object.freeze({ initialSeats: MINIMUM_SEATS, finalSeats: 0, additionalLatencyMs: 0 });

/** The estimate of a request in a level whose widest request is `maxSeats` (at most 10). */
export function estimateWork(
  info: RequestInfo,
  query: URLSearchParams,
  counts: Counts,
  maxSeats: number,
): WorkEstimate {
  const cap = Math.max(MINIMUM_SEATS, Math.min(maxSeats, MAXIMUM_SEATS_LIMIT));
  if (info.isResourceRequest && MUTATING.has(info.verb)) {
    const watchers = counts.watchers(info.apiGroup, info.resource);
    if (watchers < WATCHES_PER_SEAT) return ONE_SEAT;
    const seats = Math.ceil(watchers / WATCHES_PER_SEAT);
    const finalSeats = Math.min(seats, cap);
    return { initialSeats: MINIMUM_SEATS, finalSeats, additionalLatencyMs: (seats * EVENT_ADDITIONAL_MS) / finalSeats };
  }
  const initialSeats = Math.min(cap, estimateSeats(info, query, counts.objects));
  return initialSeats === MINIMUM_SEATS ? ONE_SEAT : { initialSeats, finalSeats: 0, additionalLatencyMs: 0 };
}

/**
 * The width of a request; `objectCount(group, resource)` is the number of stored objects of the
 * resource (0 when unknown: the minimum). A query that does not parse costs the maximum.
 */
export function estimateSeats(
  info: RequestInfo,
  query: URLSearchParams,
  objectCount: (group: string, resource: string) => number,
): number {
  if (!info.isResourceRequest || (info.verb !== 'list' && info.verb !== 'watch')) return MINIMUM_SEATS;
  // a list or watch of one object by name is a get in the storage layer
  const fieldSelector = query.get('fieldSelector') ?? '';
  if (info.name !== '' || /(^|,)\s*metadata\.name\s*==?/.test(fieldSelector)) return MINIMUM_SEATS;
  if (info.verb === 'watch' && query.get('sendInitialEvents') !== 'true') return MINIMUM_SEATS;
  const limitText = query.get('limit');
  const limit = limitText === null || limitText === '' ? 0 : Number(limitText);
  if (!Number.isInteger(limit)) return MAXIMUM_SEATS_LIMIT;
  const stored = objectCount(info.apiGroup, info.resource);
  const rv = query.get('resourceVersion') ?? '';
  const fromStorage = info.verb !== 'watch' && ((limit > 0 && rv !== '0') || (query.get('continue') ?? '') !== '');
  const page = limit > 0 && limit < stored ? limit : stored;
  let objects: number;
  if (!fromStorage) objects = stored;
  else if (fieldSelector !== '' || (query.get('labelSelector') ?? '') !== '') objects = stored + page;
  else objects = 2 * page;
  return Math.min(MAXIMUM_SEATS_LIMIT, Math.max(MINIMUM_SEATS, Math.ceil(objects / OBJECTS_PER_SEAT)));
}
