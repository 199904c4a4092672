/**
 * The one scenario registry of both bench harnesses (bench/scenario-registry.ts): the wrk mode's
 * and the load CLI's scenario lists, the names that select the load CLI, and each runner come
 * from one table; the lists are exactly the ones each harness had by hand before, in order.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SCENARIOS, loadRunner, scenarioNames, wrkRunner } from '../../bench/scenario-registry.js';
import { LOAD_ONLY, LOAD_SCENARIOS, isLoadInvocation } from '../../bench/load/args.js';
import { getScenario as wrkGet } from '../../bench/scenarios/read.js';
import { getScenario as loadGet, updateScenario } from '../../bench/load/scenarios/basic.js';

test('each harness lists its scenarios in table order, as before the registry', () => {
  assert.deepEqual(scenarioNames('wrk'), [
    'get',
    'list',
    'create',
    'watch',
    'apply',
    'tls',
    'authz',
    'encodings',
    'fairness',
  ]);
  assert.deepEqual(
    [...LOAD_SCENARIOS],
    ['get', 'list', 'create', 'update', 'apply', 'watch-fanout', 'informers', 'density', 'mixed'],
  );
  assert.deepEqual([...LOAD_ONLY].sort(), ['all', 'density', 'informers', 'mixed', 'update', 'watch-fanout']);
});

test('a name both harnesses know runs each harness its own scenario; unknown names have no runner', () => {
  assert.equal(wrkRunner('get'), wrkGet);
  assert.equal(loadRunner('get'), loadGet);
  assert.equal(loadRunner('update'), updateScenario);
  assert.equal(wrkRunner('update'), undefined);
  assert.equal(loadRunner('watch'), undefined);
  for (const name of ['nope', 'toString', 'constructor', '__proto__']) {
    assert.equal(wrkRunner(name), undefined, name);
    assert.equal(loadRunner(name), undefined, name);
  }
});

test('every scenario says what it measures and runs in at least one harness', () => {
  for (const [name, s] of Object.entries(SCENARIOS)) {
    assert.ok(s.describe.length >= 20 && !s.describe.includes('\n'), `${name}: one line`);
    assert.ok(s.run.wrk ?? s.run.load, `${name}: a runner`);
  }
});

test('a load-only scenario selects the load CLI; a name both know does not', () => {
  assert.equal(isLoadInvocation(['density']), true);
  assert.equal(isLoadInvocation(['get', 'list']), false);
  assert.equal(isLoadInvocation(['get', '--server', 'http://127.0.0.1:1']), true);
});
