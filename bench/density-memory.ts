/**
 * Where a stored object's memory goes, in process (no threads, no HTTP): a shard actor on a fresh
 * LMDB directory is filled with N Pods of the density scenario (bench/load/scenarios/density.ts),
 * its change events fed to a front-thread ReadCache (which keeps the JSON of the RECENT_JSON_MAX
 * Pods written last only), then one JSON and one Protobuf cluster-scope LIST run. Prints bytes per object after the fill and after the lists (V8 heap, external and
 * array buffers, resident anonymous and file-backed memory), then the retained size of each
 * component, measured by dropping it and collecting (read cache, item bytes caches, history,
 * parsed objects, JSON, selectable state; what is left is the entries and their maps).
 *
 *   node --expose-gc dist/bench/density-memory.js [--objects 20000] [--per-namespace 15]
 */
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Shard } from '../src/actors/shard.js';
import { ReadCache } from '../src/actors/read-cache.js';
import type { Op } from '../src/actors/protocol.js';
import type { Entry, TypeCache } from '../src/storage/cacher/type-cache.js';
import { PARSED_MAX, parsedCount, setParsedMax } from '../src/storage/cacher/cached-entry.js';
import { DEFAULT_OPTIONS } from '../src/server/options.js';
import { actorPoolConfig } from '../src/server/shards.js';
import { makeIdentity } from '../src/api/identity.js';
import { densityPodCreate, PODS } from './lib/density-pod.js';

const MAX_OBJECTS = 500_000;
const BATCH = 64;

interface Mem {
  heap: number;
  external: number;
  arrayBuffers: number;
  rssAnon: number;
  rssFile: number;
}

const collect = (globalThis as { gc?: () => void }).gc;

function mem(): Mem {
  for (let i = 0; i < 3; i++) collect?.();
  const m = process.memoryUsage();
  const status = readFileSync('/proc/self/status', 'utf8');
  const kb = (k: string): number => Number(new RegExp(`^${k}:\\s+(\\d+)`, 'm').exec(status)?.[1] ?? 0) * 1024;
  return {
    heap: m.heapUsed,
    external: m.external,
    arrayBuffers: m.arrayBuffers,
    rssAnon: kb('RssAnon'),
    rssFile: kb('RssFile') + kb('RssShmem'),
  };
}

/**
 * Resident bytes of the mappings of files under dir (the LMDB environment), from /proc/self/smaps,
 * and how many mappings of its data file there are (lmdb-js keeps every map it outgrew).
 */
function mappedRss(dir: string): { rss: number; dataMaps: number } {
  let rss = 0;
  let dataMaps = 0;
  let inDir = false;
  for (const line of readFileSync('/proc/self/smaps', 'utf8').split('\n')) {
    if (/^[0-9a-f]+-[0-9a-f]+ /.test(line)) {
      inDir = line.includes(dir);
      if (inDir && line.endsWith('/data.mdb')) dataMaps++;
    } else if (inDir && line.startsWith('Rss:')) rss += Number(/(\d+)/.exec(line)?.[1] ?? 0) * 1024;
  }
  return { rss, dataMaps };
}

function perObject(a: Mem, b: Mem, n: number): string {
  const f = (k: keyof Mem): string => `${k} ${((b[k] - a[k]) / n).toFixed(0)}`;
  return `${f('heap')}, ${f('external')} (${f('arrayBuffers')}), ${f('rssAnon')}, ${f('rssFile')} B/object`;
}

function listOp(id: number, format: 'json' | 'protobuf'): Op {
  return { id, op: 'list', type: PODS, enc: { format, pretty: false }, namespace: '', opts: {} };
}

function arg(args: string[], flag: string, d: number): number {
  const i = args.indexOf(flag);
  return i >= 0 ? Number(args[i + 1]) : d;
}

async function fill(shard: Shard, front: ReadCache, n: number, perNs: number): Promise<void> {
  const namespaces = Math.max(1, Math.ceil(n / perNs));
  for (let done = 0; done < n; ) {
    const ops: Op[] = [];
    for (; ops.length < BATCH && done < n; done++)
      ops.push(densityPodCreate(done + 1, `bench-abcd-d-${done % namespaces}`, `o-${Math.floor(done / namespaces)}`));
    const reply = await shard.run(ops);
    const failed = reply.results.find((r) => 'error' in r);
    if (failed) throw new Error(`create failed: ${JSON.stringify(failed)}`);
    // the front thread receives its own copy of every event (structured clone, as postMessage makes)
    front.observe(structuredClone(reply.events));
  }
}

/** Drops one component of every entry, collects, and prints what that freed per object. */
function drop(label: string, n: number, before: Mem, act: () => void): Mem {
  act();
  const after = mem();
  const heap = (before.heap - after.heap) / n;
  const ext = (before.external - after.external) / n;
  process.stdout.write(
    `  ${label.padEnd(34)} ${heap.toFixed(0).padStart(6)} heap + ${ext.toFixed(0).padStart(5)} external B/object\n`,
  );
  return after;
}

function entries(caches: Map<string, TypeCache>): Entry[] {
  const out: Entry[] = [];
  for (const c of caches.values()) for (const [, e] of c.scan('', undefined)) out.push(e);
  return out;
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  if (!collect) throw new Error('run with node --expose-gc');
  const n = Math.min(MAX_OBJECTS, arg(args, '--objects', 20_000));
  const perNs = arg(args, '--per-namespace', 15);
  const dir = mkdtempSync(join(tmpdir(), 'plat-density-memory-'));
  try {
    const o = { ...DEFAULT_OPTIONS, dataDir: dir, shards: 1, storageBackend: 'lmdb' as const };
    let shard: Shard | undefined = new Shard({
      ...actorPoolConfig(o, makeIdentity(o.apiDomain)),
      shard: 0,
      rvBuffer: new SharedArrayBuffer(8),
    });
    await shard.init();
    let front = new ReadCache();
    const m0 = mem();
    const t0 = performance.now();
    await fill(shard, front, n, perNs);
    const m1 = mem();
    process.stdout.write(`${n} Pods in ${((performance.now() - t0) / 1000).toFixed(1)} s\n`);
    process.stdout.write(`after the fill:  ${perObject(m0, m1, n)}\n`);
    process.stdout.write(`front read cache: ${front.count('/pods')} Pods, ${front.recentHeld} holding their JSON\n`);
    for (const [i, format] of (['json', 'protobuf'] as const).entries()) {
      const r = (await shard.run([listOp(i + 1, format)])).results[0];
      if (!r || !('code' in r)) throw new Error(`list failed: ${JSON.stringify(r)}`);
      const bytes = typeof r.body === 'string' ? Buffer.byteLength(r.body) : r.body.byteLength;
      process.stdout.write(`${format} LIST: ${bytes} bytes (${(bytes / n).toFixed(0)} per Pod)\n`);
    }
    let m = mem();
    process.stdout.write(`after the lists: ${perObject(m0, m, n)}\n`);
    const file = statSync(join(dir, 'shard-0-of-1', 'data.mdb')).size;
    const mapped = mappedRss(dir);
    process.stdout.write(
      `LMDB: data file ${(file / n).toFixed(0)} B/object, its mapping resident ${(mapped.rss / n).toFixed(0)} B/object` +
        ` (${mapped.dataMaps} mapping${mapped.dataMaps === 1 ? '' : 's'} of data.mdb)\n`,
    );
    process.stdout.write('retained per component (dropped in this order):\n');
    const caches = (shard as unknown as { caches: Map<string, TypeCache> }).caches;
    const all = entries(caches);
    const mut = all as unknown as Record<string, unknown>[];
    m = drop('front read cache', n, m, () => (front = new ReadCache()));
    m = drop('item bytes caches (encoded)', n, m, () => mut.forEach((e) => (e.encoded = undefined)));
    m = drop('history events', n, m, () => {
      for (const c of caches.values()) Object.assign(c, { history: [], head: 0 });
    });
    process.stdout.write(`  (${parsedCount()} entries hold a parsed object)\n`);
    m = drop('parsed objects (obj)', n, m, () => {
      setParsedMax(0);
      void all[0]?.obj; // the next parse evicts every held object (itself too)
      setParsedMax(PARSED_MAX);
    });
    m = drop('JSON strings (json)', n, m, () => mut.forEach((e) => (e.json = '')));
    m = drop('labels and fields', n, m, () => mut.forEach((e) => Object.assign(e, { labels: undefined, fields: {} })));
    all.length = 0;
    m = drop('entries, keys, maps, store, shard', n, m, () => {
      caches.clear();
      shard = undefined;
    });
    process.stdout.write(`front ${front.count('/pods')} objects left; shard ${shard ? 'kept' : 'dropped'}\n`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
