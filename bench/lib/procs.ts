/**
 * Child processes of a benchmark run: the real server and the hello-world ceiling, each on a
 * free loopback port, found through the "listening on" line they print.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { once } from 'node:events';
import { createServer } from 'node:net';
import { statField } from '../../src/metrics/process-metrics.js';

export const DIST = fileURLToPath(new URL('../../', import.meta.url));
export const MAIN_JS = join(DIST, 'src/main.js');
export const HELLO_JS = join(DIST, 'bench/hello.js');

export interface Child {
  proc: ChildProcess;
  pid: number;
  port: number;
  url: string;
  /** the server's HTTPS port, when it printed `secure listening on https://...` */
  securePort?: number;
  stop(): Promise<void>;
}

const START_TIMEOUT_MS = 30_000;

export async function startChild(script: string, args: string[], nodeArgs: string[] = []): Promise<Child> {
  const proc = spawn(process.execPath, [...nodeArgs, script, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  proc.stderr!.on('data', (d: Buffer) => {
    err = (err + d.toString()).slice(-10_000);
  });
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => {
      proc.kill('SIGKILL');
      reject(new Error(`${script} did not start in time: ${err}`));
    }, START_TIMEOUT_MS);
    proc.stdout!.on('data', (d: Buffer) => {
      out = (out + d.toString()).slice(-10_000);
      const m = /listening on http:\/\/[^:]+:(\d+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(Number(m[1]));
      }
    });
    proc.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${script} exited with ${code}: ${err}`));
    });
  });
  proc.removeAllListeners('exit');
  // the server prints its secure line before the plain one
  const secure = /secure listening on https:\/\/[^:]+:(\d+)/.exec(out);
  return {
    proc,
    pid: proc.pid!,
    port,
    url: `http://127.0.0.1:${port}`,
    securePort: secure ? Number(secure[1]) : undefined,
    async stop() {
      if (proc.exitCode !== null || proc.signalCode !== null) return;
      const exited = once(proc, 'exit');
      proc.kill('SIGTERM');
      const timer = setTimeout(() => proc.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

export interface ServerChild extends Child {
  dataDir: string;
  cleanup(): void;
}

/** Starts the real server with a fresh data directory (removed by cleanup). */
export async function startServer(nodeArgs: string[] = [], serverArgs: string[] = []): Promise<ServerChild> {
  const dataDir = mkdtempSync(join(tmpdir(), 'plat-bench-'));
  const cleanup = (): void => rmSync(dataDir, { recursive: true, force: true });
  try {
    // plain port only unless the benchmark asks for the secure one (default 6443)
    const c = await startChild(
      MAIN_JS,
      ['--port', '0', '--secure-port', 'off', '--data-dir', dataDir, ...serverArgs],
      nodeArgs,
    );
    return { ...c, dataDir, cleanup };
  } catch (e) {
    cleanup();
    throw e;
  }
}

/** The hello-world ceiling answering with a body of exactly bodyBytes bytes. */
export function startHello(bodyBytes: number, opts: { status?: number; fanout?: boolean } = {}): Promise<Child> {
  const args = ['--body-bytes', String(bodyBytes)];
  if (opts.status) args.push('--status', String(opts.status));
  if (opts.fanout) args.push('--fanout');
  return startChild(HELLO_JS, args);
}

/** Resident set size of a process in bytes (VmRSS). */
export function rssBytes(pid: number): number {
  const m = /VmRSS:\s+(\d+)\s+kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  if (!m) throw new Error(`no VmRSS for ${pid}`);
  return Number(m[1]) * 1024;
}

/**
 * CPU time (user + system) a process has used, in seconds (USER_HZ = 100 on Linux); with
 * `mainThreadOnly`, only its main thread's (the uWS front thread of the server).
 */
export function cpuSeconds(pid: number, mainThreadOnly = false): number {
  const stat = readFileSync(mainThreadOnly ? `/proc/${pid}/task/${pid}/stat` : `/proc/${pid}/stat`, 'utf8');
  return ((statField(stat, 14) ?? 0) + (statField(stat, 15) ?? 0)) / 100;
}

/** Machine-wide CPU counters from /proc/stat (all CPUs, in ticks). */
export function machineTicks(): { busy: number; total: number } {
  const f = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0]!.trim().split(/\s+/).slice(1, 9).map(Number);
  const total = f.reduce((a, b) => a + b, 0);
  return { busy: total - f[3]! - f[4]!, total };
}

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** A loopback port free a moment ago (for servers whose port must be known before they start). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const port = (srv.address() as { port: number }).port;
      srv.close(() => resolve(port));
    });
  });
}
