/**
 * The change feed (src/actors/informer.ts) in process: delivery in subscription order, and what
 * a subscribe or unsubscribe during a dispatch changes; and the server's feed
 * (src/server/informers.ts): its members in the declared order, the watch hub last.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ChangeFeed, type Informer } from '../../src/actors/informer.js';
import type { CachedObject, ChangeEvent } from '../../src/actors/protocol.js';
import { buildChangeFeed } from '../../src/server/informers.js';
import type { WatchHub } from '../../src/http/watch-hub.js';
import type { Controllers } from '../../src/server/controllers.js';

function event(name: string, type: ChangeEvent['type'] = 'ADDED', json = '{"metadata":{}}'): ChangeEvent {
  return {
    typeKey: '/namespaces',
    type,
    rv: 1,
    namespace: '',
    name,
    json,
    labels: undefined,
    fields: {},
    apiVersion: 'v1',
    uid: name,
  };
}

function recorder(log: string[], name: string, onObserve?: () => void): Informer {
  return {
    load: (objects) => {
      log.push(`${name}.load(${objects.length})`);
    },
    observe: (events) => {
      log.push(`${name}.observe(${events.map((e) => e.name).join(',')})`);
      onObserve?.();
    },
  };
}

test('load and observe reach every subscriber in subscription order', () => {
  const log: string[] = [];
  const feed = new ChangeFeed();
  for (const n of ['a', 'b', 'c']) feed.subscribe(n, recorder(log, n));
  const objs: CachedObject[] = [{ typeKey: '/configmaps', namespace: 'd', name: 'x', apiVersion: 'v1', json: '{}' }];
  feed.load(objs);
  feed.observe([event('e1'), event('e2')]);
  assert.deepEqual(log, [
    'a.load(1)',
    'b.load(1)',
    'c.load(1)',
    'a.observe(e1,e2)',
    'b.observe(e1,e2)',
    'c.observe(e1,e2)',
  ]);
  assert.deepEqual(feed.names(), ['a', 'b', 'c']);
});

test('a subscriber added during a dispatch hears the next one, not the current', () => {
  const log: string[] = [];
  const feed = new ChangeFeed();
  let added = false;
  feed.subscribe(
    'a',
    recorder(log, 'a', () => {
      if (!added) {
        added = true;
        feed.subscribe('late', recorder(log, 'late'));
      }
    }),
  );
  feed.subscribe('b', recorder(log, 'b'));
  feed.observe([event('e1')]);
  feed.observe([event('e2')]);
  assert.deepEqual(log, ['a.observe(e1)', 'b.observe(e1)', 'a.observe(e2)', 'b.observe(e2)', 'late.observe(e2)']);
});

test('a subscriber removed during a dispatch (not reached yet) hears nothing more; others are unaffected', () => {
  const log: string[] = [];
  const feed = new ChangeFeed();
  let dropC: () => void = () => undefined;
  const dropA = feed.subscribe(
    'a',
    recorder(log, 'a', () => dropC()),
  );
  feed.subscribe(
    'b',
    recorder(log, 'b', () => dropA()),
  );
  dropC = feed.subscribe('c', recorder(log, 'c'));
  feed.subscribe('d', recorder(log, 'd'));
  feed.observe([event('e1')]);
  feed.observe([event('e2')]);
  // c was unsubscribed by a before it was reached; a unsubscribed itself (through b) after it heard e1
  assert.deepEqual(log, ['a.observe(e1)', 'b.observe(e1)', 'd.observe(e1)', 'b.observe(e2)', 'd.observe(e2)']);
  assert.deepEqual(feed.names(), ['b', 'd']);
  dropA(); // a second unsubscribe is harmless
  assert.deepEqual(feed.names(), ['b', 'd']);
});

test("the server's feed: members in the declared order, the leader-gated controllers only when present, the hub last", () => {
  const log: string[] = [];
  const namespaces = new Map<string, 'Active' | 'Terminating'>();
  let controllers: Controllers | undefined;
  const hub = {
    dispatch: (events: readonly ChangeEvent[]) => {
      log.push(`hub(${events.length}) ns=${namespaces.get('n1')}`);
    },
  } as unknown as WatchHub;
  const feed = buildChangeFeed({
    authz: recorder(log, 'authz'),
    auth: recorder(log, 'auth'),
    apf: recorder(log, 'apf'),
    readCache: recorder(log, 'cache'),
    extensions: recorder(log, 'ext'),
    namespaces,
    crdController: recorder(log, 'crd'),
    controllers: () => controllers,
    hub,
  });
  assert.deepEqual(feed.names(), [
    'authorization',
    'authentication',
    'priority-and-fairness',
    'read-cache',
    'extensions',
    'namespaces',
    'crd-controller',
    'controllers',
    'watch-hub',
  ]);
  feed.load([
    {
      typeKey: '/namespaces',
      namespace: '',
      name: 'n0',
      apiVersion: 'v1',
      json: '{"metadata":{"deletionTimestamp":"2026-01-01T00:00:00Z"}}',
    },
  ]);
  assert.equal(namespaces.get('n0'), 'Terminating');
  feed.observe([event('n1')]);
  assert.deepEqual(log.slice(-6), [
    'auth.observe(n1)',
    'apf.observe(n1)',
    'cache.observe(n1)',
    'ext.observe(n1)',
    'crd.observe(n1)',
    'hub(1) ns=Active',
  ]);
  controllers = {
    observe: () => {
      log.push('controllers');
    },
  } as unknown as Controllers;
  feed.observe([event('n1', 'DELETED')]);
  assert.deepEqual(log.slice(-2), ['controllers', 'hub(1) ns=undefined']);
});
