/**
 * `node dist/bench/csr-signing.js [N]` (after `npm run build`): the built-in CSR signer under a
 * burst. Starts the server, creates N CertificateSigningRequests at once (one openssl request
 * reused under N names) next to N ConfigMaps for comparison, approves all at once, and reports
 * how long until every one has its certificate. Loopback only; every loop is bounded.
 */
import { spawn } from 'node:child_process';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const N = Number(process.argv[2] ?? 200);
const dir = mkdtempSync(join(tmpdir(), 'csr-bench-'));
execFileSync(
  '/usr/bin/openssl',
  [
    'req',
    '-new',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:prime256v1',
    '-nodes',
    '-keyout',
    join(dir, 'k'),
    '-out',
    join(dir, 'r.csr'),
    '-subj',
    '/CN=bench',
  ],
  { stdio: 'ignore' },
);
const server = spawn(process.execPath, [resolve('dist/src/main.js'), '--port', '0', '--data-dir', join(dir, 'data')], {
  stdio: ['ignore', 'pipe', 'inherit'],
});

async function main(): Promise<void> {
  const url = await new Promise<string>((done) => {
    let out = '';
    server.stdout!.on('data', (d) => {
      out += d;
      const m = /listening on (http:\/\/\S+)/.exec(out);
      if (m) done(m[1]!);
    });
  });
  const U = `${url}/apis/certificates.plat.io/v1/certificatesigningrequests`;
  const request = readFileSync(join(dir, 'r.csr')).toString('base64');
  const call = async (method: string, path: string, body?: unknown) => {
    const r = await fetch(path, {
      method,
      headers: { 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: r.status, json: (await r.json()) as any };
  };
  const csr = (name: string) => ({
    metadata: { name },
    spec: { request, signerName: 'platform.io/kube-apiserver-client', usages: ['client auth'] },
  });
  // the first signing creates the cluster CA: not part of the figures
  await call('POST', U, csr('warm-up'));
  let t = performance.now();
  const created = await Promise.all(Array.from({ length: N }, (_, i) => call('POST', U, csr(`c${i}`))));
  const createCsrMs = performance.now() - t;
  if (created.some((c) => c.status !== 201)) throw new Error('a create failed');
  t = performance.now();
  await Promise.all(
    Array.from({ length: N }, (_, i) =>
      call('POST', `${url}/api/v1/namespaces/default/configmaps`, { metadata: { name: `m${i}` }, data: { a: 'b' } }),
    ),
  );
  const createConfigMapMs = performance.now() - t;
  t = performance.now();
  await Promise.all(
    created.map((c) =>
      call('PUT', `${U}/${c.json.metadata.name}/approval`, {
        ...c.json,
        status: { conditions: [{ type: 'Approved', status: 'True' }] },
      }),
    ),
  );
  const approveMs = performance.now() - t;
  let issued = 0;
  for (let i = 0; i < 3000 && issued < N; i++) {
    const items: any[] = (await call('GET', U)).json.items;
    issued = items.filter((c) => c.metadata.name !== 'warm-up' && c.status?.certificate).length;
    if (issued < N) await new Promise((r) => setTimeout(r, 10));
  }
  const allIssuedMs = performance.now() - t;
  const f = (ms: number) => `${ms.toFixed(0)} ms`;
  console.log(`| N | create N CSRs | create N ConfigMaps | approve N | approval burst start → all issued | issued |`);
  console.log(`|---|---|---|---|---|---|`);
  console.log(
    `| ${N} | ${f(createCsrMs)} | ${f(createConfigMapMs)} | ${f(approveMs)} | ${f(allIssuedMs)} | ${issued} |`,
  );
}

void main().finally(() => {
  server.kill('SIGTERM');
  server.once('exit', () => rmSync(dir, { recursive: true, force: true }));
});
