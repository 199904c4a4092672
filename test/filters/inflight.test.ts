import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { InflightLimiter } from '../../src/filters/inflight.js';
import { startServer, request, configMap, type TestServer } from '../helpers/server.js';

test('limiter: separate read-only and mutating budgets; watch never counted; release once', () => {
  const l = new InflightLimiter(1, 1);
  const r1 = l.admit('get');
  assert.throws(
    () => l.admit('list'),
    (e: any) => e.status.code === 429 && e.status.details.retryAfterSeconds === 1,
  );
  const m1 = l.admit('create');
  assert.throws(
    () => l.admit('delete'),
    (e: any) => e.status.reason === 'TooManyRequests',
  );
  for (let i = 0; i < 5; i++) l.admit('watch');
  r1();
  r1();
  assert.deepEqual(l.current, { readOnly: 0, mutating: 1 });
  m1();
  assert.doesNotThrow(() => l.admit('list'));
});

test('limit 0 disables the limiter', () => {
  const l = new InflightLimiter(0, 0);
  for (let i = 0; i < 1000; i++) l.admit('create');
  assert.equal(l.current.mutating, 1000);
});

let s: TestServer;
// the in-flight limiter is upstream's filter when API Priority and Fairness is off
before(async () => {
  s = await startServer([
    '--enable-priority-and-fairness',
    'false',
    '--max-mutating-requests-inflight',
    '1',
    '--max-requests-inflight',
    '1',
  ]);
});
after(async () => {
  await s.stop();
  s.cleanup();
});

test('server: concurrent creates past the mutating limit get 429 with Retry-After; open watches do not count', async () => {
  const ctrl = new AbortController();
  const watches = await Promise.all(
    [1, 2, 3].map(() => fetch(`${s.url}/api/v1/namespaces/default/configmaps?watch=1`, { signal: ctrl.signal })),
  );
  assert.ok(watches.every((w) => w.status === 200));
  const results = await Promise.all(
    Array.from({ length: 40 }, (_, i) =>
      request(s.url, 'POST', '/api/v1/namespaces/default/configmaps', configMap(`inf-${i}`)),
    ),
  );
  const codes = results.map((r) => r.status);
  assert.ok(codes.includes(201), 'some creates succeed');
  const refused = results.filter((r) => r.status === 429);
  assert.ok(refused.length > 0, 'some creates are refused');
  assert.equal(refused[0]!.json.reason, 'TooManyRequests');
  assert.equal(refused[0]!.headers.get('retry-after'), '1');
  const g = await request(s.url, 'GET', '/api/v1/namespaces/default/configmaps/inf-0');
  assert.ok(g.status === 200 || g.status === 404, 'a read still runs while three watches are open');
  ctrl.abort();
});
