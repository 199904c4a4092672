import { test } from 'node:test';
import assert from 'node:assert/strict';
import { changedPaths } from './runner.js';

test('a half-write finding names the JSON paths that changed', () => {
  assert.equal(
    changedPaths('{"a":{"b":[1,2]},"c":1}', '{"a":{"b":[1,3]},"d":2}'),
    '.a.b.1: 2 -> 3; .c: 1 -> undefined; .d: undefined -> 2',
  );
  assert.equal(changedPaths('{"a":1}', '{"a":1}'), '(none)');
  assert.equal(changedPaths('{"a":1}', 'not json'), '(not JSON)');
});

test('a checked legacy Binding takes the lock of the pod it binds (it writes that pod)', async () => {
  const { planRequest } = await import('./requests.js');
  const { Rng } = await import('./rng.js');
  const bindings = {
    group: '',
    version: 'v1',
    resource: 'bindings',
    kind: 'Binding',
    namespaced: true,
    verbs: new Set(['create']),
    subresources: new Map(),
  };
  const keys = new Set<string>();
  for (let seed = 1; seed < 2_000 && keys.size < 3; seed++) {
    const plan = planRequest(new Rng(seed), [bindings], { rv: '1', continues: [] });
    if (plan.check && plan.method === 'POST') keys.add(plan.check.key.replace(/\/[^/]*\/[^/]*$/, ''));
  }
  assert.deepEqual([...keys], ['/pods'], 'every checked binding create is keyed as a pod');
});

test("a connect subresource's 500 without a reason is upstream's plain error; elsewhere it is a finding", async () => {
  const { replyProblems } = await import('./check.js');
  const body = Buffer.from(
    '{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"no preferred addresses found; known addresses: []","code":500}',
  );
  const reply = { status: 500, headers: { 'content-type': 'application/json' }, body };
  assert.deepEqual(replyProblems('GET', '/api/v1/nodes/n/proxy/x', reply), []);
  assert.deepEqual(
    replyProblems('GET', '/api/v1/nodes/n', reply).map((p) => p.kind),
    ['5xx', 'non-status-error'],
  );
});
