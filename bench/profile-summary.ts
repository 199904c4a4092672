/**
 * Summarises V8 .cpuprofile files (from `npm run bench -- --cpu-prof DIR`): self and total
 * time per function, and self time per source file, busiest first.
 *
 *   node dist/bench/profile-summary.js FILE.cpuprofile [--top 25]
 */
import { readFileSync } from 'node:fs';

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
}
interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  hitCount?: number;
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples: number[];
}

function shortUrl(url: string): string {
  const i = url.indexOf('/dist/');
  if (i >= 0) return url.slice(i + 6);
  const n = url.lastIndexOf('node_modules/');
  return n >= 0 ? url.slice(n + 13) : url.replace(/^file:\/\//, '') || '(native)';
}

function label(f: CallFrame): string {
  return `${f.functionName || '(anonymous)'} ${shortUrl(f.url)}:${f.lineNumber + 1}`;
}

function summarize(path: string, top: number): string {
  const p = JSON.parse(readFileSync(path, 'utf8')) as Profile;
  const totalSamples = p.samples.length;
  const ms = (p.endTime - p.startTime) / 1000;
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const self = new Map<string, number>();
  const total = new Map<string, number>();
  const files = new Map<string, number>();
  for (const n of p.nodes) {
    const hits = n.hitCount ?? 0;
    if (!hits) continue;
    const key = label(n.callFrame);
    self.set(key, (self.get(key) ?? 0) + hits);
    const file = shortUrl(n.callFrame.url);
    files.set(file, (files.get(file) ?? 0) + hits);
    const seen = new Set<string>();
    for (let id: number | undefined = n.id; id !== undefined; id = parent.get(id)) {
      const k = label(byId.get(id)!.callFrame);
      if (seen.has(k)) continue;
      seen.add(k);
      total.set(k, (total.get(k) ?? 0) + hits);
    }
  }
  const pct = (h: number): string => `${((100 * h) / totalSamples).toFixed(1).padStart(5)}%`;
  const rank = (m: Map<string, number>): [string, number][] => [...m].sort((a, b) => b[1] - a[1]).slice(0, top);
  const out = [`${path}: ${totalSamples} samples over ${ms.toFixed(0)} ms`, '', 'self time by function:'];
  for (const [k, h] of rank(self)) out.push(`  ${pct(h)}  ${k}`);
  out.push('', 'self time by file:');
  for (const [k, h] of rank(files)) out.push(`  ${pct(h)}  ${k}`);
  out.push('', 'total (inclusive) time by function:');
  for (const [k, h] of rank(total)) out.push(`  ${pct(h)}  ${k}`);
  return out.join('\n');
}

const args = process.argv.slice(2);
const topAt = args.indexOf('--top');
const top = topAt >= 0 ? Number(args.splice(topAt, 2)[1]) : 25;
if (args.length === 0) {
  process.stderr.write('usage: node dist/bench/profile-summary.js FILE.cpuprofile... [--top N]\n');
  process.exit(2);
}
for (const f of args) process.stdout.write(summarize(f, top) + '\n\n');
