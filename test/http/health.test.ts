/**
 * Health endpoints (/livez, /readyz, /healthz): plain and verbose output, exclusions,
 * individual checks, and graceful shutdown (readyz fails at once on SIGTERM while the
 * server keeps serving for --shutdown-delay-duration, then the process exits with 0).
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { startServer, request, type TestServer } from '../helpers/server.js';
import { until } from '../helpers/poll.js';

let s: TestServer;
before(async () => {
  s = await startServer();
});
after(async () => {
  if (s) {
    await s.stop();
    s.cleanup();
  }
});

const BASE_CHECKS = ['ping', 'log', 'backing-store'];

test('/livez, /readyz and /healthz answer 200 ok', async () => {
  for (const p of ['/livez', '/readyz', '/healthz']) {
    const r = await request(s.url, 'GET', p);
    assert.equal(r.status, 200, p);
    assert.equal(r.text, 'ok', p);
    assert.match(r.headers.get('content-type') ?? '', /^text\/plain/, p);
  }
});

test('/readyz?verbose lists every check and ends with "readyz check passed"', async () => {
  const r = await request(s.url, 'GET', '/readyz?verbose');
  assert.equal(r.status, 200);
  const lines = r.text.trimEnd().split('\n');
  for (const c of BASE_CHECKS) assert.ok(lines.includes(`[+]${c} ok`), `missing [+]${c} ok in:\n${r.text}`);
  assert.ok(
    lines.some((l) => /^\[\+\]poststarthook\/[a-z0-9-]+ ok$/.test(l)),
    `no poststarthook check in:\n${r.text}`,
  );
  assert.ok(lines.includes('[+]shutdown ok'), r.text);
  assert.equal(lines[lines.length - 1], 'readyz check passed');
  for (const l of lines.slice(0, -1)) assert.match(l, /^\[\+\]\S+ ok$/, `unexpected line ${JSON.stringify(l)}`);
});

test('/livez?verbose and /healthz?verbose end with their own "check passed" line', async () => {
  for (const ep of ['livez', 'healthz']) {
    const r = await request(s.url, 'GET', `/${ep}?verbose`);
    assert.equal(r.status, 200, ep);
    const lines = r.text.trimEnd().split('\n');
    assert.ok(lines.includes('[+]ping ok'), r.text);
    assert.ok(lines.includes('[+]backing-store ok'), r.text);
    assert.equal(lines[lines.length - 1], `${ep} check passed`);
  }
  // the shutdown check belongs to readiness only
  const live = await request(s.url, 'GET', '/livez?verbose');
  assert.ok(!live.text.includes('shutdown'), live.text);
});

test('?verbose&exclude=ping reports the check as excluded', async () => {
  const r = await request(s.url, 'GET', '/readyz?verbose&exclude=ping');
  assert.equal(r.status, 200);
  const lines = r.text.trimEnd().split('\n');
  assert.ok(lines.includes('[+]ping excluded: ok'), r.text);
  assert.ok(!lines.includes('[+]ping ok'), r.text);
  assert.ok(lines.includes('[+]log ok'), r.text);
  assert.equal(lines[lines.length - 1], 'readyz check passed');
});

test('several excludes combine; an unknown exclude is warned about, not fatal', async () => {
  const r = await request(s.url, 'GET', '/livez?verbose&exclude=ping&exclude=log&exclude=no-such-check');
  assert.equal(r.status, 200);
  assert.ok(r.text.includes('[+]ping excluded: ok'), r.text);
  assert.ok(r.text.includes('[+]log excluded: ok'), r.text);
  assert.match(r.text, /warn: some health checks cannot be excluded: no matches for "no-such-check"/);
  assert.match(r.text, /livez check passed\n$/);
});

test('individual checks: /livez/ping 200, /readyz/shutdown 200, unknown check 404', async () => {
  const ping = await request(s.url, 'GET', '/livez/ping');
  assert.equal(ping.status, 200);
  assert.equal(ping.text, 'ok');
  const bs = await request(s.url, 'GET', '/readyz/backing-store');
  assert.equal(bs.status, 200);
  const sd = await request(s.url, 'GET', '/readyz/shutdown');
  assert.equal(sd.status, 200);
  const none = await request(s.url, 'GET', '/readyz/nonexistent');
  assert.equal(none.status, 404);
  const none2 = await request(s.url, 'GET', '/livez/nonexistent');
  assert.equal(none2.status, 404);
});

test('SIGTERM with --shutdown-delay-duration: readyz fails at once, requests still served, exit 0', async () => {
  // 5 s of delay: every check below runs inside it even on a loaded machine; that they ran
  // before the exit is asserted, not assumed from a clock
  const g = await startServer(['--shutdown-delay-duration', '5s']);
  try {
    assert.equal((await request(g.url, 'GET', '/readyz')).status, 200);
    let exitedYet = false;
    const exited = (once(g.proc, 'exit') as Promise<[number | null, NodeJS.Signals | null]>).finally(() => {
      exitedYet = true;
    });
    const signalledAt = Date.now();
    g.proc.kill('SIGTERM');

    // readiness reports the shutdown first (bounded poll)
    const ready = await until(
      async () => {
        const r = await request(g.url, 'GET', '/readyz?verbose');
        return r.status === 200 ? undefined : r;
      },
      'readyz to fail after SIGTERM',
      4_000,
    );
    assert.equal(ready.status, 500);
    assert.match(ready.text, /\[-\]shutdown failed/);
    assert.match(ready.text, /readyz check failed\n$/);
    // then, still inside the delay: liveness holds and resource requests are still served
    const live = await request(g.url, 'GET', '/livez');
    assert.equal(live.status, 200);
    const shutdownCheck = await request(g.url, 'GET', '/readyz/shutdown');
    assert.equal(shutdownCheck.status, 500);
    const ns = await request(g.url, 'GET', '/api/v1/namespaces/default');
    assert.equal(ns.status, 200);
    assert.equal(ns.json.metadata.name, 'default');
    assert.equal(exitedYet, false, 'all of it before the process exited');

    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error('server did not exit within 30s of SIGTERM')), 30_000);
    });
    const [code, signal] = await Promise.race([exited, timeout]).finally(() => clearTimeout(timer));
    assert.equal(signal, null);
    assert.equal(code, 0);
    // it honoured the delay before exiting (a lower bound: a loaded machine only makes it later)
    assert.ok(Date.now() - signalledAt >= 4900, `exited after ${Date.now() - signalledAt}ms, before the 5s delay`);
  } finally {
    await g.stop('SIGKILL');
    g.cleanup();
  }
});
