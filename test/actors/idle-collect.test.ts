/**
 * Idle collection of the shard actors (src/actors/idle-collect.ts, src/actors/young-collect.ts):
 * an actor that goes idle after a burst scavenges its young generation, so the burst's garbage
 * does not wait for the next burst (which would pay the scavenge and touch fresh pages: the
 * watch scenario's idle watchers were charged ≈ 9 KB each for it).
 */
import { test, mock } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { IDLE_MS, IdleCollector, MIN_OPS } from '../../src/actors/idle-collect.js';
import { collectYoung } from '../../src/actors/young-collect.js';
import { ActorPool } from '../../src/actors/pool.js';
import type { OpInput } from '../../src/actors/pool.js';
import { DEFAULT_OPTIONS } from '../../src/server/options.js';
import { actorPoolConfig } from '../../src/server/shards.js';
import { makeIdentity } from '../../src/api/identity.js';
import { until } from '../helpers/poll.js';

test('an idle shard collects once after a burst of MIN_OPS ops; work before IDLE_MS cancels it; a trickle does not', () => {
  mock.timers.enable({ apis: ['setTimeout'] });
  try {
    let asked = 0;
    const c = new IdleCollector(async () => {
      asked++;
    });
    c.busy(MIN_OPS - 1);
    c.idle();
    mock.timers.tick(IDLE_MS * 10);
    assert.equal(asked, 0, 'fewer than MIN_OPS ops: no collection');

    c.busy(1);
    c.idle();
    mock.timers.tick(IDLE_MS - 1);
    c.busy(5); // a batch before the shard was idle for IDLE_MS
    mock.timers.tick(IDLE_MS * 10);
    assert.equal(asked, 0, 'the batch cancelled the pending collection');

    c.idle();
    c.idle(); // idle again: still one pending collection
    mock.timers.tick(IDLE_MS);
    assert.equal(asked, 1);
    assert.equal(c.collections, 1);

    // the count starts again: idling without new work collects nothing more
    c.idle();
    mock.timers.tick(IDLE_MS * 10);
    assert.equal(asked, 1);
  } finally {
    mock.timers.reset();
  }
});

test('collectYoung scavenges the calling thread: young garbage is gone after it', () => {
  let keep = 0;
  for (let i = 0; i < 20_000; i++) keep += JSON.stringify({ i, s: 'x'.repeat(32) }).length;
  assert.ok(keep > 0);
  const r = collectYoung();
  assert.ok(r.after < r.before, `young generation in use ${r.before} → ${r.after} bytes`);
});

test('a real shard actor idle after a burst of creates is asked to collect, and its young garbage goes', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'plat-idle-collect-'));
  const o = { ...DEFAULT_OPTIONS, dataDir, shards: 1, storageBackend: 'lmdb' as const };
  const pool = new ActorPool(actorPoolConfig(o, makeIdentity(o.apiDomain)), () => {});
  try {
    await pool.init();
    const collector = pool.idleCollector(0);
    assert.ok(collector);
    assert.equal(collector.collections, 0);
    const type = { group: '', version: 'v1', resource: 'configmaps' };
    const enc = { format: 'json', pretty: false } as const;
    const creates = Array.from({ length: MIN_OPS * 2 }, (_, i) =>
      pool.submit({
        op: 'create',
        type,
        enc,
        dryRun: false,
        namespace: 'default',
        body: {
          text: JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `c-${i}` } }),
          contentType: 'json',
        },
      } as OpInput),
    );
    for (const r of await Promise.all(creates)) assert.ok(!('error' in r), JSON.stringify(r));
    const last = await until(async () => collector.last, 'the idle actor to collect');
    assert.equal(collector.collections, 1);
    assert.ok(last.after < last.before, `actor young generation ${last.before} → ${last.after} bytes`);
  } finally {
    await pool.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
});
