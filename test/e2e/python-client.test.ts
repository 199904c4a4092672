/**
 * A second client library: Debian's python3-kubernetes (issue 19), run by /usr/bin/python3 on
 * the fixture scripts in test/fixtures/python against a server under --api-domain k8s.io,
 * over the plain port and over the secure port with the server's admin kubeconfig. Typed
 * CRUD, a chunked LIST through `_continue`, and a watch whose events reach the script one by
 * one: each object is written only after the script printed the previous event.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { startServer, request, type TestServer } from '../helpers/server.js';
import { until } from '../helpers/poll.js';

const PYTHON = '/usr/bin/python3';
const SCRIPTS = resolve(process.cwd(), 'test/fixtures/python');

let s: TestServer;
let kubeconfig: string;
before(async () => {
  s = await startServer(['--api-domain', 'k8s.io', '--secure-port', '0']);
  kubeconfig = join(s.dataDir, 'admin.kubeconfig');
  await until(async () => (existsSync(kubeconfig) ? true : undefined), 'the admin kubeconfig', 20_000);
});
after(async () => {
  await s.stop();
  s.cleanup();
});

interface Line {
  event: string;
  ts: number;
  [k: string]: any;
}

/** A running fixture script: its JSON lines as they arrive. */
class Script {
  readonly lines: Line[] = [];
  stderr = '';
  readonly exited: Promise<number>;
  private readonly proc: ChildProcess;
  private partial = '';

  constructor(name: string, args: string[], env: Record<string, string>) {
    this.proc = spawn(PYTHON, [join(SCRIPTS, name), ...args], {
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.proc.stdout!.setEncoding('utf8').on('data', (d: string) => {
      const parts = (this.partial + d).split('\n');
      this.partial = parts.pop()!;
      for (const p of parts) if (p.trim()) this.lines.push(JSON.parse(p));
    });
    this.proc.stderr!.setEncoding('utf8').on('data', (d: string) => {
      this.stderr += d;
    });
    this.exited = new Promise((done) => {
      this.proc.once('exit', (code) => done(code ?? -1));
      // no /usr/bin/python3: a failed test that says so, not a crash of the test process
      this.proc.once('error', (e) => {
        this.stderr += `${PYTHON}: ${e.message}`;
        done(-1);
      });
    });
    const timer = setTimeout(() => this.proc.kill('SIGKILL'), 60_000);
    void this.exited.then(() => clearTimeout(timer));
  }

  of(event: string): Line[] {
    return this.lines.filter((l) => l.event === event);
  }

  async finished(): Promise<void> {
    const code = await this.exited;
    assert.equal(code, 0, `script failed: ${this.stderr.slice(-2000)}`);
  }
}

const plain = (): Record<string, string> => ({ PLAT_URL: s.url });
const secure = (): Record<string, string> => ({ PLAT_KUBECONFIG: kubeconfig });

test('typed CRUD with the Python client, plain and secure', async () => {
  for (const [ns, env] of [
    ['py-plain', plain()],
    ['py-secure', secure()],
  ] as const) {
    const run = new Script('crud.py', [ns], env);
    await run.finished();
    const one = (e: string) => {
      const l = run.of(e);
      assert.equal(l.length, 1, `${e} in ${JSON.stringify(run.lines)}`);
      return l[0]!;
    };
    assert.deepEqual(one('namespace').labels, { 'kubernetes.io/metadata.name': ns });
    assert.equal(one('namespace').phase, 'Active');
    assert.match(one('created').uid, /^[0-9a-f-]{36}$/);
    assert.deepEqual(one('replaced').data, { a: '1', b: '2' });
    assert.ok(Number(one('replaced').rv) > Number(one('created').rv));
    assert.deepEqual(one('patched').data, { a: '1', b: '2', c: '3' });
    assert.deepEqual(one('patched').labels, { app: 'py', patched: 'yes' });
    const pod = one('pod');
    assert.deepEqual(
      [pod.policy, pod.restart, pod.port, pod.protocol, pod.phase],
      ['IfNotPresent', 'Always', 80, 'TCP', 'Pending'],
    );
    assert.deepEqual(one('listed').names, ['settings']);
    assert.equal(one('listed').kind, 'ConfigMapList');
    assert.equal(one('deleted').status, 'Success');
    assert.equal(one('not-found').status, 404);
  }
});

test('chunked LIST through _continue with the Python client', async () => {
  const ns = 'py-chunks';
  assert.equal((await request(s.url, 'POST', '/api/v1/namespaces', { metadata: { name: ns } })).status, 201);
  const names = Array.from({ length: 7 }, (_, i) => `cm-${i}`);
  for (const name of names) {
    const r = await request(s.url, 'POST', `/api/v1/namespaces/${ns}/configmaps`, {
      metadata: { name, labels: { set: 'chunk' } },
    });
    assert.equal(r.status, 201);
  }
  const run = new Script('chunked_list.py', [ns, '3', 'set=chunk'], secure());
  await run.finished();
  const pages = run.of('page');
  assert.deepEqual(
    pages.map((p) => p.names),
    [names.slice(0, 3), names.slice(3, 6), names.slice(6)],
  );
  assert.deepEqual(
    pages.map((p) => p.more),
    [true, true, false],
  );
  // upstream sets no remainingItemCount on a list with a label selector
  assert.deepEqual(
    pages.map((p) => p.remaining),
    [null, null, null],
  );
  assert.equal(new Set(pages.map((p) => p.rv)).size, 1, "every page at the first page's resourceVersion");
});

test('a Python watch gets each event before the next write, the last one in a quiet period', async () => {
  const ns = 'py-watch';
  assert.equal((await request(s.url, 'POST', '/api/v1/namespaces', { metadata: { name: ns } })).status, 201);
  const cms = `/api/v1/namespaces/${ns}/configmaps`;
  const run = new Script('watch.py', [ns, '4'], plain());
  await until(async () => (run.of('listed').length ? true : undefined), "the watch script's list", 20_000);
  const writes: [string, () => Promise<number>][] = [
    [
      'ADDED w1',
      async () => (await request(s.url, 'POST', cms, { metadata: { name: 'w1' }, data: { n: '1' } })).status,
    ],
    [
      'ADDED w2',
      async () => (await request(s.url, 'POST', cms, { metadata: { name: 'w2' }, data: { n: '2' } })).status,
    ],
    [
      'MODIFIED w1',
      async () => (await request(s.url, 'PUT', `${cms}/w1`, { metadata: { name: 'w1' }, data: { n: '3' } })).status,
    ],
    ['DELETED w2', async () => (await request(s.url, 'DELETE', `${cms}/w2`)).status],
  ];
  const wroteAt: number[] = [];
  for (const [i, [want, write]] of writes.entries()) {
    wroteAt.push(Date.now() / 1000);
    assert.ok([200, 201].includes(await write()), want);
    // the next write waits for this event to be printed by the script
    await until(
      async () => (run.of('watch-event').length > i ? true : undefined),
      `the Python client to print ${want}`,
      10_000,
    );
    const e = run.of('watch-event')[i]!;
    assert.equal(`${e.type} ${e.name}`, want);
  }
  await run.finished();
  const events = run.of('watch-event');
  assert.deepEqual(
    events.map((e) => e.data),
    [{ n: '1' }, { n: '2' }, { n: '3' }, { n: '2' }],
  );
  // each event was printed after its own write and before the next one was made
  events.forEach((e, i) => {
    assert.ok(e.ts >= wroteAt[i]! - 0.05, `event ${i} printed before its write`);
    if (i + 1 < wroteAt.length) assert.ok(e.ts <= wroteAt[i + 1]!, `event ${i} printed only after the next write`);
  });
  assert.equal(run.of('done')[0]!.events, 4);
});
