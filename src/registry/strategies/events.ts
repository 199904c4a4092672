/**
 * events.plat.io/v1 Events: on create, eventTime, reportingController, reportingInstance,
 * action and reason are required, type is Normal or Warning and the deprecated fields stay
 * unset (upstream ValidateEventCreate; field names are the core ones upstream reports).
 */
import { DEFAULT_STRATEGY, type ResourceStrategy } from '../strategy.js';
import { invalid, required, type Cause } from './field-errors.js';

const DEPRECATED: [string, string][] = [
  ['deprecatedFirstTimestamp', 'firstTimestamp'], ['deprecatedLastTimestamp', 'lastTimestamp'],
  ['deprecatedCount', 'count'], ['deprecatedSource', 'source'],
];

export function validateEventV1(obj: any): Cause[] {
  const out: Cause[] = [];
  if (!obj.eventTime) out.push(required('eventTime'));
  else {
    for (const [f, path] of [['reportingController', 'reportingController'], ['reportingInstance', 'reportingInstance'], ['action', 'action'], ['reason', 'reason']]) {
      if (!obj[f!]) out.push(required(path!));
    }
    for (const [f, max] of [['reportingInstance', 128], ['action', 128], ['reason', 128], ['note', 1024]] as const) {
      if (typeof obj[f] === 'string' && obj[f].length > max) out.push(invalid(f === 'note' ? 'message' : f, '', `can have at most ${max} characters`));
    }
  }
  if (obj.type !== 'Normal' && obj.type !== 'Warning') out.push(invalid('type', '', `has invalid value: ${obj.type ?? ''}`));
  for (const [f, path] of DEPRECATED) {
    const v = obj[f];
    if (v !== undefined && v !== null && v !== 0 && !(typeof v === 'object' && !Object.keys(v).length)) out.push(invalid(path, '', 'needs to be unset'));
  }
  return out;
}

/** objects being created (prepareForCreate ran on them): the strict rules apply on create only */
const creating = new WeakSet<object>();

/** core v1 and events.plat.io/v1 serve the same Events; only the v1 API applies the strict rules. */
export const eventStrategy: ResourceStrategy = {
  ...DEFAULT_STRATEGY,
  allowCreateOnUpdate: true,
  prepareForCreate(obj) { creating.add(obj); },
  ttl: (_obj, config) => config.eventTtlMs,
  validate: (obj) => (String(obj.apiVersion).startsWith('events.') && creating.has(obj) ? validateEventV1(obj) : []),
};
