/**
 * The parts ApiServer's constructor assembles from the options: API Priority and Fairness, the
 * leader-election lease and the watch hub (the shard actors' configuration: ./shards.ts).
 */
import type { Identity } from '../api/identity.js';
import type { ReadCache } from '../actors/read-cache.js';
import { typeKeyOf } from '../actors/routing.js';
import { jsonConverter } from '../registry/conversion.js';
import { Converter } from '../registry/conversion/conversion.js';
import type { Registry } from '../registry/registry.js';
import { WatchHub } from '../http/watch-hub.js';
import { PriorityAndFairness } from '../flowcontrol/priority-fairness.js';
import type { LeaderElectionOptions } from '../controllers/leader-election.js';
import type { ServerOptions } from './options.js';

/** API Priority and Fairness (--enable-priority-and-fairness, on by default), else undefined. */
export function priorityAndFairness(
  options: ServerOptions,
  identity: Identity,
  readCache: ReadCache,
  hub: WatchHub,
): PriorityAndFairness | undefined {
  if (!options.enablePriorityAndFairness) return undefined;
  // upstream: the server's concurrency limit is the sum of the two in-flight limits; a
  // queued request waits at most a quarter of the request timeout
  const limit = options.maxRequestsInflight + options.maxMutatingRequestsInflight;
  const apf = new PriorityAndFairness(
    identity,
    limit > 0 ? limit : 600,
    Math.max(1, Math.floor(options.requestTimeoutMs / 4)),
  );
  // a LIST's width and a write's final seats count what is stored and watched
  apf.counts = {
    objects: (group, resource) => readCache.count(typeKeyOf(group, resource)),
    watchers: (group, resource) => hub.watchers(typeKeyOf(group, resource)),
  };
  return apf;
}

/** The controller-manager lease (--leader-elect-*): `<product>-controller-manager` in the system namespace. */
export function leaderElection(options: ServerOptions, id: Identity): LeaderElectionOptions {
  return {
    leaseDurationMs: options.leaderElectLeaseDurationMs,
    renewDeadlineMs: options.leaderElectRenewDeadlineMs,
    retryPeriodMs: options.leaderElectRetryPeriodMs,
    name: `${id.systemNamespace.replace(/-system$/, '')}-controller-manager`,
    namespace: id.systemNamespace,
  };
}

/** The watch hub; events.<domain>/v1 over core Events (registry/conversion.ts), else the multi-version converters (HPA). */
export function watchHub(options: ServerOptions, registry: Registry): WatchHub {
  const converter = new Converter(registry.identity.domain, (k) =>
    registry.customType(k.slice(0, k.indexOf('/')), k.slice(k.indexOf('/') + 1)),
  );
  return new WatchHub(
    options.watchBufferBytes,
    jsonConverter(registry.identity, (typeKey, apiVersion, json) => converter.jsonAs(typeKey, json, apiVersion)),
  );
}
