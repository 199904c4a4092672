/**
 * `node dist/bench/admission-webhook.js [--count 400] [--clients 16]`
 *
 * Webhook overhead per request: ConfigMap creates against one fresh server process, first with
 * no webhook, then with a no-op validating webhook, a no-op mutating webhook, and a mutating
 * webhook returning a one-operation JSONPatch (each configuration removed before the next).
 * The webhook is a loopback HTTPS server in this process (its own CA in caBundle). Reports the
 * sequential latency (1 client: mean, p50, p99) and the throughput with --clients concurrent
 * clients; the overhead is the difference against the no-webhook row.
 */
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const MAIN = fileURLToPath(new URL('../src/main.js', import.meta.url));
const arg = (name: string, fallback: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : fallback;
};
const COUNT = arg('count', 400);
const CLIENTS = arg('clients', 16);

function pki(dir: string): { cert: Buffer; key: Buffer; ca: Buffer } {
  const ssl = (...a: string[]) =>
    execFileSync('/usr/bin/openssl', a, { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  ssl(
    'req',
    '-x509',
    ...ec,
    '-keyout',
    'ca.key',
    '-out',
    'ca.crt',
    '-days',
    '1',
    '-subj',
    '/CN=bench-ca',
    '-addext',
    'basicConstraints=critical,CA:TRUE',
    '-addext',
    'keyUsage=critical,keyCertSign,digitalSignature',
  );
  ssl('req', '-new', ...ec, '-keyout', 'hook.key', '-out', 'hook.csr', '-subj', '/CN=hook');
  writeFileSync(join(dir, 'hook.ext'), 'subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth\n');
  ssl(
    'x509',
    '-req',
    '-in',
    'hook.csr',
    '-CA',
    'ca.crt',
    '-CAkey',
    'ca.key',
    '-CAcreateserial',
    '-out',
    'hook.crt',
    '-days',
    '1',
    '-extfile',
    'hook.ext',
  );
  return {
    cert: readFileSync(join(dir, 'hook.crt')),
    key: readFileSync(join(dir, 'hook.key')),
    ca: readFileSync(join(dir, 'ca.crt')),
  };
}

async function start(dir: string, args: string[] = []): Promise<{ url: string; proc: ChildProcess }> {
  const proc = spawn(
    process.execPath,
    [MAIN, '--port', '0', '--secure-port', 'off', '--data-dir', join(dir, `data-${args.join('')}`), ...args],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const port = await new Promise<number>((resolve, reject) => {
    let out = '';
    proc.stdout!.on('data', (d) => {
      out += d;
      const m = /listening on http:\/\/[^:]+:(\d+)/.exec(out);
      if (m) resolve(Number(m[1]));
    });
    proc.once('exit', (code) => reject(new Error(`server exited with ${code}`)));
  });
  return { url: `http://127.0.0.1:${port}`, proc };
}

async function post(url: string, body: unknown): Promise<number> {
  const r = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  await r.arrayBuffer();
  return r.status;
}

let seq = 0;
const cm = () => ({ metadata: { name: `cm-${++seq}` }, data: { a: 'x'.repeat(200), b: 'y'.repeat(200) } });
const pod = () => ({ metadata: { name: `pod-${++seq}` }, spec: { containers: [{ name: 'c', image: 'busybox' }] } });

async function measure(
  url: string,
  resource = 'configmaps',
  body: () => unknown = cm,
): Promise<{ mean: number; p50: number; p99: number; rps: number }> {
  const path = `${url}/api/v1/namespaces/default/${resource}`;
  for (let i = 0; i < 50; i++) await post(path, body()); // warm-up
  const lat: number[] = [];
  for (let i = 0; i < COUNT; i++) {
    const t = performance.now();
    if ((await post(path, body())) !== 201) throw new Error('create failed');
    lat.push(performance.now() - t);
  }
  lat.sort((a, b) => a - b);
  const t0 = performance.now();
  let left = COUNT * 2;
  await Promise.all(
    Array.from({ length: CLIENTS }, async () => {
      while (left-- > 0) if ((await post(path, body())) !== 201) throw new Error('create failed');
    }),
  );
  const rps = (COUNT * 2) / ((performance.now() - t0) / 1000);
  return {
    mean: lat.reduce((a, b) => a + b, 0) / lat.length,
    p50: lat[Math.floor(lat.length / 2)]!,
    p99: lat[Math.floor(lat.length * 0.99)]!,
    rps,
  };
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'plat-bench-adm-'));
  const tls = pki(dir);
  const hook = createServer({ cert: tls.cert, key: tls.key }, (req, res) => {
    let text = '';
    req.on('data', (c) => {
      text += c;
    });
    req.on('end', () => {
      const review = JSON.parse(text);
      const response: Record<string, unknown> = { uid: review.request.uid, allowed: true };
      if (req.url?.startsWith('/patch')) {
        response.patchType = 'JSONPatch';
        response.patch = Buffer.from(
          JSON.stringify([{ op: 'add', path: '/metadata/labels', value: { hooked: 'yes' } }]),
        ).toString('base64');
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ apiVersion: review.apiVersion, kind: 'AdmissionReview', response }));
    });
  });
  await new Promise<void>((done) => hook.listen(0, '127.0.0.1', done));
  const base = `https://127.0.0.1:${(hook.address() as AddressInfo).port}`;
  const s = await start(dir);
  const AR = `${s.url}/apis/admissionregistration.plat.io/v1`;
  const webhook = (path: string) => ({
    name: 'bench.webhook.plat.io',
    clientConfig: { url: base + path, caBundle: tls.ca.toString('base64') },
    sideEffects: 'None',
    admissionReviewVersions: ['v1'],
    rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['configmaps'] }],
  });
  const rows: [string, Awaited<ReturnType<typeof measure>>][] = [];
  try {
    rows.push(['no webhook', await measure(s.url)]);
    for (const [label, kind, path] of [
      ['validating, no-op', 'validating', '/noop'],
      ['mutating, no-op', 'mutating', '/noop'],
      ['mutating, JSONPatch', 'mutating', '/patch'],
    ] as const) {
      const plural = `${kind}webhookconfigurations`;
      if ((await post(`${AR}/${plural}`, { metadata: { name: 'bench' }, webhooks: [webhook(path)] })) !== 201)
        throw new Error('configuration refused');
      rows.push([label, await measure(s.url)]);
      await (await fetch(`${AR}/${plural}/bench`, { method: 'DELETE' })).arrayBuffer();
    }
  } finally {
    s.proc.kill('SIGKILL');
    hook.close();
  }
  const base0 = rows[0]![1];
  // the ServiceAccount plugin (on by default) previews every pod create: pods with it on and off
  const podRows: [string, Awaited<ReturnType<typeof measure>>][] = [];
  for (const [label, args] of [
    ['ServiceAccount on (default)', []],
    ['--disable-admission-plugins ServiceAccount', ['--disable-admission-plugins', 'ServiceAccount']],
  ] as const) {
    const p = await start(dir, [...args]);
    try {
      podRows.push([label, await measure(p.url, 'pods', pod)]);
    } finally {
      p.proc.kill('SIGKILL');
    }
  }
  rmSync(dir, { recursive: true, force: true });
  console.log(`| webhook | mean | p50 | p99 | overhead (mean) | creates/s, ${CLIENTS} clients |`);
  console.log('| --- | ---: | ---: | ---: | ---: | ---: |');
  for (const [label, m] of rows) {
    console.log(
      `| ${label} | ${m.mean.toFixed(2)} ms | ${m.p50.toFixed(2)} ms | ${m.p99.toFixed(2)} ms | ${label === 'no webhook' ? '—' : `+${(m.mean - base0.mean).toFixed(2)} ms`} | ${m.rps.toFixed(0)} |`,
    );
  }
  console.log(`\n| pod creates | mean | p50 | p99 | creates/s, ${CLIENTS} clients |`);
  console.log('| --- | ---: | ---: | ---: | ---: |');
  for (const [label, m] of podRows)
    console.log(
      `| ${label} | ${m.mean.toFixed(2)} ms | ${m.p50.toFixed(2)} ms | ${m.p99.toFixed(2)} ms | ${m.rps.toFixed(0)} |`,
    );
}

void main().catch((e) => {
  console.error(e);
  process.exit(1);
});
