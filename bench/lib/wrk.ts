/** Runs Debian's wrk against a loopback URL and parses its `--latency` report. */
import { execFile } from 'node:child_process';

export const WRK = '/usr/bin/wrk';

export interface WrkRun {
  url: string;
  threads: number;
  connections: number;
  durationSec: number;
  script?: string;
  /** arguments for the script's init(args), after `--` */
  scriptArgs?: string[];
  timeoutSec?: number;
  /** request headers, `Name: value` */
  headers?: string[];
}

export interface WrkResult {
  command: string;
  requests: number;
  reqPerSec: number;
  p50Ms: number;
  p99Ms: number;
  /** socket errors plus non-2xx/3xx responses, plus what the script counted as wrong */
  errors: number;
  raw: string;
}

export function wrkArgs(r: WrkRun): string[] {
  const args = [
    '-t' + r.threads,
    '-c' + r.connections,
    '-d' + r.durationSec + 's',
    '--latency',
    '--timeout',
    (r.timeoutSec ?? 10) + 's',
  ];
  for (const h of r.headers ?? []) args.push('-H', h);
  if (r.script) args.push('-s', r.script);
  args.push(r.url);
  if (r.scriptArgs?.length) args.push('--', ...r.scriptArgs);
  return args;
}

export function runWrk(r: WrkRun): Promise<WrkResult> {
  const args = wrkArgs(r);
  const command = [WRK, ...args].map((a) => (/[\s;,*]/.test(a) ? `'${a}'` : a)).join(' ');
  return new Promise((resolve, reject) => {
    execFile(WRK, args, { timeout: (r.durationSec + 60) * 1000, maxBuffer: 16 << 20 }, (err, stdout, stderr) => {
      if (err) return reject(new Error(`${command} failed: ${err.message}\n${stderr}`));
      try {
        resolve({ command, ...parseWrk(stdout) });
      } catch (e) {
        reject(e);
      }
    });
  });
}

const UNITS: Record<string, number> = { us: 0.001, ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

function toMs(v: string): number {
  const m = /^([0-9.]+)(us|ms|s|m|h)$/.exec(v);
  if (!m) throw new Error(`cannot parse wrk duration "${v}"`);
  return Number(m[1]) * UNITS[m[2]!]!;
}

export function parseWrk(out: string): Omit<WrkResult, 'command'> {
  const rps = /Requests\/sec:\s+([0-9.]+)/.exec(out);
  const total = /(\d+) requests in/.exec(out);
  const p50 = /^\s+50%\s+(\S+)/m.exec(out);
  const p99 = /^\s+99%\s+(\S+)/m.exec(out);
  if (!rps || !total || !p50 || !p99) throw new Error(`unexpected wrk output:\n${out}`);
  let errors = 0;
  const sock = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(out);
  if (sock) errors += Number(sock[1]) + Number(sock[2]) + Number(sock[3]) + Number(sock[4]);
  const non2xx = /Non-2xx or 3xx responses: (\d+)/.exec(out);
  const scripted = /^unexpected-status (\d+)$/m.exec(out);
  if (scripted) errors += Number(scripted[1]);
  else if (non2xx) errors += Number(non2xx[1]);
  return {
    requests: Number(total[1]),
    reqPerSec: Number(rps[1]),
    p50Ms: toMs(p50[1]!),
    p99Ms: toMs(p99[1]!),
    errors,
    raw: out,
  };
}
