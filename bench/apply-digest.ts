/**
 * A fixed sequence of server-side applies and other patches run through one shard actor in
 * process, printed as the replies (objects with managedFields, conflicts, errors) one a line,
 * with a fixed clock and uids numbered in order of appearance: run it on two builds and diff the
 * output to show that a change to the apply path changed no object, managedFields or conflict.
 *
 *   node dist/bench/apply-digest.js > /tmp/after.txt   (and the same on the base build)
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Shard } from '../src/actors/shard.js';
import type { Op, PatchType, Result } from '../src/actors/protocol.js';
import { DEFAULT_OPTIONS } from '../src/server/options.js';
import { actorPoolConfig } from '../src/server/shards.js';
import { makeIdentity } from '../src/api/identity.js';
import { deployerBody, scalerBody } from './scenarios/apply.js';

const enc = { format: 'json', pretty: false } as const;
const user = { username: 'digest', groups: ['system:masters', 'system:authenticated'] };
const DEPLOY = { group: 'apps', version: 'v1', resource: 'deployments' };
const CM = { group: '', version: 'v1', resource: 'configmaps' };
let nextId = 1;

interface Step {
  type?: typeof DEPLOY & { subresource?: string };
  name: string;
  patchType?: PatchType;
  text: string;
  manager?: string;
  force?: boolean;
  fieldValidation?: 'Ignore' | 'Warn' | 'Strict';
}

function op(s: Step): Op {
  return {
    id: nextId++,
    op: 'patch',
    type: s.type ?? DEPLOY,
    enc,
    dryRun: false,
    namespace: 'default',
    name: s.name,
    patchType: s.patchType ?? 'apply',
    text: s.text,
    force: s.force ?? false,
    fieldManager: s.manager,
    ...(s.fieldValidation ? { fieldValidation: s.fieldValidation } : {}),
    user,
  };
}

const deployment = (name: string, spec: unknown, meta: Record<string, unknown> = {}) =>
  JSON.stringify({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name, ...meta }, spec });
const cm = (name: string, data: unknown, meta: Record<string, unknown> = {}) =>
  JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, ...meta }, data });
const container = (name: string, image: string, extra: Record<string, unknown> = {}) => ({ name, image, ...extra });
const podSpec = (name: string, containers: unknown[]) => ({
  selector: { matchLabels: { app: name } },
  template: { metadata: { labels: { app: name } }, spec: { containers } },
});

/** The sequence: each inner array is one batch (one transaction, one clock tick). */
function steps(): Step[][] {
  const bench: Step[][] = [];
  for (let k = 0; k < 6; k++)
    bench.push(
      ['b-0', 'b-1'].map((n) =>
        k % 2
          ? { name: n, text: scalerBody(n, k), manager: 'autoscaler', force: true }
          : { name: n, text: deployerBody(n, k), manager: 'deployer' },
      ),
    );
  const d = 'd-x';
  const two = [container('a', 'img:1', { env: [{ name: 'X', value: '1' }] }), container('b', 'img:2')];
  return [
    ...bench,
    [{ name: d, text: deployment(d, { ...podSpec(d, two), replicas: 2 }, { labels: { a: '1' } }), manager: 'one' }],
    // the same intent again: no change, the time stays
    [{ name: d, text: deployment(d, { ...podSpec(d, two), replicas: 2 }, { labels: { a: '1' } }), manager: 'one' }],
    // conflicts: one field, then several of one manager, then forced
    [{ name: d, text: deployment(d, { replicas: 3 }), manager: 'two' }],
    [{ name: d, text: deployment(d, podSpec(d, [container('a', 'img:9'), container('b', 'img:8')])), manager: 'two' }],
    [{ name: d, text: deployment(d, podSpec(d, [container('a', 'img:9')])), manager: 'two', force: true }],
    // the first applier drops container b and the label: pruned unless another owns them
    [{ name: d, text: deployment(d, { ...podSpec(d, [two[0]]), replicas: 2 }), manager: 'one' }],
    // other writers: merge, strategic and JSON patches become Update entries
    [
      {
        name: d,
        patchType: 'merge',
        text: '{"metadata":{"labels":{"edited":"yes"}},"spec":{"paused":true}}',
        manager: 'edit',
      },
    ],
    [
      {
        name: d,
        patchType: 'strategic',
        text: JSON.stringify({ spec: { template: { spec: { containers: [{ name: 'c', image: 'img:3' }] } } } }),
        manager: 'sm',
      },
    ],
    [{ name: d, patchType: 'json', text: '[{"op":"replace","path":"/spec/replicas","value":5}]', manager: 'jp' }],
    // apply takes back a field an updater changed (conflict, then force)
    [{ name: d, text: deployment(d, { ...podSpec(d, [two[0]]), replicas: 7 }), manager: 'one' }],
    [{ name: d, text: deployment(d, { ...podSpec(d, [two[0]]), replicas: 7 }), manager: 'one', force: true }],
    // duplicates in a list map: upstream's 500; unknown fields: warnings or 422
    [{ name: d, text: deployment(d, podSpec(d, [container('a', 'x'), container('a', 'y')])), manager: 'dup' }],
    [{ name: d, text: deployment(d, { replicas: 2, bogus: 1 }), manager: 'one', fieldValidation: 'Strict' }],
    [{ name: d, text: deployment(d, { replicas: 2, bogus: 1 }), manager: 'three', fieldValidation: 'Warn' }],
    // nulls, empty maps, status
    [
      {
        name: d,
        text: deployment(d, { replicas: null, template: { metadata: { annotations: {} } } }),
        manager: 'four',
      },
    ],
    [
      {
        type: { ...DEPLOY, subresource: 'status' },
        name: d,
        text: JSON.stringify({
          apiVersion: 'apps/v1',
          kind: 'Deployment',
          metadata: { name: d },
          status: { replicas: 1, conditions: [{ type: 'Available', status: 'True' }] },
        }),
        manager: 'ctrl',
      },
    ],
    // ConfigMaps: maps of scalars, shared keys, removal
    [{ type: CM, name: 'c-1', text: cm('c-1', { a: '1', b: '2' }), manager: 'one' }],
    [{ type: CM, name: 'c-1', text: cm('c-1', { b: '3', c: '4' }), manager: 'two' }],
    [{ type: CM, name: 'c-1', text: cm('c-1', { b: '3', c: '4' }), manager: 'two', force: true }],
    [{ type: CM, name: 'c-1', text: cm('c-1', { a: '1' }), manager: 'one' }],
    [{ type: CM, name: 'c-1', text: cm('c-1', {}), manager: 'two' }],
    [
      {
        type: CM,
        name: 'c-1',
        text: 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c-1\ndata:\n  y: "from yaml"\n',
        manager: 'yaml',
      },
    ],
    [{ type: CM, name: 'c-1', text: cm('c-1', { a: '2' }, { managedFields: [] }), manager: 'one' }],
  ];
}

function shown(r: Result, uids: Map<string, string>): string {
  let text: string;
  if ('error' in r) text = JSON.stringify(r.error);
  else if ('body' in r)
    text = `${r.code} ${typeof r.body === 'string' ? r.body : new TextDecoder().decode(r.body)}${r.warnings ? ` warnings=${JSON.stringify(r.warnings)}` : ''}`;
  else text = 'watch';
  return text.replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, (u) => {
    if (!uids.has(u)) uids.set(u, `uid-${uids.size}`);
    return uids.get(u)!;
  });
}

async function main(): Promise<void> {
  let clock = Date.UTC(2026, 0, 1);
  Date.now = () => clock;
  const dir = mkdtempSync(join(tmpdir(), 'plat-apply-digest-'));
  try {
    const o = { ...DEFAULT_OPTIONS, dataDir: dir, shards: 1, storageBackend: 'lmdb' as const };
    const shard = new Shard({
      ...actorPoolConfig(o, makeIdentity(o.apiDomain)),
      shard: 0,
      rvBuffer: new SharedArrayBuffer(8),
    });
    await shard.init();
    const uids = new Map<string, string>();
    for (const batch of steps()) {
      const r = await shard.run(batch.map(op));
      for (const x of r.results) process.stdout.write(shown(x, uids) + '\n');
      clock += 1000;
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
