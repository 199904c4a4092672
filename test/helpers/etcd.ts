/**
 * Starts a real single-member etcd as a child process on free loopback ports with its data
 * under a temp dir, waits until it answers /health, and stops and removes it afterwards.
 * A missing etcd binary is an error, never a skip: install Debian's `etcd-server` (.ci/run
 * does) or point ETCD_BIN at the binary.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import https from 'node:https';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { once } from 'node:events';
import { setTimeout as delay } from 'node:timers/promises';

/** PEM files of a test CA, etcd's server certificate and a client certificate. */
export interface TestTls {
  caFile: string;
  certFile: string;
  keyFile: string;
  serverCertFile: string;
  serverKeyFile: string;
}

export interface TestEtcd {
  /** client URL, http://127.0.0.1:<port> (https:// with TLS) */
  url: string;
  /** set when started with TLS: clients must present certFile/keyFile and trust caFile */
  tls?: TestTls;
  dataDir: string;
  proc: ChildProcess;
  stop(signal?: NodeJS.Signals): Promise<void>;
  /** stops etcd (if running) and removes its data directory and certificates */
  cleanup(): Promise<void>;
}

const READY_TIMEOUT_MS = 30_000;
const POLL_MS = 50;
const START_ATTEMPTS = 3;

export function etcdBinary(): string {
  const bin = process.env.ETCD_BIN ?? '/usr/bin/etcd';
  if (!existsSync(bin)) {
    throw new Error(`etcd not found at ${bin}: install the Debian package etcd-server (.ci/run does) or set ETCD_BIN`);
  }
  return bin;
}

/** A loopback port that was free a moment ago (the OS picks it). */
async function freePort(): Promise<number> {
  const srv = createServer();
  srv.listen(0, '127.0.0.1');
  await once(srv, 'listening');
  const port = (srv.address() as { port: number }).port;
  srv.close();
  await once(srv, 'close');
  return port;
}

/**
 * Starts etcd; retries on a fresh pair of ports when it exits during start-up (another
 * process may have taken a port between freePort() and etcd's bind).
 */
export async function startEtcd(opts: { tls?: boolean } = {}): Promise<TestEtcd> {
  const bin = etcdBinary();
  let lastError: Error | undefined;
  for (let attempt = 0; attempt < START_ATTEMPTS; attempt++) {
    // <root>/data is etcd's data dir; certificates sit beside it in <root>
    const root = mkdtempSync(join(tmpdir(), 'plat-etcd-'));
    try {
      return await startOnce(bin, root, opts.tls ? makeTls(join(root, 'pki-')) : undefined);
    } catch (e) {
      lastError = e as Error;
      rmSync(root, { recursive: true, force: true });
    }
  }
  throw new Error(`etcd did not start after ${START_ATTEMPTS} attempts: ${lastError?.message}`);
}

async function startOnce(bin: string, root: string, tls: TestTls | undefined): Promise<TestEtcd> {
  const dataDir = join(root, 'data');
  const [clientPort, peerPort] = [await freePort(), await freePort()];
  const url = `${tls ? 'https' : 'http'}://127.0.0.1:${clientPort}`;
  const peer = `http://127.0.0.1:${peerPort}`;
  const proc = spawn(
    bin,
    [
      '--name',
      'test',
      '--data-dir',
      dataDir,
      '--listen-client-urls',
      url,
      '--advertise-client-urls',
      url,
      '--listen-peer-urls',
      peer,
      '--initial-advertise-peer-urls',
      peer,
      '--initial-cluster',
      `test=${peer}`,
      '--initial-cluster-state',
      'new',
      ...(tls
        ? [
            '--cert-file',
            tls.serverCertFile,
            '--key-file',
            tls.serverKeyFile,
            '--trusted-ca-file',
            tls.caFile,
            '--client-cert-auth',
          ]
        : []),
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let log = '';
  proc.stderr!.on('data', (d) => {
    log = (log + d).slice(-4000);
  });
  let exited = false;
  proc.once('exit', () => {
    exited = true;
  });
  const stop = async (signal: NodeJS.Signals = 'SIGTERM') => {
    if (proc.exitCode !== null || proc.signalCode !== null) return;
    const done = once(proc, 'exit');
    proc.kill(signal);
    await done;
  };
  const started = Date.now();
  for (;;) {
    if (exited) throw new Error(`etcd exited during start-up: ${log.slice(-1000)}`);
    if (Date.now() - started > READY_TIMEOUT_MS) {
      await stop('SIGKILL');
      throw new Error(`etcd not healthy within ${READY_TIMEOUT_MS}ms: ${log.slice(-1000)}`);
    }
    if (await healthy(url, tls)) break;
    await delay(POLL_MS); // poll interval of the bounded readiness loop
  }
  return {
    url,
    dataDir,
    proc,
    stop,
    tls,
    async cleanup() {
      await stop();
      rmSync(root, { recursive: true, force: true });
    },
  };
}

async function healthy(url: string, tls: TestTls | undefined): Promise<boolean> {
  try {
    const body = tls
      ? await httpsGet(`${url}/health`, tls)
      : await (await fetch(`${url}/health`, { signal: AbortSignal.timeout(1000) })).text();
    return (JSON.parse(body) as { health?: string }).health === 'true';
  } catch {
    return false;
  }
}

function httpsGet(url: string, tls: TestTls): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = https.get(
      url,
      { ca: readFileSync(tls.caFile), cert: readFileSync(tls.certFile), key: readFileSync(tls.keyFile), timeout: 1000 },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => {
          body += d;
        });
        res.on('end', () => resolve(body));
      },
    );
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', reject);
  });
}

/** A throw-away CA signing a server certificate for 127.0.0.1 and a client certificate. */
function makeTls(base: string): TestTls {
  const f = (name: string) => `${base}${name}`;
  const openssl = (...args: string[]) => {
    const r = spawnSync('openssl', args, { encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`openssl ${args[0]} failed: ${r.error?.message ?? r.stderr}`);
  };
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  openssl(
    'req',
    '-x509',
    ...ec,
    '-keyout',
    f('ca.key'),
    '-out',
    f('ca.crt'),
    '-days',
    '1',
    '-subj',
    '/CN=plat-test-ca',
  );
  for (const [who, ext] of [
    ['server', 'subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth'],
    ['client', 'extendedKeyUsage=clientAuth'],
  ] as const) {
    writeFileSync(f(`${who}.ext`), ext + '\n');
    openssl('req', ...ec, '-keyout', f(`${who}.key`), '-out', f(`${who}.csr`), '-subj', `/CN=plat-test-${who}`);
    openssl(
      'x509',
      '-req',
      '-in',
      f(`${who}.csr`),
      '-CA',
      f('ca.crt'),
      '-CAkey',
      f('ca.key'),
      '-CAcreateserial',
      '-out',
      f(`${who}.crt`),
      '-days',
      '1',
      '-extfile',
      f(`${who}.ext`),
    );
  }
  return {
    caFile: f('ca.crt'),
    certFile: f('client.crt'),
    keyFile: f('client.key'),
    serverCertFile: f('server.crt'),
    serverKeyFile: f('server.key'),
  };
}

/** One member of a test cluster: stop it (kill -9 by default) and start it again on the same ports and data. */
export interface ClusterMember {
  name: string;
  url: string;
  stop(signal?: NodeJS.Signals): Promise<void>;
  /** starts the member again (after stop) and waits until it answers /health (quorum) */
  restart(): Promise<void>;
}

export interface TestEtcdCluster {
  urls: string[];
  members: ClusterMember[];
  /** whether a member answers /health with quorum */
  healthy(url: string): Promise<boolean>;
  cleanup(): Promise<void>;
}

/**
 * Starts an n-member etcd cluster on free loopback ports, data under one temp dir, and waits
 * until every member reports health (a quorum with a leader).
 */
export async function startEtcdCluster(n = 3): Promise<TestEtcdCluster> {
  const bin = etcdBinary();
  const root = mkdtempSync(join(tmpdir(), 'plat-etcd-cluster-'));
  const ports: [number, number][] = [];
  for (let i = 0; i < n; i++) ports.push([await freePort(), await freePort()]);
  const initial = ports.map(([, p], i) => `m${i}=http://127.0.0.1:${p}`).join(',');
  const procs: (ChildProcess | undefined)[] = [];
  const spawnMember = (i: number) => {
    const [cp, pp] = ports[i]!;
    const url = `http://127.0.0.1:${cp}`,
      peer = `http://127.0.0.1:${pp}`;
    const proc = spawn(
      bin,
      [
        '--name',
        `m${i}`,
        '--data-dir',
        join(root, `m${i}`),
        '--listen-client-urls',
        url,
        '--advertise-client-urls',
        url,
        '--listen-peer-urls',
        peer,
        '--initial-advertise-peer-urls',
        peer,
        '--initial-cluster',
        initial,
        '--initial-cluster-state',
        'new',
        '--initial-cluster-token',
        'plat-test',
        // loopback: short elections keep failover within the tests' bounded waits
        '--heartbeat-interval',
        '50',
        '--election-timeout',
        '500',
      ],
      { stdio: ['ignore', 'ignore', 'ignore'] },
    );
    procs[i] = proc;
  };
  const waitHealthy = async (url: string) => {
    const started = Date.now();
    while (!(await healthy(url, undefined))) {
      if (Date.now() - started > READY_TIMEOUT_MS)
        throw new Error(`etcd member ${url} not healthy within ${READY_TIMEOUT_MS}ms`);
      await delay(POLL_MS); // poll interval of the bounded readiness loop
    }
  };
  const stopMember = async (i: number, signal: NodeJS.Signals = 'SIGKILL') => {
    const proc = procs[i];
    if (!proc || proc.exitCode !== null || proc.signalCode !== null) return;
    const done = once(proc, 'exit');
    proc.kill(signal);
    await done;
  };
  const urls = ports.map(([cp]) => `http://127.0.0.1:${cp}`);
  for (let i = 0; i < n; i++) spawnMember(i);
  try {
    await Promise.all(urls.map(waitHealthy));
  } catch (e) {
    for (let i = 0; i < n; i++) await stopMember(i);
    rmSync(root, { recursive: true, force: true });
    throw e;
  }
  return {
    urls,
    members: urls.map((url, i) => ({
      name: `m${i}`,
      url,
      stop: (signal) => stopMember(i, signal),
      restart: async () => {
        spawnMember(i);
        await waitHealthy(url);
      },
    })),
    healthy: (url) => healthy(url, undefined),
    async cleanup() {
      for (let i = 0; i < n; i++) await stopMember(i, 'SIGTERM');
      rmSync(root, { recursive: true, force: true });
    },
  };
}
