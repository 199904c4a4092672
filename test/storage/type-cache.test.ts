import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { TypeCache, entryKey, type Entry } from '../../src/storage/cacher/type-cache.js';

function entry(namespace: string, name: string, rv: number, data = 'v'): Entry {
  const obj = {
    kind: 'ConfigMap',
    apiVersion: 'v1',
    metadata: { namespace, name, resourceVersion: String(rv) },
    data: { k: data },
  };
  return {
    namespace,
    name,
    rv,
    obj,
    json: JSON.stringify(obj),
    apiVersion: 'v1',
    labels: undefined,
    fields: { 'metadata.name': name, 'metadata.namespace': namespace },
  };
}

const keysOf = (c: TypeCache, ns: string, after?: string, at?: number) =>
  [...c.scan(ns, after, at)].map(([, e]) => `${e.namespace}/${e.name}@${e.rv}`);

describe('TypeCache scan', () => {
  it('yields entries ordered by namespace then name, within a namespace, and after a key', () => {
    const c = new TypeCache(60_000);
    const names = [
      ['b', 'x'],
      ['a', 'z'],
      ['a', 'b'],
      ['ab', 'a'],
      ['b', 'a'],
      ['a', 'a-1'],
    ];
    names.forEach(([ns, n], i) => c.load(entry(ns!, n!, i + 1)));
    assert.deepEqual(
      keysOf(c, '').map((s) => s.split('@')[0]),
      ['a/a-1', 'a/b', 'a/z', 'ab/a', 'b/a', 'b/x'],
    );
    // "a" must not match "ab": namespaces are whole segments
    assert.deepEqual(
      keysOf(c, 'a').map((s) => s.split('@')[0]),
      ['a/a-1', 'a/b', 'a/z'],
    );
    assert.deepEqual(
      keysOf(c, 'a', entryKey('a', 'b')).map((s) => s.split('@')[0]),
      ['a/z'],
    );
    assert.deepEqual(
      keysOf(c, '', entryKey('a', 'z')).map((s) => s.split('@')[0]),
      ['ab/a', 'b/a', 'b/x'],
    );
    assert.deepEqual(keysOf(c, 'zz'), []);
  });

  it('sees creates and deletes in order after they are applied', () => {
    const c = new TypeCache(60_000);
    c.apply('ADDED', entry('n', 'm', 1), 0);
    c.apply('ADDED', entry('n', 'c', 2), 0);
    c.apply('DELETED', entry('n', 'm', 3), 0);
    c.apply('ADDED', entry('n', 'a', 4), 0);
    assert.deepEqual(keysOf(c, 'n'), ['n/a@4', 'n/c@2']);
    assert.equal(c.size, 2);
    assert.equal(c.get('n', 'm'), undefined);
  });
});

describe('TypeCache snapshot at a version', () => {
  it('overlays history so every past version reads as it was', () => {
    const c = new TypeCache(60_000);
    c.load(entry('n', 'base', 1));
    c.setFloor(1);
    // model: the state after each rv
    const model = new Map<number, string[]>();
    const state = new Map<string, number>([['n/base', 1]]);
    const snap = (rv: number) =>
      model.set(
        rv,
        [...state].sort().map(([k, v]) => `${k}@${v}`),
      );
    snap(1);
    const ops: ['ADDED' | 'MODIFIED' | 'DELETED', string][] = [
      ['ADDED', 'b'],
      ['MODIFIED', 'base'],
      ['ADDED', 'a'],
      ['DELETED', 'b'],
      ['MODIFIED', 'a'],
      ['ADDED', 'b'],
      ['DELETED', 'base'],
    ];
    let rv = 1;
    for (const [type, name] of ops) {
      rv++;
      c.apply(type, entry('n', name, rv, `v${rv}`), 0);
      if (type === 'DELETED') state.delete(`n/${name}`);
      else state.set(`n/${name}`, rv);
      snap(rv);
    }
    for (const [at, want] of model) assert.deepEqual(keysOf(c, 'n', undefined, at), want, `state at ${at}`);
    assert.deepEqual(keysOf(c, 'n', undefined, undefined), model.get(rv));
    // chunked reads of an old version continue after a key
    assert.deepEqual(keysOf(c, 'n', entryKey('n', 'a'), 5), ['n/base@3']);
  });
});

describe('TypeCache snapshot pages under writes', () => {
  it('merges keys deleted since the version in order, across namespaces and after a key', () => {
    const c = new TypeCache(60_000);
    for (const [ns, n, rv] of [
      ['a', 'a', 1],
      ['a', 'c', 2],
      ['b', 'a', 3],
      ['b', 'c', 4],
    ] as const)
      c.apply('ADDED', entry(ns, n, rv), 0);
    c.apply('DELETED', entry('a', 'c', 5), 0);
    c.apply('ADDED', entry('a', 'b', 6), 0);
    c.apply('DELETED', entry('b', 'a', 7), 0);
    c.apply('MODIFIED', entry('b', 'c', 8, 'new'), 0);
    assert.deepEqual(keysOf(c, '', undefined, 4), ['a/a@1', 'a/c@2', 'b/a@3', 'b/c@4']);
    assert.deepEqual(keysOf(c, 'a', undefined, 4), ['a/a@1', 'a/c@2']);
    assert.deepEqual(keysOf(c, '', entryKey('a', 'c'), 4), ['b/a@3', 'b/c@4']);
    assert.deepEqual(keysOf(c, 'b', entryKey('b', 'a'), 4), ['b/c@4']);
    assert.deepEqual(keysOf(c, '', undefined, 6), ['a/a@1', 'a/b@6', 'b/a@3', 'b/c@4']);
    assert.deepEqual(keysOf(c, ''), ['a/a@1', 'a/b@6', 'b/c@8']);
  });

  it('a page of a large snapshot costs its page, not a sort of every key, once objects changed since', () => {
    const c = new TypeCache(60_000);
    const n = 200_000;
    for (let i = 0; i < n; i++) c.load(entry(`ns-${i % 1000}`, `o-${i}`, 1));
    c.setFloor(1);
    c.apply('MODIFIED', entry('ns-1', 'o-1', 2, 'changed'), 0);
    c.apply('DELETED', entry('ns-2', 'o-2', 3), 0);
    assert.equal([...c.scan('', undefined, 1)].length, n, 'the snapshot holds the deleted object');
    // 40 pages of 1,000 at the old version: with a sort of the 200,000 keys per page this took
    // over 5 s of CPU (68 s on the loaded machine); CPU time, so waiting for a core does not count
    const t0 = process.cpuUsage();
    let after: string | undefined;
    for (let p = 0; p < 40; p++) {
      let got = 0;
      for (const [k] of c.scan('', after, 1)) {
        after = k;
        if (++got === 1000) break;
      }
      assert.equal(got, 1000);
    }
    const used = process.cpuUsage(t0);
    const ms = (used.user + used.system) / 1000;
    assert.ok(ms < 2000, `40 snapshot pages took ${ms.toFixed(0)} ms of CPU`);
  });
});

describe('TypeCache history', () => {
  it('keeps DELETED with the final state and the state before each change', () => {
    const c = new TypeCache(60_000);
    c.apply('ADDED', entry('n', 'x', 1, 'one'), 0);
    c.apply('MODIFIED', entry('n', 'x', 2, 'two'), 0);
    const d = c.apply('DELETED', entry('n', 'x', 3, 'two'), 0);
    assert.equal(d.entry.rv, 3);
    assert.equal(d.prev?.rv, 2);
    const evs = c.eventsAfter(0);
    assert.deepEqual(
      evs.map((e) => [e.type, e.rv, e.prev?.rv]),
      [
        ['ADDED', 1, undefined],
        ['MODIFIED', 2, 1],
        ['DELETED', 3, 2],
      ],
    );
  });

  it('eventsAfter returns exactly the events past a version, in order', () => {
    const c = new TypeCache(60_000);
    for (let rv = 10; rv <= 100; rv += 10) c.apply('ADDED', entry('n', `o${rv}`, rv), 0);
    assert.deepEqual(
      c.eventsAfter(0).map((e) => e.rv),
      [10, 20, 30, 40, 50, 60, 70, 80, 90, 100],
    );
    assert.deepEqual(
      c.eventsAfter(45).map((e) => e.rv),
      [50, 60, 70, 80, 90, 100],
    );
    assert.deepEqual(
      c.eventsAfter(50).map((e) => e.rv),
      [60, 70, 80, 90, 100],
    );
    assert.deepEqual(c.eventsAfter(100), []);
    assert.deepEqual(c.eventsAfter(1000), []);
  });

  it('trims by age: the floor is the newest dropped version', () => {
    const c = new TypeCache(1000);
    c.apply('ADDED', entry('n', 'a', 1), 0);
    c.apply('ADDED', entry('n', 'b', 2), 500);
    c.apply('ADDED', entry('n', 'c', 3), 1200);
    assert.equal(c.oldestRV(1200), 1, 'the event at t=0 is older than the window');
    assert.deepEqual(
      c.eventsAfter(1).map((e) => e.rv),
      [2, 3],
    );
    assert.equal(c.oldestRV(1600), 2);
    assert.equal(c.oldestRV(5000), 3);
    assert.equal(c.historyLength, 0);
    // trimming never loses current state
    assert.deepEqual(
      keysOf(c, 'n').map((s) => s.split('@')[0]),
      ['n/a', 'n/b', 'n/c'],
    );
  });

  it('trims by count and stays correct across compaction', () => {
    const c = new TypeCache(60_000, 1500);
    for (let rv = 1; rv <= 5000; rv++) c.apply(rv % 3 === 0 ? 'MODIFIED' : 'ADDED', entry('n', `o${rv % 7}`, rv), 0);
    assert.equal(c.historyLength, 1500);
    assert.equal(c.oldestRV(0), 3500);
    const evs = c.eventsAfter(3500);
    assert.equal(evs.length, 1500);
    assert.equal(evs[0]!.rv, 3501);
    assert.equal(evs.at(-1)!.rv, 5000);
    assert.deepEqual(
      c.eventsAfter(4990).map((e) => e.rv),
      [4991, 4992, 4993, 4994, 4995, 4996, 4997, 4998, 4999, 5000],
    );
  });

  it('setFloor after a restart hides versions before it and never moves back', () => {
    const c = new TypeCache(60_000);
    c.load(entry('n', 'a', 40));
    c.setFloor(50);
    assert.equal(c.oldestRV(0), 50);
    c.setFloor(10);
    assert.equal(c.oldestRV(0), 50);
    c.apply('ADDED', entry('n', 'b', 51), 0);
    assert.deepEqual(
      c.eventsAfter(50).map((e) => e.rv),
      [51],
    );
    assert.deepEqual(keysOf(c, 'n', undefined, 50), ['n/a@40']);
  });
});

describe("TypeCache countAfter (a paged list's remainingItemCount)", () => {
  it('equals the number of entries a scan after the key yields, in a namespace and cluster-wide', () => {
    const c = new TypeCache(60_000);
    const namespaces = ['a', 'ab', 'b', 'b-1', 'z'];
    let rv = 0;
    for (const ns of namespaces) for (let i = 0; i < 7; i++) c.load(entry(ns, `n${(i * 37) % 11}-${i}`, ++rv));
    for (const ns of ['', ...namespaces, 'none']) {
      for (const [k] of [...c.scan('', undefined)]) {
        if (ns && !k.startsWith(ns + '\u0000')) continue;
        assert.equal(c.countAfter(ns, k), [...c.scan(ns, k)].length, `after ${JSON.stringify(k)} in "${ns}"`);
      }
    }
    // a key past the namespace's last entry: nothing left
    assert.equal(c.countAfter('a', entryKey('a', '~')), 0);
  });

  it('is undefined once the keys changed after the snapshot version (the caller scans the snapshot)', () => {
    const c = new TypeCache(60_000);
    c.apply('ADDED', entry('n', 'a', 1), 0);
    c.apply('ADDED', entry('n', 'b', 2), 0);
    c.apply('ADDED', entry('n', 'c', 3), 0);
    assert.equal(c.countAfter('n', entryKey('n', 'a'), 3), 2);
    c.apply('DELETED', entry('n', 'c', 4), 0);
    assert.equal(c.countAfter('n', entryKey('n', 'a'), 3), undefined);
    assert.equal(c.countAfter('n', entryKey('n', 'a')), 1);
  });
});
