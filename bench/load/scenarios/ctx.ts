/** What every load scenario receives, and the set-up helpers they share. */
import type { Client } from '../client.js';
import { deadline } from '../engine.js';

export interface Options {
  durationSec: number;
  concurrency: number;
  /** open-loop target rate (mixed), requests/s */
  qps: number;
  /** mixed: weights by kind (get, list, create, update, apply, delete) */
  mix: [string, number][];
  /** objects to list (list) */
  objects: number;
  /** density: namespaces × perNamespace of each kind */
  namespaces: number;
  perNamespace: number;
  /** density: the namespaced kinds created (pods, configmaps, secrets) */
  kinds: ('pods' | 'configmaps' | 'secrets')[];
  /** density: cluster-scoped Node objects */
  nodes: number;
  /** watch-fanout: watchers and the writer's rate (writes/s) */
  watchers: number;
  writeRate: number;
  /** informers: clients, and the watch time-out after which each relists, s */
  informers: number;
  relistSec: number;
  /** hard bound on requests per measured loop */
  maxRequests: number;
  ceilings: boolean;
  /** density: delete what it created (off with --no-delete, for a bench-started server that is dropped anyway) */
  deleteAfter: boolean;
}

export interface CeilingFigure {
  name: string;
  throughputPerSec: number;
  unit: string;
  comparedWith: string;
  ratio: number;
}

export interface ScenarioCtx {
  client: Client;
  opts: Options;
  /** Ctrl-C */
  stop: AbortSignal;
  /** DNS-label-safe prefix unique to this run */
  tag: string;
  log(msg: string): void;
  /** scenario-specific figures for the report (numbers; ms/bytes/s in the name) */
  figures: Record<string, number>;
  params: Record<string, unknown>;
  notes: string[];
  ceilings: CeilingFigure[];
  /** resident memory of the server now, when it can be known */
  serverRss(): Promise<number | undefined>;
}

/** Runs fn with a signal that fires after `sec` (default --duration) or on Ctrl-C; returns seconds taken. */
export async function measured(
  ctx: ScenarioCtx,
  fn: (signal: AbortSignal) => Promise<unknown>,
  sec = ctx.opts.durationSec,
): Promise<number> {
  const d = deadline(ctx.stop, sec * 1000);
  const t0 = performance.now();
  try {
    await fn(d.signal);
  } finally {
    d.cancel();
  }
  return (performance.now() - t0) / 1000;
}

export async function ensureNamespace(ctx: ScenarioCtx, name: string): Promise<void> {
  await ctx.client.must(
    {
      verb: 'POST',
      resource: 'namespaces',
      phase: 'setup',
      method: 'POST',
      path: '/api/v1/namespaces',
      body: JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } }),
    },
    [201, 409],
  );
}

/** Deletes a namespace the scenario made (set-up traffic; the answer does not matter). */
export async function dropNamespace(ctx: ScenarioCtx, name: string): Promise<void> {
  await ctx.client.call({
    verb: 'DELETE',
    resource: 'namespaces',
    phase: 'setup',
    method: 'DELETE',
    path: `/api/v1/namespaces/${name}`,
  });
}

/** A ConfigMap of about `bytes` bytes of JSON. */
export function configMap(
  name: string,
  bytes = 1024,
  extra: Record<string, string> = {},
  annotations?: Record<string, string>,
): string {
  const metadata: Record<string, unknown> = { name, labels: { bench: 'true' } };
  if (annotations) metadata.annotations = annotations;
  const shell = JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata, data: { ...extra, pad: '' } });
  return JSON.stringify({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata,
    data: { ...extra, pad: 'x'.repeat(Math.max(0, bytes - shell.length)) },
  });
}

export const cmPath = (ns: string, name?: string): string =>
  `/api/v1/namespaces/${ns}/configmaps${name ? '/' + name : ''}`;

/** Creates n ConfigMaps name-0..n-1 in ns (set-up traffic), bounded by Ctrl-C. */
export async function fill(ctx: ScenarioCtx, ns: string, n: number, prefix = 'cm', bytes = 1024): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < n && !ctx.stop.aborted) {
      const i = next++;
      await ctx.client.must(
        {
          verb: 'POST',
          resource: 'configmaps',
          phase: 'setup',
          method: 'POST',
          path: cmPath(ns),
          body: configMap(`${prefix}-${i}`, bytes),
        },
        [201, 409],
      );
    }
  };
  await Promise.all(Array.from({ length: Math.min(16, Math.max(1, n)) }, worker));
}
