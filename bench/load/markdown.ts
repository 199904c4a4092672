/** report.md: the report for a person, with the SLO verdicts and links to the charts. */
import type { Report, ScenarioReport } from './report.js';

const n = (x: number | null | undefined, d = 2): string =>
  x === null || x === undefined || !Number.isFinite(x) ? '–' : x.toFixed(d);
const int = (x: number): string => Math.round(x).toLocaleString('en-US');
const mib = (b: number | null): string => (b === null ? '–' : `${(b / 2 ** 20).toFixed(1)} MiB`);

function scenario(s: ScenarioReport): string[] {
  const out = [`## ${s.name}${s.interrupted ? ' (interrupted)' : ''}`, ''];
  if (s.error) out.push(`**Failed:** ${s.error}`, '');
  out.push(`${n(s.elapsedSec, 1)} s; parameters: \`${JSON.stringify(s.params)}\``, '');
  out.push(
    '| Operation | Requests | Req/s | p50 ms | p90 ms | p99 ms | max ms | Errors | Bytes/resp |',
    '| --- | ---: | ---: | ---: | ---: | ---: | ---: | --- | ---: |',
  );
  for (const o of s.operations) {
    const errs = o.errors
      ? Object.entries(o.errorsByCode)
          .map(([c, k]) => `${k}×${c === '0' ? 'no answer' : c}`)
          .join(', ')
      : '0';
    out.push(
      `| ${o.key} | ${int(o.requests)} | ${o.verb === 'WATCH' ? '–' : o.throughputPerSec < 10 ? n(o.throughputPerSec) : int(o.throughputPerSec)} | ${n(o.latencyMs.p50)} | ${n(o.latencyMs.p90)} | ${n(o.latencyMs.p99)} | ${n(o.latencyMs.max)} | ${errs} | ${int(o.bytesPerResponse)} |`,
    );
  }
  out.push('');
  const figs = Object.entries(s.figures);
  if (figs.length)
    out.push(
      'Figures: ' + figs.map(([k, v]) => `${k} = ${v === null ? '–' : Number.isInteger(v) ? int(v) : n(v)}`).join('; '),
      '',
    );
  for (const c of s.ceilings)
    out.push(
      `- Ceiling: ${c.name}: ${int(c.throughputPerSec)} ${c.unit}; ${c.comparedWith} reached **${(c.ratio * 100).toFixed(1)}%** of it`,
    );
  const u = s.server;
  out.push(
    `- Server (${u.source}): RSS ${mib(u.rssStartBytes)} → ${mib(u.rssEndBytes)} (peak ${mib(u.rssPeakBytes)}), CPU ${n(u.cpuSeconds)} s (${n(u.cpuCores)} cores on average); bench process CPU ${n(s.client.cpuSeconds)} s (${n(s.client.cpuCores)} cores)`,
  );
  for (const note of s.notes) out.push(`- ${note}`);
  out.push('');
  if (s.slo.length) {
    out.push('| SLO | p99 ms | Limit ms | Met |', '| --- | ---: | ---: | --- |');
    for (const v of s.slo)
      out.push(`| ${v.operation} (${v.class}) | ${n(v.p99Ms)} | ${int(v.thresholdMs)} | ${v.met ? 'yes' : '**no**'} |`);
    out.push('');
  }
  return out;
}

export function renderMarkdown(r: Report): string {
  const m = r.machine;
  return [
    `# Bench report ${r.startedAt}${r.interrupted ? ' (interrupted: partial)' : ''}`,
    '',
    `- Target: ${r.target.url} (${r.target.startedByBench ? 'started by the bench' : 'already running'}, ${r.target.tls ? 'TLS' : 'plain HTTP'}, auth ${r.target.auth})`,
    `- Machine: ${m.cpus} × ${m.cpuModel}, ${(m.memoryBytes / 2 ** 30).toFixed(1)} GiB, ${m.os}, Node ${m.node}, load average ${m.loadAverage.map((l) => l.toFixed(2)).join(' ')}`,
    `- Command: \`npm run bench -- ${r.argv.join(' ')}\``,
    `- Requests: ${int(r.summary.requests)}, errors ${int(r.summary.errors)}; SLOs met ${r.summary.sloChecked - r.summary.sloFailed} of ${r.summary.sloChecked} (mutating and single-object p99 ≤ 1 s, list p99 ≤ 30 s)`,
    `- Server's apiserver_request_total: ${!r.metricsCheck.available ? 'not available' : r.metricsCheck.matched ? 'matches the requests sent' : `differs for ${r.metricsCheck.differences.length} series (other clients, or requests the server has not finished)`}`,
    '',
    '![latency over time](latency-over-time.svg) ![throughput](throughput.svg) ![latency CDF](latency-cdf.svg)',
    '',
    ...r.scenarios.flatMap(scenario),
  ].join('\n');
}
