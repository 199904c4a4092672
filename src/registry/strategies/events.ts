/**
 * events.plat.io/v1 Events: on create, eventTime, reportingController, reportingInstance,
 * action and reason are required, type is Normal or Warning and the deprecated fields stay
 * unset (upstream ValidateEventCreate; field names are the core ones upstream reports). An
 * update through events.plat.io/v1 may change only metadata and series (upstream
 * ValidateEventUpdate); core v1 updates stay unrestricted, for backwards compatibility.
 */
import type { KubeObject } from '../../api/object.js';
import { DEFAULT_STRATEGY, type ResourceStrategy } from '../strategy.js';
import { immutable, invalid, required, same, type Cause } from './field-errors.js';

/** An Event read by field name (the v1 and core spellings both appear). */
type EventObject = KubeObject & { series?: EventSeries } & Record<string, unknown>;
interface EventSeries {
  count?: unknown;
  lastObservedTime?: unknown;
}

const DEPRECATED: [string, string][] = [
  ['deprecatedFirstTimestamp', 'firstTimestamp'],
  ['deprecatedLastTimestamp', 'lastTimestamp'],
  ['deprecatedCount', 'count'],
  ['deprecatedSource', 'source'],
];

export function validateEventV1(obj: EventObject): Cause[] {
  const out: Cause[] = [];
  if (!obj.eventTime) out.push(required('eventTime'));
  else {
    for (const [f, path] of [
      ['reportingController', 'reportingController'],
      ['reportingInstance', 'reportingInstance'],
      ['action', 'action'],
      ['reason', 'reason'],
    ]) {
      if (!obj[f!]) out.push(required(path!));
    }
    for (const [f, max] of [
      ['reportingInstance', 128],
      ['action', 128],
      ['reason', 128],
      ['note', 1024],
    ] as const) {
      if (typeof obj[f] === 'string' && obj[f].length > max)
        out.push(invalid(f === 'note' ? 'message' : f, '', `can have at most ${max} characters`));
    }
  }
  out.push(...validateSeries(obj.series));
  if (obj.type !== 'Normal' && obj.type !== 'Warning')
    out.push(invalid('type', '', `has invalid value: ${obj.type ?? ''}`));
  for (const [f, path] of DEPRECATED) {
    const v = obj[f];
    if (v !== undefined && v !== null && v !== 0 && !(typeof v === 'object' && !Object.keys(v).length))
      out.push(invalid(path, '', 'needs to be unset'));
  }
  return out;
}

/** upstream validateV1EventSeries */
function validateSeries(series: EventSeries | null | undefined): Cause[] {
  if (series === undefined || series === null) return [];
  const out: Cause[] = [];
  if (!(typeof series.count === 'number' && series.count >= 2))
    out.push(invalid('series.count', '', 'should be at least 2'));
  if (!series.lastObservedTime) out.push(required('series.lastObservedTime'));
  return out;
}

/** events v1 field -> the core field path upstream reports, for every field an update may not change */
const IMMUTABLE: [string, string][] = [
  ['regarding', 'involvedObject'],
  ['reason', 'reason'],
  ['note', 'message'],
  ['deprecatedSource', 'source'],
  ['deprecatedFirstTimestamp', 'firstTimestamp'],
  ['deprecatedLastTimestamp', 'lastTimestamp'],
  ['deprecatedCount', 'count'],
  ['type', 'type'],
  ['eventTime', 'eventTime'],
  ['action', 'action'],
  ['related', 'related'],
  ['reportingController', 'reportingController'],
  ['reportingInstance', 'reportingInstance'],
];

/** Go zero values compare equal to an absent field (upstream compares the typed structs). */
const zero = (v: unknown): unknown =>
  v === null ||
  v === '' ||
  v === 0 ||
  (typeof v === 'object' && !Array.isArray(v) && Object.keys(v as object).length === 0)
    ? undefined
    : v;

/** upstream ValidateEventUpdate for updates through events.plat.io/v1 (obj and old in that version) */
export function validateEventUpdateV1(obj: EventObject, old: EventObject): Cause[] {
  const out: Cause[] = [];
  if (!same(obj.series, old.series)) out.push(...validateSeries(obj.series));
  for (const [f, path] of IMMUTABLE) out.push(...immutable(path, zero(obj[f]), zero(old[f])));
  return out;
}

const isV1 = (obj: KubeObject): boolean => String(obj.apiVersion).startsWith('events.');

/** objects being created (prepareForCreate ran on them): the strict rules apply on create only */
const creating = new WeakSet<object>();

/** core v1 and events.plat.io/v1 serve the same Events; only the v1 API applies the strict rules. */
export const eventStrategy: ResourceStrategy<EventObject> = {
  ...DEFAULT_STRATEGY,
  allowCreateOnUpdate: true,
  prepareForCreate(obj) {
    creating.add(obj);
  },
  ttl: (_obj, config) => config.eventTtlMs,
  validate: (obj) => (isV1(obj) && creating.has(obj) ? validateEventV1(obj) : []),
  validateUpdate: (obj, old) => (isV1(obj) ? validateEventUpdateV1(obj, old) : []),
};
