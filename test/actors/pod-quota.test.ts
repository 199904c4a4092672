/**
 * Pods' quota summaries (src/actors/pod-quota.ts), computed by the actor that stores the Pod and
 * carried to the front thread on the change event and the load, so that the front's read cache
 * keeps no Pod JSON: the summary's shape, the events and the start-up load that carry it (Pods
 * only; a snapshot, for the controllers, does not), and ResourceQuota's usage over a read cache
 * loaded from a restarted shard (no Pod JSON held) answering as the Pods' JSON would.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { podQuotaOf } from '../../src/actors/pod-quota.js';
import { ReadCache } from '../../src/actors/read-cache.js';
import { namespaceUsage, usageOf } from '../../src/admission/quota-usage.js';
import type { Op } from '../../src/actors/protocol.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Shard } from '../../src/actors/shard.js';
import { configMapOps, shardConfig } from '../helpers/shard.js';

const PODS = { group: '', version: 'v1', resource: 'pods' };
const JSON_ENC = { format: 'json', pretty: false } as const;
let id = 1;

type Resources = { requests?: Record<string, string>; limits?: Record<string, string> };
const podJson = (name: string, containers: (Resources | undefined)[]) =>
  JSON.stringify({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name },
    spec: { containers: containers.map((resources, i) => ({ name: `c${i}`, image: 'x', resources })) },
  });
const createPod = (ns: string, name: string, containers: (Resources | undefined)[]): Op => ({
  id: id++,
  op: 'create',
  type: PODS,
  enc: JSON_ENC,
  dryRun: false,
  namespace: ns,
  body: { text: podJson(name, containers), contentType: 'json' },
});
const setPhase = (ns: string, name: string, phase: string): Op => ({
  id: id++,
  op: 'patch',
  type: { ...PODS, subresource: 'status' },
  enc: JSON_ENC,
  dryRun: false,
  namespace: ns,
  name,
  patchType: 'merge',
  text: JSON.stringify({ status: { phase } }),
  force: false,
});

test('podQuotaOf: nothing for a Pod naming no request or limit; finished Pods; sums per resource over containers', () => {
  assert.equal(podQuotaOf({ spec: { containers: [{ name: 'c' }] } }), undefined);
  assert.equal(podQuotaOf({}), undefined, 'no spec');
  assert.deepEqual(
    podQuotaOf({ spec: { containers: [{ resources: { requests: { cpu: '1' } } }] }, status: { phase: 'Succeeded' } }),
    {
      finished: true,
    },
  );
  assert.deepEqual(podQuotaOf({ status: { phase: 'Failed' } }), { finished: true });
  assert.equal(podQuotaOf({ status: { phase: 'Running' } }), undefined);
  const pod = JSON.parse(
    podJson('p', [
      { requests: { cpu: '250m', memory: '64Mi' }, limits: { cpu: '1' } },
      { requests: { cpu: '500m', 'example.com/gpu': '2', constructor: '1', bad: 'x' } },
      undefined,
    ]),
  );
  assert.deepEqual(podQuotaOf(pod), {
    requests: { cpu: 0.75, memory: 64 * 2 ** 20, 'example.com/gpu': 2, constructor: 1, bad: 0 },
    limits: { cpu: 1 },
  });
  // the usage counted from the summary, for names a container does not name, inherited names and
  // unparseable quantities, is what the Pod's own fields count: 0
  assert.deepEqual(usageOf('/pods', pod, ['limits.memory', 'requests.toString', 'requests.bad', 'cpu', 'limits.cpu']), {
    'limits.memory': 0,
    'requests.toString': 0,
    'requests.bad': 0,
    cpu: 0.75,
    'limits.cpu': 1,
  });
});

test('a shard: Pod events and the start-up load carry the summary (other kinds none); a read cache loaded from it holds no Pod JSON and counts the same usage', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'plat-pod-quota-'));
  try {
    const shard = new Shard(shardConfig(dir));
    await shard.init();
    const r = await shard.run([
      createPod('q', 'p1', [{ requests: { cpu: '400m', memory: '64Mi' }, limits: { memory: '128Mi' } }]),
      createPod('q', 'p2', [{ requests: { cpu: '300m' } }, { requests: { cpu: '100m' }, limits: { memory: '64Mi' } }]),
      createPod('q', 'plain', [undefined]),
      createPod('q', 'done', [{ requests: { cpu: '2' } }]),
      createPod('other', 'p3', [{ requests: { cpu: '5' } }]),
      configMapOps.create('cm', 'q'),
    ]);
    assert.deepEqual(
      r.results.map((x) => ('code' in x ? x.code : x)),
      [201, 201, 201, 201, 201, 201],
    );
    const byName = new Map(r.events.map((e) => [e.name, e]));
    assert.deepEqual(byName.get('p1')!.quota, {
      requests: { cpu: 0.4, memory: 64 * 2 ** 20 },
      limits: { memory: 128 * 2 ** 20 },
    });
    // a limit without a request defaults the request (upstream's defaulting)
    assert.deepEqual(byName.get('p2')!.quota, {
      requests: { cpu: 0.4, memory: 64 * 2 ** 20 },
      limits: { memory: 64 * 2 ** 20 },
    });
    assert.equal('quota' in byName.get('plain')!, false, 'a Pod counting one and naming nothing carries nothing');
    assert.equal('quota' in byName.get('cm')!, false, 'not a Pod');
    const done = await shard.run([setPhase('q', 'done', 'Succeeded')]);
    assert.equal('code' in done.results[0]! && done.results[0].code, 200, JSON.stringify(done.results[0]));
    assert.deepEqual(done.events[0]!.quota, { finished: true });

    // a snapshot (a newly elected leader's controllers) goes without: it would parse every Pod again
    assert.ok((await shard.snapshot()).objects.every((o) => o.quota === undefined));
    const snap = await new Shard(shardConfig(dir)).init();
    const pods = snap.objects.filter((o) => o.typeKey === '/pods');
    assert.equal(pods.length, 5);
    assert.deepEqual(pods.find((o) => o.name === 'done')!.quota, { finished: true });
    assert.deepEqual(pods.find((o) => o.name === 'p1')!.quota, byName.get('p1')!.quota);

    const front = new ReadCache();
    front.load(snap.objects);
    assert.equal(front.count('/pods'), 5);
    for (const o of pods) {
      assert.equal(front.get('/pods', o.namespace, o.name, 'v1'), undefined, `${o.name}: no JSON on the front`);
      assert.equal(front.body('/pods', o.namespace, o.name, 'v1'), undefined);
    }
    assert.notEqual(front.get('/configmaps', 'q', 'cm', 'v1'), undefined, 'other kinds keep theirs');
    const names = ['pods', 'count/pods', 'requests.cpu', 'cpu', 'limits.memory', 'requests.memory', 'configmaps'];
    const expected = {
      pods: 3,
      'count/pods': 3,
      'requests.cpu': 0.8,
      cpu: 0.8,
      'limits.memory': 192 * 2 ** 20,
      'requests.memory': 128 * 2 ** 20,
      configmaps: 1,
    };
    const used = namespaceUsage(front, 'q', names);
    assert.deepEqual(Object.keys(used).sort(), Object.keys(expected).sort());
    for (const [k, v] of Object.entries(expected)) assert.ok(Math.abs(used[k]! - v) < 1e-9, `${k}: ${used[k]} ≠ ${v}`);
    // the same usage as the stored Pods' own JSON counts
    const fromJson: Record<string, number> = Object.fromEntries(names.map((n) => [n, 0]));
    for (const o of snap.objects.filter(
      (x) => x.namespace === 'q' && (x.typeKey === '/pods' || x.typeKey === '/configmaps'),
    ))
      for (const [k, v] of Object.entries(usageOf(o.typeKey, JSON.parse(o.json), names))) fromJson[k]! += v;
    assert.deepEqual(used, fromJson);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
