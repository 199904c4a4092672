/**
 * The store's concurrency checks in process (a shard actor without threads or HTTP): a pinned
 * update, patch or delete (Op `pin`, the version the front thread's checks saw) runs only on that
 * version ('' = only while the object does not exist), else 409 Conflict and nothing changes;
 * an update's own metadata.resourceVersion and a DELETE's preconditions are checked in the same
 * transaction. The end-to-end forms are registry/preconditions and security/write-race.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { Shard } from '../../src/actors/shard.js';
import { openShard, type LocalShard } from '../helpers/shard.js';
import type { DeleteOptions, Op, Result } from '../../src/actors/protocol.js';

let local: LocalShard;
let shard: Shard;
let nextId = 1;

before(async () => {
  local = await openShard('store-pin');
  shard = local.shard;
});
after(() => local.close());

const cmType = { group: '', version: 'v1', resource: 'configmaps' };
const enc = { format: 'json', pretty: false } as const;
const CONFLICT = 'the object has been modified; please apply your changes to the latest version and try again';

interface Answer {
  code: number;
  json: any;
}

function answer(r: Result): Answer {
  if ('error' in r) return { code: r.error.code, json: r.error };
  assert.ok('body' in r, 'not a watch');
  return { code: r.code, json: JSON.parse(Buffer.from(r.body).toString('utf8')) };
}

async function one(op: Op): Promise<Answer> {
  const reply = await shard.run([op]);
  return answer(reply.results[0]!);
}

const base = { type: cmType, enc, dryRun: false, namespace: 'default' };
const cm = (name: string, data: Record<string, string>, rv?: string) => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, ...(rv !== undefined ? { resourceVersion: rv } : {}) },
  data,
});
const create = (name: string) =>
  one({
    ...base,
    id: nextId++,
    op: 'create',
    body: { text: JSON.stringify(cm(name, { k: 'v0' })), contentType: 'json' },
  });
const update = (name: string, data: Record<string, string>, rv?: string, pin?: string) =>
  one({
    ...base,
    id: nextId++,
    op: 'update',
    name,
    body: { text: JSON.stringify(cm(name, data, rv)), contentType: 'json' },
    ...(pin !== undefined ? { pin } : {}),
  });
const patch = (name: string, k: string, pin?: string) =>
  one({
    ...base,
    id: nextId++,
    op: 'patch',
    name,
    patchType: 'merge',
    text: JSON.stringify({ data: { k } }),
    force: false,
    ...(pin !== undefined ? { pin } : {}),
  });
const del = (name: string, options: DeleteOptions = {}, pin?: string) =>
  one({ ...base, id: nextId++, op: 'delete', name, options, ...(pin !== undefined ? { pin } : {}) });
const get = (name: string) => one({ id: nextId++, op: 'get', type: cmType, enc, namespace: 'default', name });

/** rest.BeforeDelete's preconditions name the Kind, the store's update checks the resource. */
function conflict(
  a: Answer,
  name: string,
  message = `Operation cannot be fulfilled on configmaps "${name}": ${CONFLICT}`,
  kind = 'configmaps',
): void {
  assert.equal(a.code, 409, JSON.stringify(a.json));
  assert.equal(a.json.reason, 'Conflict');
  assert.equal(a.json.message, message);
  assert.deepEqual(a.json.details, { name, kind });
}

async function unchanged(name: string, rv: string, k = 'v0'): Promise<void> {
  const now = await get(name);
  assert.equal(now.code, 200);
  assert.equal(now.json.metadata.resourceVersion, rv, 'not written');
  assert.equal(now.json.data.k, k);
}

test('a pinned update, patch and delete run on the pinned version', async () => {
  const c = await create('pin-ok');
  assert.equal(c.code, 201);
  const u = await update('pin-ok', { k: 'u' }, undefined, c.json.metadata.resourceVersion);
  assert.equal(u.code, 200, JSON.stringify(u.json));
  const p = await patch('pin-ok', 'p', u.json.metadata.resourceVersion);
  assert.equal(p.code, 200, JSON.stringify(p.json));
  assert.equal(p.json.data.k, 'p');
  const d = await del('pin-ok', {}, p.json.metadata.resourceVersion);
  assert.equal(d.code, 200, JSON.stringify(d.json));
  assert.equal((await get('pin-ok')).code, 404);
});

test('a pinned update, patch and delete find another version: 409 Conflict, nothing written', async () => {
  const c = await create('pin-stale');
  const rv = c.json.metadata.resourceVersion;
  const moved = await update('pin-stale', { k: 'moved' });
  assert.equal(moved.code, 200);
  const now = moved.json.metadata.resourceVersion;
  conflict(await update('pin-stale', { k: 'u' }, undefined, rv), 'pin-stale');
  conflict(await patch('pin-stale', 'p', rv), 'pin-stale');
  conflict(await del('pin-stale', {}, rv), 'pin-stale');
  await unchanged('pin-stale', now, 'moved');
});

test('a pin of "no object" refuses a write to an object that exists', async () => {
  const c = await create('pin-none');
  const rv = c.json.metadata.resourceVersion;
  conflict(await update('pin-none', { k: 'u' }, undefined, ''), 'pin-none');
  conflict(await patch('pin-none', 'p', ''), 'pin-none');
  conflict(await del('pin-none', {}, ''), 'pin-none');
  await unchanged('pin-none', rv);
});

test('a pin refuses a write to an object that is gone (its checks saw it)', async () => {
  const c = await create('pin-gone');
  const rv = c.json.metadata.resourceVersion;
  assert.equal((await del('pin-gone')).code, 200);
  conflict(await update('pin-gone', { k: 'u' }, undefined, rv), 'pin-gone');
  conflict(await patch('pin-gone', 'p', rv), 'pin-gone');
  conflict(await del('pin-gone', {}, rv), 'pin-gone');
  assert.equal((await get('pin-gone')).code, 404);
});

test('an update\'s own resourceVersion: stale is 409, the current one writes, none (or "0") is unconditional', async () => {
  const c = await create('rv-own');
  const rv = c.json.metadata.resourceVersion;
  const u1 = await update('rv-own', { k: 'u1' }, rv);
  assert.equal(u1.code, 200);
  conflict(await update('rv-own', { k: 'stale' }, rv), 'rv-own');
  await unchanged('rv-own', u1.json.metadata.resourceVersion, 'u1');
  for (const [i, unconditional] of [undefined, '0', ''].entries()) {
    const u = await update('rv-own', { k: `free-${i}` }, unconditional);
    assert.equal(u.code, 200, `resourceVersion ${JSON.stringify(unconditional)}: ${JSON.stringify(u.json)}`);
    assert.equal(u.json.data.k, `free-${i}`);
    assert.notEqual(u.json.metadata.resourceVersion, '0');
    assert.ok(Number(u.json.metadata.resourceVersion) > Number(u1.json.metadata.resourceVersion));
  }
});

test('DELETE preconditions: the uid is checked before the resourceVersion; matching ones delete', async () => {
  const c = await create('pre');
  const { uid, resourceVersion: first } = c.json.metadata;
  // a changing update moves the object on, so the first version is stale however the file's tests run
  const u = await update('pre', { k: 'v1' }, first);
  assert.equal(u.code, 200, JSON.stringify(u.json));
  const rv = u.json.metadata.resourceVersion;
  const both = await del('pre', { preconditions: { uid: 'other', resourceVersion: first } });
  conflict(
    both,
    'pre',
    `Operation cannot be fulfilled on ConfigMap "pre": the UID in the precondition (other) does not match the UID in record (${uid}). The object might have been deleted and then recreated`,
    'ConfigMap',
  );
  const stale = await del('pre', { preconditions: { uid, resourceVersion: first } });
  conflict(
    stale,
    'pre',
    `Operation cannot be fulfilled on ConfigMap "pre": the ResourceVersion in the precondition (${first}) does not match the ResourceVersion in record (${rv}). The object might have been modified`,
    'ConfigMap',
  );
  await unchanged('pre', rv, 'v1');
  const ok = await del('pre', { preconditions: { uid, resourceVersion: rv } });
  assert.equal(ok.code, 200, JSON.stringify(ok.json));
  assert.equal((await get('pre')).code, 404);
});

test('a pin of "no object" on a missing object lets the write answer as unpinned: 404 NotFound, not a Conflict', async () => {
  for (const a of [
    await update('pin-absent', { k: 'u' }, undefined, ''),
    await patch('pin-absent', 'p', ''),
    await del('pin-absent', {}, ''),
  ]) {
    assert.equal(a.code, 404, JSON.stringify(a.json));
    assert.equal(a.json.reason, 'NotFound');
  }
});

test('a DELETE held by a finalizer marks the object and answers it; a second DELETE answers it unchanged', async () => {
  const c = await one({
    ...base,
    id: nextId++,
    op: 'create',
    body: {
      text: JSON.stringify({
        ...cm('held', { k: 'v0' }),
        metadata: { name: 'held', finalizers: ['example.com/hold'] },
      }),
      contentType: 'json',
    },
  });
  assert.equal(c.code, 201, JSON.stringify(c.json));
  const first = await del('held');
  assert.equal(first.code, 200, JSON.stringify(first.json));
  assert.equal(first.json.kind, 'ConfigMap', 'the object, not a Status');
  assert.ok(first.json.metadata.deletionTimestamp);
  const stored = await get('held');
  assert.equal(stored.code, 200, 'still there');
  assert.equal(stored.json.metadata.deletionTimestamp, first.json.metadata.deletionTimestamp);
  const second = await del('held');
  assert.equal(second.code, 200);
  assert.equal(second.json.kind, 'ConfigMap', 'nothing removed: the object again');
  assert.equal(second.json.metadata.resourceVersion, first.json.metadata.resourceVersion, 'unchanged');
});
