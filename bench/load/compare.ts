/**
 * `npm run bench -- compare a/report.json b/report.json [--noise 10]`: the change of every
 * figure the two reports share (throughput, p50/p99 per operation, scenario figures), marked
 * better/worse only outside its noise band: ± the larger of --noise (percent, default 10) and
 * twice the run-to-run wobble seen inside either run (the coefficient of variation of its
 * scenario's per-second request counts, first and last partial seconds left out).
 */
import { readFileSync } from 'node:fs';
import { checkSchema, type Report } from './report.js';
import { UsageError } from './args.js';

const DEFAULT_NOISE = 10;

type Direction = 'higher' | 'lower' | 'unknown';

function figureDirection(name: string): Direction {
  if (/PerSec$|deliveries$|writes$|updates$|watchersOpen$/i.test(name)) return 'higher';
  if (/(Ms|Bytes|Sec|conflicts|gaveUpAfterRetries|Expired)$/.test(name)) return 'lower';
  return 'unknown';
}

/** Coefficient of variation of a scenario's per-second request counts, in percent. */
export function wobblePct(timeline: { requests: number }[]): number {
  const xs = timeline
    .slice(1, -1)
    .map((p) => p.requests)
    .filter((n) => n > 0);
  if (xs.length < 3) return 0;
  const mean = xs.reduce((a, b) => a + b, 0) / xs.length;
  const sd = Math.sqrt(xs.reduce((a, b) => a + (b - mean) ** 2, 0) / (xs.length - 1));
  return (sd / mean) * 100;
}

function figures(r: Report): Map<string, { v: number; dir: Direction; wobble: number }> {
  const m = new Map<string, { v: number; dir: Direction; wobble: number }>();
  for (const s of r.scenarios) {
    const wobble = wobblePct(s.timeline ?? []);
    const set = (k: string, v: number, dir: Direction): void => {
      m.set(k, { v, dir, wobble });
    };
    for (const o of s.operations) {
      if (o.phase === 'setup') continue;
      if (o.verb !== 'WATCH') set(`${s.name} ${o.key} req/s`, o.throughputPerSec, 'higher');
      if (o.latencyMs.p50 !== null) set(`${s.name} ${o.key} p50 ms`, o.latencyMs.p50, 'lower');
      if (o.latencyMs.p99 !== null) set(`${s.name} ${o.key} p99 ms`, o.latencyMs.p99, 'lower');
      set(`${s.name} ${o.key} errors`, o.errors, 'lower');
    }
    for (const [k, v] of Object.entries(s.figures)) if (v !== null) set(`${s.name} ${k}`, v, figureDirection(k));
    for (const c of s.ceilings) set(`${s.name} ratio to ${c.name}`, c.ratio, 'higher');
  }
  return m;
}

export interface Change {
  figure: string;
  before: number;
  after: number;
  changePct: number;
  bandPct: number;
  verdict: 'better' | 'worse' | 'within noise' | 'changed';
}

export function compareReports(a: Report, b: Report, noisePct = DEFAULT_NOISE): Change[] {
  const fa = figures(a);
  const fb = figures(b);
  const out: Change[] = [];
  for (const [k, x] of fa) {
    const y = fb.get(k);
    if (!y) continue;
    const changePct = x.v === 0 ? (y.v === 0 ? 0 : 100) : ((y.v - x.v) / Math.abs(x.v)) * 100;
    const bandPct = Math.max(noisePct, 2 * Math.max(x.wobble, y.wobble));
    let verdict: Change['verdict'] = 'within noise';
    if (Math.abs(changePct) > bandPct)
      verdict = x.dir === 'unknown' ? 'changed' : changePct > 0 === (x.dir === 'higher') ? 'better' : 'worse';
    out.push({ figure: k, before: x.v, after: y.v, changePct, bandPct, verdict });
  }
  return out;
}

const fmt = (x: number): string =>
  Number.isInteger(x) || Math.abs(x) >= 100 ? Math.round(x).toLocaleString('en-US') : x.toPrecision(3);

export function compareMain(argv: string[]): number {
  let noise = DEFAULT_NOISE;
  const files: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--noise') {
      noise = Number(argv[++i]);
      if (!(noise >= 0 && noise <= 1000)) throw new UsageError('--noise must be a percentage in 0..1000');
    } else files.push(argv[i]!);
  }
  if (files.length !== 2)
    throw new UsageError('usage: npm run bench -- compare a/report.json b/report.json [--noise 10]');
  const [a, b] = files.map((f) => {
    const r = JSON.parse(readFileSync(f, 'utf8'));
    const bad = checkSchema(r);
    if (bad) throw new UsageError(`${f}: not a bench report (${bad})`);
    return r as Report;
  });
  const changes = compareReports(a!, b!, noise);
  const lines = [
    `| Figure | ${files[0]} | ${files[1]} | Change | Noise band | Verdict |`,
    '| --- | ---: | ---: | ---: | ---: | --- |',
  ];
  for (const c of changes)
    lines.push(
      `| ${c.figure} | ${fmt(c.before)} | ${fmt(c.after)} | ${c.changePct >= 0 ? '+' : ''}${c.changePct.toFixed(1)}% | ±${c.bandPct.toFixed(0)}% | ${c.verdict === 'worse' ? '**worse**' : c.verdict} |`,
    );
  const worse = changes.filter((c) => c.verdict === 'worse').length;
  lines.push(
    '',
    `${changes.length} figures compared: ${changes.filter((c) => c.verdict === 'better').length} better, ${worse} worse, ${changes.filter((c) => c.verdict === 'within noise').length} within noise.`,
  );
  process.stdout.write(lines.join('\n') + '\n');
  return 0;
}
