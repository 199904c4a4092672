/**
 * `npm run bench -- compare a/report.json b/report.json [--noise 10]`: the change of every
 * figure the two reports share (throughput, p50/p99 per operation, scenario figures), marked
 * better/worse only outside the noise band (± percent, default 10).
 */
import { readFileSync } from 'node:fs';
import { checkSchema, type Report } from './report.js';

const DEFAULT_NOISE = 10;

type Direction = 'higher' | 'lower' | 'unknown';

function figureDirection(name: string): Direction {
  if (/PerSec$|deliveries$|writes$|updates$|watchersOpen$/i.test(name)) return 'higher';
  if (/(Ms|Bytes|Sec|conflicts|gaveUpAfterRetries|Expired)$/.test(name)) return 'lower';
  return 'unknown';
}

function figures(r: Report): Map<string, { v: number; dir: Direction }> {
  const m = new Map<string, { v: number; dir: Direction }>();
  for (const s of r.scenarios) {
    for (const o of s.operations) {
      if (o.phase === 'setup') continue;
      if (o.verb !== 'WATCH') m.set(`${s.name} ${o.key} req/s`, { v: o.throughputPerSec, dir: 'higher' });
      if (o.latencyMs.p50 !== null) m.set(`${s.name} ${o.key} p50 ms`, { v: o.latencyMs.p50, dir: 'lower' });
      if (o.latencyMs.p99 !== null) m.set(`${s.name} ${o.key} p99 ms`, { v: o.latencyMs.p99, dir: 'lower' });
      m.set(`${s.name} ${o.key} errors`, { v: o.errors, dir: 'lower' });
    }
    for (const [k, v] of Object.entries(s.figures)) if (v !== null) m.set(`${s.name} ${k}`, { v, dir: figureDirection(k) });
    for (const c of s.ceilings) m.set(`${s.name} ratio to ${c.name}`, { v: c.ratio, dir: 'higher' });
  }
  return m;
}

export interface Change { figure: string; before: number; after: number; changePct: number; verdict: 'better' | 'worse' | 'within noise' | 'changed' }

export function compareReports(a: Report, b: Report, noisePct = DEFAULT_NOISE): Change[] {
  const fa = figures(a);
  const fb = figures(b);
  const out: Change[] = [];
  for (const [k, x] of fa) {
    const y = fb.get(k);
    if (!y) continue;
    const changePct = x.v === 0 ? (y.v === 0 ? 0 : 100) : ((y.v - x.v) / Math.abs(x.v)) * 100;
    let verdict: Change['verdict'] = 'within noise';
    if (Math.abs(changePct) > noisePct) verdict = x.dir === 'unknown' ? 'changed' : (changePct > 0) === (x.dir === 'higher') ? 'better' : 'worse';
    out.push({ figure: k, before: x.v, after: y.v, changePct, verdict });
  }
  return out;
}

const fmt = (x: number): string => (Math.abs(x) >= 100 ? Math.round(x).toLocaleString('en-US') : x.toPrecision(3));

export function compareMain(argv: string[]): number {
  let noise = DEFAULT_NOISE;
  const files: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--noise') {
      noise = Number(argv[++i]);
      if (!(noise >= 0 && noise <= 1000)) throw new Error('--noise must be a percentage in 0..1000');
    } else files.push(argv[i]!);
  }
  if (files.length !== 2) throw new Error('usage: npm run bench -- compare a/report.json b/report.json [--noise 10]');
  const [a, b] = files.map((f) => {
    const r = JSON.parse(readFileSync(f, 'utf8'));
    const bad = checkSchema(r);
    if (bad) throw new Error(`${f}: not a bench report (${bad})`);
    return r as Report;
  });
  const changes = compareReports(a!, b!, noise);
  const lines = [`| Figure | ${files[0]} | ${files[1]} | Change | Verdict (noise ±${noise}%) |`, '| --- | ---: | ---: | ---: | --- |'];
  for (const c of changes) lines.push(`| ${c.figure} | ${fmt(c.before)} | ${fmt(c.after)} | ${c.changePct >= 0 ? '+' : ''}${c.changePct.toFixed(1)}% | ${c.verdict === 'worse' ? '**worse**' : c.verdict} |`);
  const worse = changes.filter((c) => c.verdict === 'worse').length;
  lines.push('', `${changes.length} figures compared: ${changes.filter((c) => c.verdict === 'better').length} better, ${worse} worse, ${changes.filter((c) => c.verdict === 'within noise').length} within noise.`);
  process.stdout.write(lines.join('\n') + '\n');
  return 0;
}
