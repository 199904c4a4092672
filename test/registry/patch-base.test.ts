/**
 * src/registry/patch.ts patchBase shares the stored object's unchanged subtrees with the patched
 * object only for objects this process wrote (`Entry.own`). An object loaded from storage may have
 * been written by an older build without a default that this build's update defaulting fills in;
 * sharing it would write that default into the cached object (here deep-frozen, so such a write
 * throws and the patch answers 500), which a dry run or a refused write would leave ahead of its
 * stored JSON.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Shard } from '../../src/actors/shard.js';
import type { Op, Result } from '../../src/actors/protocol.js';
import type { Backend } from '../../src/storage/interface.js';
import { CachedEntry } from '../../src/storage/cacher/cached-entry.js';
import { shardConfig } from '../helpers/shard.js';
import { deepFreeze } from '../../src/api/deep-freeze.js';

const getter = Object.getOwnPropertyDescriptor(CachedEntry.prototype, 'obj')!.get!;
const dir = mkdtempSync(join(tmpdir(), 'plat-patch-base-'));
before(() => {
  Object.defineProperty(CachedEntry.prototype, 'obj', {
    configurable: true,
    get(this: CachedEntry) {
      const obj: unknown = getter.call(this);
      deepFreeze(obj);
      return obj;
    },
  });
});
after(() => {
  Object.defineProperty(CachedEntry.prototype, 'obj', { configurable: true, get: getter });
  rmSync(dir, { recursive: true, force: true });
});

const DEPLOYMENTS = { group: 'apps', version: 'v1', resource: 'deployments' };
const enc = { format: 'json', pretty: false } as const;
const user = { username: 'admin', groups: ['system:masters', 'system:authenticated'] };
let nextId = 1;

async function one(shard: Shard, op: Record<string, unknown>): Promise<{ code: number; json: any }> {
  const full = { id: nextId++, type: DEPLOYMENTS, enc, dryRun: false, namespace: 'default', user, ...op } as Op;
  const r: Result | undefined = (await shard.run([full])).results[0];
  assert.ok(r, 'no result');
  if ('error' in r) return { code: r.error.code, json: r.error };
  assert.ok('body' in r, 'not a watch');
  return { code: r.code, json: JSON.parse(Buffer.from(r.body).toString('utf8')) };
}

test('a patch of an object loaded from storage without a default this build fills in: answered, cache unchanged', async () => {
  const first = new Shard(shardConfig(dir));
  await first.init();
  const deployment = {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'old' },
    spec: {
      selector: { matchLabels: { app: 'old' } },
      template: { metadata: { labels: { app: 'old' } }, spec: { containers: [{ name: 'c', image: 'busybox' }] } },
    },
  };
  const made = await one(first, { op: 'create', body: { text: JSON.stringify(deployment), contentType: 'json' } });
  assert.equal(made.code, 201, JSON.stringify(made.json));
  // what an older build might have stored: the pod template without the defaults of this one
  const backend = (first as unknown as { backend: Backend }).backend;
  let key = '';
  let stored: any;
  for await (const page of backend.range(''))
    for (const e of page) if (e.key.endsWith('/default/old')) [key, stored] = [e.key, JSON.parse(e.value)];
  assert.ok(key, 'the stored deployment');
  const spec = stored.spec.template.spec;
  for (const f of ['dnsPolicy', 'restartPolicy', 'schedulerName', 'terminationGracePeriodSeconds', 'securityContext'])
    delete spec[f];
  delete spec.containers[0].imagePullPolicy;
  delete spec.containers[0].terminationMessagePath;
  await backend.commit([{ key, value: JSON.stringify(stored) }], backend.revision());

  const loaded = new Shard(shardConfig(dir));
  await loaded.init();
  for (const dryRun of [true, false]) {
    const patched = await one(loaded, {
      op: 'patch',
      name: 'old',
      dryRun,
      patchType: 'merge',
      text: `{"metadata":{"labels":{"dry":"${dryRun}"}}}`,
      fieldManager: 'm',
    });
    assert.equal(patched.code, 200, JSON.stringify(patched.json));
    assert.equal(patched.json.spec.template.spec.dnsPolicy, 'ClusterFirst');
  }
});
