/**
 * Drives a strategy the way the generic store does, without a server: create = stamp
 * metadata, prepareForCreate, validate; update = prepareForUpdate, validate, validateUpdate.
 */
import assert from 'node:assert/strict';
import type { ResourceStrategy, StrategyConfig, StrategyContext } from '../../../src/registry/strategy.js';
import type { StatusCause } from '../../../src/api/status.js';

export function ctx(
  existing: any[] = [],
  config: Partial<StrategyContext['config']> = {},
  dryRun = false,
): StrategyContext {
  return {
    dryRun,
    now: Date.UTC(2025, 0, 2, 3, 4, 5),
    config: {
      serviceClusterIPRange: '10.0.0.0/24',
      serviceNodePortRange: '30000-32767',
      apiServiceName: 'platform',
      eventTtlMs: 3_600_000,
      labelDomain: 'platform.io',
      protectedNamespaces: ['default', 'plat-system', 'plat-public', 'plat-node-lease'],
      ...config,
    } as StrategyConfig,
    *existing() {
      yield* existing;
    },
  };
}

let uid = 0;

/** The object as the store would hand it to the strategy on create; prepared in place. */
export function prepared(s: ResourceStrategy, obj: any, c = ctx()): any {
  const o = structuredClone(obj);
  o.metadata = { namespace: 'default', ...(o.metadata ?? {}), uid: `uid-${++uid}` };
  s.prepareForCreate(o, c);
  return o;
}

export function create(s: ResourceStrategy, obj: any, c = ctx()): StatusCause[] {
  return s.validate(prepared(s, obj, c));
}

export function update(s: ResourceStrategy, old: any, obj: any, c = ctx()): StatusCause[] {
  const next = structuredClone(obj);
  s.prepareForUpdate(next, old, c);
  return [...s.validate(next), ...s.validateUpdate(next, old)];
}

export interface Expect {
  field: string;
  reason: string;
  message?: RegExp | string;
}

/** No causes when expect is undefined; otherwise a cause with that field, reason (and message). */
export function check(causes: StatusCause[], expect: Expect | undefined, label: string): void {
  if (!expect) return assert.deepEqual(causes, [], label);
  const hit = causes.find((c) => c.field === expect.field && c.reason === expect.reason);
  assert.ok(hit, `${label}: expected ${expect.reason} at ${expect.field}, got ${JSON.stringify(causes)}`);
  if (typeof expect.message === 'string') assert.ok(hit.message!.includes(expect.message), `${label}: ${hit.message}`);
  else if (expect.message) assert.match(hit.message!, expect.message, label);
}

/** Runs fn and returns the Status it throws (the strategy's StatusError). */
export function statusOf(fn: () => unknown): any {
  try {
    fn();
  } catch (e) {
    return (e as { status: unknown }).status;
  }
  assert.fail('expected a StatusError');
}

/**
 * A write through a subresource as the store runs it: status takes only status from obj and
 * runs prepareForStatusUpdate; any other name goes to updateSubresource. Returns the next
 * object and the causes of validateSubresourceUpdate.
 */
export function subresourceUpdate(
  s: ResourceStrategy,
  name: string,
  old: any,
  obj: any,
  c = ctx(),
): { next: any; causes: StatusCause[] } {
  let next: any;
  if (name === 'status') {
    next = structuredClone(old);
    if (obj.status === undefined) delete next.status;
    else next.status = structuredClone(obj.status);
    s.prepareForStatusUpdate(next, old, c);
  } else {
    next = s.updateSubresource(name, structuredClone(obj), old, c);
  }
  return { next, causes: s.validateSubresourceUpdate(name, next, old) };
}
