/**
 * report.json: the stable, versioned schema documented in docs/benchmarks.md ("report.json").
 * Bump SCHEMA_VERSION on any change that renames, removes or re-types a field; adding a field
 * keeps the version.
 */
import os from 'node:os';
import type { Recorder, TimelinePoint } from './recorder.js';
import type { CeilingFigure } from './scenarios/ctx.js';

export const SCHEMA_VERSION = 1;
export const SLO_MS = { mutating: 1000, 'single-object': 1000, list: 30_000 } as const;
export type SloClass = keyof typeof SLO_MS;

export interface LatencyMs {
  p50: number | null;
  p90: number | null;
  p99: number | null;
  max: number | null;
  mean: number | null;
}

export interface OperationReport {
  key: string;
  verb: string;
  group: string;
  resource: string;
  phase: string;
  requests: number;
  throughputPerSec: number;
  latencyMs: LatencyMs;
  errors: number;
  errorsByCode: Record<string, number>;
  bytesTotal: number;
  bytesPerResponse: number;
  /** [bucket upper edge in µs, count], HDR-style log buckets (≤ 1.6 % error) */
  histogram: [number, number][];
}

export interface SloResult {
  operation: string;
  class: SloClass;
  thresholdMs: number;
  p99Ms: number | null;
  met: boolean;
}

export interface ServerUsage {
  source: 'proc' | 'metrics' | 'unavailable';
  rssStartBytes: number | null;
  rssEndBytes: number | null;
  rssPeakBytes: number | null;
  cpuSeconds: number | null;
  /** CPU seconds per wall second over the scenario */
  cpuCores: number | null;
}

export interface ScenarioReport {
  name: string;
  startedAt: string;
  elapsedSec: number;
  interrupted: boolean;
  error: string | null;
  params: Record<string, unknown>;
  operations: OperationReport[];
  timeline: TimelinePoint[];
  figures: Record<string, number | null>;
  ceilings: CeilingFigure[];
  slo: SloResult[];
  server: ServerUsage;
  /** CPU of the bench process (all its threads) over the scenario: near 1 core or more, the figures are (partly) client-bound */
  client: { cpuSeconds: number; cpuCores: number };
  notes: string[];
}

export interface RequestCount {
  verb: string;
  group: string;
  resource: string;
  code: number;
  count: number;
}

export interface Report {
  schemaVersion: number;
  tool: string;
  startedAt: string;
  endedAt: string;
  interrupted: boolean;
  argv: string[];
  target: { url: string; startedByBench: boolean; tls: boolean; auth: 'none' | 'token' | 'client-certificate' };
  machine: { cpus: number; cpuModel: string; memoryBytes: number; os: string; node: string; loadAverage: number[] };
  options: Record<string, unknown>;
  scenarios: ScenarioReport[];
  /** every request sent that got an answer, set-up included: what apiserver_request_total must show */
  requestCounts: RequestCount[];
  metricsCheck: { available: boolean; matched: boolean; differences: { key: string; sent: number; counted: number }[] };
  summary: { requests: number; errors: number; sloChecked: number; sloFailed: number };
}

const num = (x: number): number | null => (Number.isFinite(x) ? x : null);

export function sloClass(verb: string): SloClass | undefined {
  if (verb === 'WATCH') return undefined;
  if (verb === 'LIST') return 'list';
  if (verb === 'GET') return 'single-object';
  return 'mutating';
}

export function operations(rec: Recorder): OperationReport[] {
  return [...rec.ops.values()].map((s) => {
    const errors = Object.values(s.errorsByCode).reduce((a, b) => a + b, 0);
    const span = Math.max(0.001, (s.lastEnd - s.firstStart) / 1000);
    return {
      key: s.key,
      verb: s.verb,
      group: s.group,
      resource: s.resource,
      phase: s.phase,
      requests: s.requests,
      throughputPerSec: s.verb === 'WATCH' ? 0 : s.requests / span,
      latencyMs: {
        p50: num(s.hdr.percentileMs(50)),
        p90: num(s.hdr.percentileMs(90)),
        p99: num(s.hdr.percentileMs(99)),
        max: num(s.hdr.maxUs / 1000),
        mean: num(s.hdr.meanMs()),
      },
      errors,
      errorsByCode: { ...s.errorsByCode },
      bytesTotal: s.bytes,
      bytesPerResponse: s.requests ? s.bytes / s.requests : 0,
      histogram: s.hdr.sparse(),
    };
  });
}

export function judge(ops: OperationReport[]): SloResult[] {
  const out: SloResult[] = [];
  for (const o of ops) {
    const c = sloClass(o.verb);
    if (!c || o.phase === 'setup' || o.requests === 0) continue;
    out.push({
      operation: o.key,
      class: c,
      thresholdMs: SLO_MS[c],
      p99Ms: o.latencyMs.p99,
      met: o.latencyMs.p99 !== null && o.latencyMs.p99 <= SLO_MS[c],
    });
  }
  return out;
}

export function countsOf(recs: Recorder[]): RequestCount[] {
  const m = new Map<string, number>();
  for (const r of recs) for (const [k, v] of r.counts) if (!k.endsWith('|0')) m.set(k, (m.get(k) ?? 0) + v);
  return [...m]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([k, count]) => {
      const [verb, group, resource, code] = k.split('|');
      return { verb: verb!, group: group!, resource: resource!, code: Number(code), count };
    });
}

export function machine(): Report['machine'] {
  const cpus = os.cpus();
  return {
    cpus: cpus.length,
    cpuModel: cpus[0]?.model.trim() ?? 'unknown',
    memoryBytes: os.totalmem(),
    os: `${os.type()} ${os.release()} ${os.arch()}`,
    node: process.version,
    loadAverage: os.loadavg(),
  };
}

/** Fails with the first problem found when `r` does not follow schema version 1. */
export function checkSchema(r: any): string | undefined {
  if (r?.schemaVersion !== SCHEMA_VERSION) return `schemaVersion ${r?.schemaVersion}`;
  for (const k of ['tool', 'startedAt', 'endedAt']) if (typeof r[k] !== 'string') return `${k} not a string`;
  if (typeof r.interrupted !== 'boolean' || !Array.isArray(r.scenarios) || !Array.isArray(r.requestCounts))
    return 'interrupted/scenarios/requestCounts';
  if (
    typeof r.target?.url !== 'string' ||
    typeof r.summary?.requests !== 'number' ||
    typeof r.metricsCheck?.matched !== 'boolean'
  )
    return 'target/summary/metricsCheck';
  for (const s of r.scenarios) {
    if (
      typeof s.name !== 'string' ||
      typeof s.elapsedSec !== 'number' ||
      !Array.isArray(s.operations) ||
      !Array.isArray(s.timeline) ||
      !Array.isArray(s.slo)
    )
      return `scenario ${s?.name}`;
    if (typeof s.figures !== 'object' || typeof s.server?.source !== 'string' || !Array.isArray(s.ceilings))
      return `scenario ${s.name} figures/server/ceilings`;
    for (const o of s.operations) {
      if (
        typeof o.key !== 'string' ||
        typeof o.verb !== 'string' ||
        typeof o.requests !== 'number' ||
        typeof o.throughputPerSec !== 'number'
      )
        return `operation ${o?.key}`;
      if (
        !o.latencyMs ||
        !('p99' in o.latencyMs) ||
        typeof o.errorsByCode !== 'object' ||
        typeof o.bytesPerResponse !== 'number' ||
        !Array.isArray(o.histogram)
      )
        return `operation ${o.key} fields`;
    }
  }
  for (const c of r.requestCounts)
    if (typeof c.verb !== 'string' || typeof c.code !== 'number' || typeof c.count !== 'number')
      return 'requestCounts entry';
  return undefined;
}
