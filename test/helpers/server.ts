/**
 * Starts the real server as a child process on a free loopback port with its own data
 * directory, waits for its "listening on" line, and offers small HTTP helpers.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { appendFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { once } from 'node:events';
import { request as httpRequest } from 'node:http';
import assert from 'node:assert/strict';
import { startEtcd, type TestEtcd } from './etcd.js';
import { until } from './poll.js';

const MAIN = resolve(process.cwd(), 'dist/src/main.js');

/**
 * TEST_SERVER_TIMES=<file>: every start and stop appends one JSON line (`{ "file", "what":
 * "start" | "stop", "ms" }`) there, to see what a run spends in server starts and stops
 * (scripts/measure-start.mjs measures one start alone).
 */
const TIMES = process.env.TEST_SERVER_TIMES;
function recordTime(what: 'start' | 'stop', since: number): void {
  if (!TIMES) return;
  const file = process.argv[1] ?? '';
  appendFileSync(TIMES, `${JSON.stringify({ file, what, ms: Math.round(performance.now() - since) })}\n`);
}

export interface TestServer {
  url: string;
  port: number;
  dataDir: string;
  proc: ChildProcess;
  /** what the server wrote on stderr so far */
  stderr(): string;
  stop(signal?: NodeJS.Signals): Promise<void>;
  /** removes the data directory (after stop) */
  cleanup(): void;
}

/**
 * PLAT_TEST_STORAGE=etcd3 runs every server a test starts on etcd: one etcd per test file
 * (started on first use, killed when the file's process exits), each data directory its own
 * --etcd-prefix (so a restart on the same data dir finds its objects). A test that picks its
 * storage itself (--storage-backend) is left as it is.
 */
const TEST_STORAGE = process.env.PLAT_TEST_STORAGE ?? 'lmdb';
let fileEtcd: Promise<TestEtcd> | undefined;

function etcdForThisFile(): Promise<TestEtcd> {
  if (!fileEtcd) {
    fileEtcd = startEtcd();
    void fileEtcd.then((e) => {
      // etcd must not keep the file's process alive: it goes when the process exits
      e.proc.unref();
      (e.proc.stderr as unknown as { unref?: () => void } | null)?.unref?.();
      const kill = () => {
        e.proc.kill('SIGKILL');
        rmSync(dirname(e.dataDir), { recursive: true, force: true });
      };
      process.once('exit', kill);
      process.once('SIGTERM', () => {
        kill();
        process.exit(143);
      });
    });
  }
  return fileEtcd;
}

async function storageArgs(args: string[], dir: string): Promise<string[]> {
  if (TEST_STORAGE !== 'etcd3' || args.includes('--storage-backend')) return [];
  const etcd = await etcdForThisFile();
  return ['--storage-backend', 'etcd3', '--etcd-servers', etcd.url, '--etcd-prefix', `/${basename(dir)}`];
}

export async function startServer(
  args: string[] = [],
  dataDir?: string,
  env?: Record<string, string>,
): Promise<TestServer> {
  const dir = dataDir ?? mkdtempSync(join(tmpdir(), 'plat-test-'));
  args = [...(await storageArgs(args, dir)), ...args];
  const started = performance.now();
  // the secure port (default 6443) stays off unless the test asks: tests never share a fixed port
  const proc = spawn(process.execPath, [MAIN, '--port', '0', '--secure-port', 'off', '--data-dir', dir, ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, ...env },
  });
  let out = '';
  let err = '';
  proc.stderr!.on('data', (d) => {
    err += d;
  });
  const port = await new Promise<number>((resolvePort, reject) => {
    proc.stdout!.on('data', (d) => {
      out += d;
      const m = /listening on http:\/\/[^:]+:(\d+)/.exec(out);
      if (m) resolvePort(Number(m[1]));
    });
    proc.once('exit', (code) => reject(new Error(`server exited with ${code}: ${err}`)));
  });
  recordTime('start', started);
  const url = `http://127.0.0.1:${port}`;
  return {
    url,
    port,
    dataDir: dir,
    proc,
    stderr: () => err,
    async stop(signal: NodeJS.Signals = 'SIGTERM') {
      if (proc.exitCode !== null || proc.signalCode !== null) return;
      const exited = once(proc, 'exit');
      const stopping = performance.now();
      proc.kill(signal);
      await exited;
      recordTime('stop', stopping);
    },
    cleanup() {
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * Starts one server per argument list, one at a time; if one fails to start, stops (and cleans
 * up) those already started before rethrowing, so nothing is left running.
 */
export async function startServers<const A extends readonly string[][]>(
  ...argLists: A
): Promise<{ -readonly [K in keyof A]: TestServer }> {
  const started: TestServer[] = [];
  try {
    for (const args of argLists) started.push(await startServer(args));
  } catch (e) {
    await stopServers(started);
    throw e;
  }
  // one server per argument list, in order: the tuple type says so
  return started as { -readonly [K in keyof A]: TestServer };
}

/** Stops and cleans up every server given (skipping those that never started). */
export async function stopServers(servers: (TestServer | undefined)[]): Promise<void> {
  for (const t of servers) {
    if (!t) continue;
    await t.stop();
    t.cleanup();
  }
}

/**
 * Two servers on one etcd prefix (one API served twice), with `namespace` created through A and
 * seen by B: it reaches B through B's etcd watch, and B's admission needs it for creates.
 */
export async function startEtcdPair(
  etcdServers: string,
  prefix: string,
  namespace: string,
): Promise<[TestServer, TestServer]> {
  const args = ['--storage-backend', 'etcd3', '--etcd-servers', etcdServers, '--etcd-prefix', prefix];
  const [a, b] = (await startServers(args, args)) as [TestServer, TestServer];
  try {
    const r = await request(a.url, 'POST', '/api/v1/namespaces', { metadata: { name: namespace } });
    assert.equal(r.status, 201, r.text);
    await until(
      async () => ((await request(b.url, 'GET', `/api/v1/namespaces/${namespace}`)).status === 200 ? true : undefined),
      'namespace on B',
    );
  } catch (e) {
    await stopServers([a, b]);
    throw e;
  }
  return [a, b];
}

export interface Reply {
  status: number;
  headers: Headers;
  text: string;
  json: any;
}

export async function request(
  base: string,
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<Reply> {
  const init: RequestInit = { method, headers: { ...headers } };
  if (body !== undefined) {
    init.body = typeof body === 'string' || body instanceof Uint8Array ? (body as string) : JSON.stringify(body);
    if (!headers['content-type']) (init.headers as Record<string, string>)['content-type'] = 'application/json';
  }
  const res = await fetch(base + path, init);
  const text = await res.text();
  let json: any;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.status, headers: res.headers, text, json };
}

export interface WarningsReply {
  status: number;
  warnings: string[];
  json: any;
}

/**
 * A request through node:http that keeps every Warning header line as sent (`299 - "..."`):
 * fetch joins repeated headers into one. A body that is not a string is sent as JSON.
 */
export function requestWithWarnings(
  base: string,
  method: string,
  path: string,
  body: unknown,
  contentType = 'application/json',
): Promise<WarningsReply> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(base + path, { method, headers: { 'content-type': contentType } }, (res) => {
      let text = '';
      res.on('data', (d) => {
        text += d;
      });
      res.on('end', () => {
        const warnings: string[] = [];
        for (let i = 0; i < res.rawHeaders.length; i += 2)
          if (res.rawHeaders[i]!.toLowerCase() === 'warning') warnings.push(res.rawHeaders[i + 1]!);
        resolve({ status: res.statusCode!, warnings, json: text ? JSON.parse(text) : undefined });
      });
    });
    req.on('error', reject);
    req.end(typeof body === 'string' ? body : JSON.stringify(body));
  });
}

/** A ConfigMap body for tests. */
export function configMap(
  name: string,
  labels: Record<string, string> = {},
  data: Record<string, string> = { k: 'v' },
): object {
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, labels }, data };
}
