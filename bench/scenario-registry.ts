/**
 * The one table of bench scenarios: name → what it measures and its runner in each harness that
 * has one. `wrk`: the ceiling mode of bench/run.ts (the real server against a bare
 * uWebSockets.js/LMDB ceiling, scenarios in bench/scenarios/); `load`: the load CLI
 * (bench/load/cli.ts, any target server, scenarios in bench/load/scenarios/). A name both
 * harnesses know (get, list, create, apply) runs the harness's own scenario of that name.
 *
 * Table order is the order each harness lists and runs its scenarios in (usage, `all`, the
 * default run of the wrk mode); the lists below are derived from it, never kept by hand.
 */
import type { ScenarioResult } from './lib/report.js';
import type { Ctx } from './scenarios/common.js';
import { applyScenario as wrkApply } from './scenarios/apply.js';
import { authzScenario } from './scenarios/authz.js';
import { createScenario as wrkCreate } from './scenarios/create.js';
import { encodingsScenario } from './scenarios/encodings.js';
import { fairnessScenario } from './scenarios/fairness.js';
import { getScenario as wrkGet, listScenario as wrkList } from './scenarios/read.js';
import { tlsScenario } from './scenarios/tls.js';
import { watchScenario } from './scenarios/watch.js';
import type { ScenarioCtx } from './load/scenarios/ctx.js';
import { applyScenario as loadApply } from './load/scenarios/apply.js';
import {
  createScenario as loadCreate,
  getScenario as loadGet,
  listScenario as loadList,
  updateScenario,
} from './load/scenarios/basic.js';
import { densityScenario } from './load/scenarios/density.js';
import { mixedScenario } from './load/scenarios/mixed.js';
import { informersScenario, watchFanoutScenario } from './load/scenarios/watch.js';

export type Harness = 'wrk' | 'load';

/** A scenario's runner in each harness: wrk returns rows and verdicts, load records into ctx. */
export interface Runners {
  wrk?: (ctx: Ctx) => Promise<ScenarioResult>;
  load?: (ctx: ScenarioCtx) => Promise<void>;
}

export interface Scenario {
  /** one line: what the scenario measures (in each harness that runs it) */
  describe: string;
  run: Runners;
}

export const SCENARIOS: Readonly<Record<string, Scenario>> = {
  get: {
    describe: 'GET of one ~1 KB ConfigMap (wrk: against a hello-world ceiling of the same size)',
    run: { wrk: wrkGet, load: loadGet },
  },
  list: {
    describe: 'LIST of ConfigMaps (wrk: 500 against a same-size ceiling; load: --objects, JSON and Protobuf, paged)',
    run: { wrk: wrkList, load: loadList },
  },
  create: {
    describe: 'durable creates of ~1 KB ConfigMaps (wrk: against raw LMDB batched puts and a 201 ceiling)',
    run: { wrk: wrkCreate, load: loadCreate },
  },
  update: {
    describe: 'PUT with the cached resourceVersion over fewer objects than workers: conflicts, re-read, retry',
    run: { load: updateScenario },
  },
  watch: {
    describe: '1,000 watchers on one namespace under a paced writer: deliveries/s, write-to-delivery latency',
    run: { wrk: watchScenario },
  },
  apply: {
    describe: 'server-side apply of a Deployment by two field managers (deployer, forced autoscaler)',
    run: { wrk: wrkApply, load: loadApply },
  },
  'watch-fanout': {
    describe: '--watchers watches on one namespace and a writer at --write-rate: delivery rate and latency',
    run: { load: watchFanoutScenario },
  },
  informers: {
    describe: '--informers list-then-watch clients relisting every --relist, under a writer at --write-rate',
    run: { load: informersScenario },
  },
  density: {
    describe: 'Nodes, namespaces and Pods, ConfigMaps, Secrets created, listed, deleted; resident memory',
    run: { load: densityScenario },
  },
  mixed: {
    describe: 'a weighted open-loop mix of get, list, create, update, apply and delete at --qps',
    run: { load: mixedScenario },
  },
  tls: {
    describe: 'GET over the plain port, TLS anonymous and TLS with a bearer token (authentication cost)',
    run: { wrk: tlsScenario },
  },
  authz: {
    describe: 'GET over HTTPS under RBAC with 1,000 Roles and RoleBindings, against AlwaysAllow',
    run: { wrk: authzScenario },
  },
  encodings: {
    describe: 'LIST of 5,000 Pods as JSON, Protobuf, CBOR and Table, and in-process encode throughput',
    run: { wrk: encodingsScenario },
  },
  fairness: {
    describe: "a controller's update latency alone and during a LIST flood (API Priority and Fairness)",
    run: { wrk: fairnessScenario },
  },
};

/** The names a harness runs, in table order. */
export function scenarioNames(harness: Harness): string[] {
  return Object.keys(SCENARIOS).filter((name) => SCENARIOS[name]!.run[harness] !== undefined);
}

/** The wrk runner of a scenario; undefined for a name the wrk mode does not know. */
export const wrkRunner = (name: string): Runners['wrk'] =>
  Object.hasOwn(SCENARIOS, name) ? SCENARIOS[name]!.run.wrk : undefined;

/** The load runner of a scenario; undefined for a name the load CLI does not know. */
export const loadRunner = (name: string): Runners['load'] =>
  Object.hasOwn(SCENARIOS, name) ? SCENARIOS[name]!.run.load : undefined;
