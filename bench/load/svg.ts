/**
 * Hand-written SVG charts of a report (no chart library): latency over time (p50/p99 per
 * second, scenarios side by side), throughput per scenario operation (bars) and latency CDFs
 * (log-scale x).
 */
import { Hdr } from './hdr.js';
import type { Report } from './report.js';

const W = 900;
const PAD = { l: 70, r: 220, t: 40, b: 50 };
const COLORS = [
  '#1f77b4',
  '#d62728',
  '#2ca02c',
  '#ff7f0e',
  '#9467bd',
  '#8c564b',
  '#e377c2',
  '#17becf',
  '#bcbd22',
  '#7f7f7f',
];

const esc = (s: string): string =>
  s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
const f = (x: number): string => (Number.isFinite(x) ? x.toFixed(1) : '0');

function frame(h: number, title: string, body: string[]): string {
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${h}" viewBox="0 0 ${W} ${h}" font-family="sans-serif" font-size="12">`,
    `<rect width="${W}" height="${h}" fill="white"/>`,
    `<text x="${W / 2}" y="22" text-anchor="middle" font-size="15">${esc(title)}</text>`,
    ...body,
    '</svg>',
    '',
  ].join('\n');
}

function niceMax(v: number): number {
  if (!(v > 0)) return 1;
  const p = 10 ** Math.floor(Math.log10(v));
  return [1, 2, 5, 10].map((m) => m * p).find((m) => m >= v) ?? v;
}

function axes(h: number, yMax: number, yLabel: string, xLabel: string): string[] {
  const out: string[] = [];
  const ih = h - PAD.t - PAD.b;
  for (let i = 0; i <= 5; i++) {
    const y = PAD.t + ih - (ih * i) / 5;
    out.push(
      `<line x1="${PAD.l}" x2="${W - PAD.r}" y1="${f(y)}" y2="${f(y)}" stroke="#ddd"/>`,
      `<line x1="${PAD.l - 4}" x2="${PAD.l}" y1="${f(y)}" y2="${f(y)}" stroke="#333"/>`,
      `<text x="${PAD.l - 6}" y="${f(y + 4)}" text-anchor="end">${+((yMax * i) / 5).toPrecision(3)}</text>`,
    );
  }
  // the axis lines themselves, ticks hang off them
  out.push(
    `<line x1="${PAD.l}" x2="${PAD.l}" y1="${PAD.t}" y2="${PAD.t + ih}" stroke="#333"/>`,
    `<line x1="${PAD.l}" x2="${W - PAD.r}" y1="${PAD.t + ih}" y2="${PAD.t + ih}" stroke="#333"/>`,
  );
  out.push(
    `<text x="16" y="${PAD.t + ih / 2}" transform="rotate(-90 16 ${PAD.t + ih / 2})" text-anchor="middle">${esc(yLabel)}</text>`,
  );
  out.push(`<text x="${(PAD.l + W - PAD.r) / 2}" y="${h - 12}" text-anchor="middle">${esc(xLabel)}</text>`);
  return out;
}

/** A tick step of 1, 2 or 5 × 10^k giving about `count` ticks up to max. */
export function tickStep(max: number, count = 8): number {
  if (!(max > 0)) return 1;
  const raw = max / count;
  const p = 10 ** Math.floor(Math.log10(raw));
  return [1, 2, 5, 10].map((m) => m * p).find((m) => m >= raw) ?? raw;
}

/** Tick marks and labels under the x axis at the given positions. */
function xTicks(h: number, ticks: { x: number; label: string }[]): string[] {
  const y = h - PAD.b;
  return ticks.flatMap((t) => [
    `<line x1="${f(t.x)}" x2="${f(t.x)}" y1="${y}" y2="${y + 4}" stroke="#333"/>`,
    `<text x="${f(t.x)}" y="${y + 16}" text-anchor="middle">${esc(t.label)}</text>`,
  ]);
}

function legend(items: { label: string; color: string; dash?: boolean }[]): string[] {
  return items.flatMap((it, i) => {
    const y = PAD.t + 10 + i * 18;
    return [
      `<line x1="${W - PAD.r + 12}" x2="${W - PAD.r + 36}" y1="${y}" y2="${y}" stroke="${it.color}" stroke-width="2"${it.dash ? ' stroke-dasharray="4 3"' : ''}/>`,
      `<text x="${W - PAD.r + 42}" y="${y + 4}">${esc(it.label)}</text>`,
    ];
  });
}

export function latencyOverTime(r: Report): string {
  const h = 400;
  const series = r.scenarios.map((s) => s.timeline.filter((p) => p.requests > 0));
  const total = Math.max(
    1,
    r.scenarios.reduce((a, s) => a + Math.max(1, s.timeline.length), 0),
  );
  const yMax = niceMax(Math.max(0, ...series.flat().map((p) => p.p99Ms)));
  const iw = W - PAD.l - PAD.r;
  const ih = h - PAD.t - PAD.b;
  const body = axes(h, yMax, 'latency (ms)', 'seconds into the run (scenarios in order)');
  const step = tickStep(total);
  for (let sec = 0; sec <= total; sec += step)
    body.push(...xTicks(h, [{ x: PAD.l + (sec / total) * iw, label: String(sec) }]));
  const items: { label: string; color: string; dash?: boolean }[] = [];
  let offset = 0;
  r.scenarios.forEach((s, i) => {
    const color = COLORS[i % COLORS.length]!;
    const pts = (key: 'p50Ms' | 'p99Ms'): string =>
      s.timeline
        .map((p, j) =>
          p.requests > 0
            ? `${f(PAD.l + ((offset + j + 0.5) / total) * iw)},${f(PAD.t + ih - (Math.min(p[key], yMax) / yMax) * ih)}`
            : '',
        )
        .filter(Boolean)
        .join(' ');
    body.push(
      `<polyline fill="none" stroke="${color}" stroke-width="2" points="${pts('p99Ms')}"/>`,
      `<polyline fill="none" stroke="${color}" stroke-dasharray="4 3" points="${pts('p50Ms')}"/>`,
    );
    items.push({ label: `${s.name} p99`, color }, { label: `${s.name} p50`, color, dash: true });
    offset += Math.max(1, s.timeline.length);
  });
  return frame(h, 'Latency over time (per second, measured operations)', [...body, ...legend(items.slice(0, 20))]);
}

export function throughputBars(r: Report): string {
  const rows = r.scenarios.flatMap((s) =>
    s.operations
      .filter((o) => o.phase !== 'setup' && o.verb !== 'WATCH')
      .map((o) => ({ label: `${s.name}: ${o.key}`, v: o.throughputPerSec })),
  );
  const barH = 18;
  const h = PAD.t + PAD.b + Math.max(1, rows.length) * (barH + 6);
  const left = 300;
  const xMax = niceMax(Math.max(0, ...rows.map((x) => x.v)));
  const iw = W - left - 40;
  const body: string[] = [];
  rows.forEach((row, i) => {
    const y = PAD.t + i * (barH + 6);
    body.push(
      `<text x="${left - 6}" y="${y + 13}" text-anchor="end">${esc(row.label)}</text>`,
      `<rect x="${left}" y="${y}" width="${f((row.v / xMax) * iw)}" height="${barH}" fill="${COLORS[i % COLORS.length]}"/>`,
      `<text x="${f(left + (row.v / xMax) * iw + 4)}" y="${y + 13}">${Math.round(row.v).toLocaleString('en-US')}</text>`,
    );
  });
  const axisY = PAD.t + Math.max(1, rows.length) * (barH + 6);
  body.push(`<line x1="${left}" x2="${left + iw}" y1="${axisY}" y2="${axisY}" stroke="#333"/>`);
  for (let i = 0; i <= 5; i++) {
    const x = left + (iw * i) / 5;
    body.push(
      `<line x1="${f(x)}" x2="${f(x)}" y1="${axisY}" y2="${axisY + 4}" stroke="#333"/>`,
      `<text x="${f(x)}" y="${axisY + 16}" text-anchor="middle">${(+((xMax * i) / 5).toPrecision(3)).toLocaleString('en-US')}</text>`,
    );
  }
  body.push(`<text x="${left + iw / 2}" y="${h - 12}" text-anchor="middle">requests per second</text>`);
  return frame(h, 'Throughput per scenario operation', body);
}

export function latencyCdf(r: Report): string {
  const h = 420;
  const ops = r.scenarios.flatMap((s) =>
    s.operations
      .filter((o) => o.phase !== 'setup' && o.verb !== 'WATCH' && o.requests > 0)
      .map((o) => ({ label: `${s.name}: ${o.key}`, hist: o.histogram })),
  );
  const maxUs = Math.max(10, ...ops.flatMap((o) => o.hist.map(([us]) => us)));
  // the axis starts at the lowest 1st percentile (a stray fast answer would stretch it otherwise)
  const minUs = Math.max(1, Math.min(maxUs / 10, ...ops.map((o) => Hdr.fromSparse(o.hist).percentileMs(1) * 1000)));
  const lo = Math.floor(Math.log10(minUs));
  const hi = Math.ceil(Math.log10(maxUs));
  const iw = W - PAD.l - PAD.r;
  const ih = h - PAD.t - PAD.b;
  const x = (us: number): number => PAD.l + ((Math.log10(Math.max(us, 10 ** lo)) - lo) / Math.max(1, hi - lo)) * iw;
  const body = axes(h, 1, 'share of requests at or below', 'latency (ms, log scale)');
  for (let e = lo; e <= hi; e++) {
    body.push(
      `<line x1="${f(x(10 ** e))}" x2="${f(x(10 ** e))}" y1="${PAD.t}" y2="${PAD.t + ih}" stroke="#eee"/>`,
      ...xTicks(h, [{ x: x(10 ** e), label: String(+(10 ** e / 1000).toPrecision(3)) }]),
    );
    // minor ticks at 2× and 5× each decade
    for (const m of [2, 5])
      if (e < hi)
        body.push(
          `<line x1="${f(x(m * 10 ** e))}" x2="${f(x(m * 10 ** e))}" y1="${PAD.t + ih}" y2="${PAD.t + ih + 3}" stroke="#333"/>`,
        );
  }
  const items: { label: string; color: string }[] = [];
  ops.forEach((o, i) => {
    const color = COLORS[i % COLORS.length]!;
    const h2 = Hdr.fromSparse(o.hist);
    let seen = 0;
    const pts = o.hist.map(([us, c]) => {
      seen += c;
      return `${f(x(us))},${f(PAD.t + ih - (seen / h2.count) * ih)}`;
    });
    body.push(`<polyline fill="none" stroke="${color}" stroke-width="2" points="${pts.join(' ')}"/>`);
    items.push({ label: o.label, color });
  });
  return frame(h, 'Latency CDF per operation', [...body, ...legend(items.slice(0, 20))]);
}
