/**
 * The first Protobuf LIST of a large collection against a later one, in process (issue 24 item
 * 7): one shard actor on a fresh LMDB directory is filled with N Pods of the density scenario as
 * the server's admission leaves them (bench/density-memory.ts), then cluster-scope Protobuf LISTs
 * run one after the other; for each, the actor's CPU per item. Then the split of an item's first
 * encoding over every stored entry, stage by stage (each stage timed over all entries at once):
 * JSON.parse, the JSON → protobufjs message conversion, protobufjs' encode, the copy into an
 * exact-size buffer, the direct JSON → wire encoder (codec/protobuf/wire-encoder.ts) that
 * replaces the three middle stages when present, and the encoder from the JSON text
 * (codec/protobuf/text-encoder.ts) that a LIST uses, with no parse.
 *
 *   node dist/bench/protobuf-first-list.js [--objects 30000] [--lists 3] [--stages 3] [--cpu-prof DIR] [--sample FILE] [--helper-first] [--no-helper] [--json-first] [--no-ahead] [--settle] [--ahead-after]
 *
 * `--helper-first` starts the list's helper thread (codec/protobuf/encode-helper.ts) and loads the
 * schema before the first list; `--no-helper` encodes on the actor alone; `--json-first` runs a JSON list
 * first, as the density scenario does (it measures the texts' UTF-8 lengths: ASCII texts are then
 * written as Latin-1). `--no-ahead` encodes nothing ahead during the fill (codec/protobuf/encode-ahead.ts:
 * the shard's idle hook sends entries to a helper at nice 19 between batches); `--settle` waits after the
 * fill until the entries queued then are encoded ahead; `--ahead-after` encodes nothing ahead during the fill, and
 * all of it after (the actor's CPU for it alone). `--cpu-prof DIR` writes a V8 CPU profile of each LIST (list-1.cpuprofile …; bench/profile-summary.ts).
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Shard } from '../src/actors/shard.js';
import type { Op } from '../src/actors/protocol.js';
import type { Entry, TypeCache } from '../src/storage/cacher/type-cache.js';
import { DEFAULT_OPTIONS } from '../src/server/options.js';
import { actorPoolConfig } from '../src/server/shards.js';
import { makeIdentity } from '../src/api/identity.js';
import { densityPodCreate, PODS } from './lib/density-pod.js';
import { protobufCodec } from '../src/codec/codec.js';
import { helperStats, helperTuning, startHelper } from '../src/codec/protobuf/encode-helper.js';
import { aheadAnswered, aheadOut, aheadReady, aheadStats, aheadTuning } from '../src/codec/protobuf/encode-ahead.js';

const MAX_OBJECTS = 200_000;
const BATCH = 64;
function arg(args: string[], flag: string, d: number): number {
  const i = args.indexOf(flag);
  return i >= 0 ? Number(args[i + 1]) : d;
}

/** CPU microseconds (user + system) of the process while f runs. */
async function cpuOf(f: () => unknown): Promise<number> {
  const c = process.cpuUsage();
  await f();
  const d = process.cpuUsage(c);
  return d.user + d.system;
}

/** CPU ms (user + system) of each of the process's threads, by thread id (Linux /proc; empty elsewhere). */
function threadCpuMs(): Map<string, number> {
  const out = new Map<string, number>();
  try {
    for (const tid of readdirSync('/proc/self/task')) {
      const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      out.set(tid, ((Number(f[11]) + Number(f[12])) * 1000) / 100); // utime, stime in ticks of 1/100 s
    }
  } catch {
    // not Linux: no per-thread figures
  }
  return out;
}

/** The main thread's CPU ms between two readings, and the busiest other thread's. */
function threadSplit(before: Map<string, number>, after: Map<string, number>): string {
  let main = 0;
  const others: number[] = [];
  for (const [tid, ms] of after) {
    const d = ms - (before.get(tid) ?? 0);
    if (tid === String(process.pid)) main = d;
    else if (d > 0) others.push(d);
  }
  others.sort((a, b) => b - a);
  return `main thread ${main.toFixed(0)} ms CPU, other threads ${others.map((d) => d.toFixed(0)).join(' ') || '0'} ms`;
}

async function fill(shard: Shard, n: number): Promise<void> {
  const namespaces = Math.max(1, Math.ceil(n / 15));
  for (let done = 0; done < n; ) {
    const ops: Op[] = [];
    for (; ops.length < BATCH && done < n; done++)
      ops.push(densityPodCreate(done + 1, `bench-abcd-d-${done % namespaces}`, `o-${Math.floor(done / namespaces)}`));
    const reply = await shard.run(ops);
    const failed = reply.results.find((r) => 'error' in r);
    if (failed) throw new Error(`create failed: ${JSON.stringify(failed)}`);
  }
}

/**
 * The stages of an item's first encoding, µs per item: each row runs the pipeline up to its stage
 * over every entry without keeping the results (as garbage, the way a list drops its messages),
 * so a stage's cost is its row minus the row above it.
 */
function stages(all: Entry[], rounds: number): void {
  const codec = protobufCodec();
  const n = all.length;
  const type = codec.typeFor('', 'v1', 'Pod')!;
  const internals = codec as unknown as {
    load(): { converter: { toMessage(t: unknown, o: unknown): Record<string, unknown> } };
    encodeMessage(o: unknown): Uint8Array;
  };
  const converter = internals.load().converter;
  const rows: [string, (e: Entry) => unknown][] = [
    ['JSON.parse', (e) => JSON.parse(e.json)],
    ['+ JSON -> message (convert.ts)', (e) => converter.toMessage(type, JSON.parse(e.json))],
    ['+ protobufjs encode', (e) => type.encode(converter.toMessage(type, JSON.parse(e.json))).finish()],
    [
      '+ copy into an exact-size buffer',
      (e) => new Uint8Array(type.encode(converter.toMessage(type, JSON.parse(e.json))).finish()),
    ],
    ['JSON.parse + codec.encodeMessage + copy', (e) => new Uint8Array(internals.encodeMessage(JSON.parse(e.json)))],
    ['from the text, no parse (codec.encodeJsonText)', (e) => codec.encodeJsonText(e.json, 'v1')],
  ];
  for (let r = 0; r < rounds; r++) {
    const line: string[] = [];
    for (const [label, f] of rows) {
      const c = process.cpuUsage();
      let sink = 0;
      for (const e of all) sink += f(e) ? 1 : 0;
      const d = process.cpuUsage(c);
      if (sink !== n) throw new Error('stage lost an item');
      line.push(`${label}: ${((d.user + d.system) / n).toFixed(2)}`);
    }
    process.stdout.write(`  round ${r + 1} (µs/item): ${line.join('; ')}\n`);
  }
}

/** What was encoded ahead, and the actor thread's time for it per item. */
function aheadLine(): string {
  const a = aheadStats;
  const per = (ms: number, k: number) => (k ? ((ms * 1000) / k).toFixed(2) : '-');
  return `ahead: ${a.sent} sent in ${a.chunks} chunks, ${a.kept} kept, ${a.dropped} dropped; actor ${a.sendMs.toFixed(0)} ms sending (${per(a.sendMs, a.sent)} µs/item), ${a.keepMs.toFixed(0)} ms keeping (${per(a.keepMs, a.kept)} µs/item); helper nice ${a.nice}`;
}

/** RSS, the JS heap and the array buffers' memory (this thread's allocations), MiB. */
function rssLine(): string {
  const m = process.memoryUsage();
  const mib = (n: number) => (n / 2 ** 20).toFixed(0);
  return `${mib(m.rss)} MiB (JS heap ${mib(m.heapUsed)} of ${mib(m.heapTotal)} MiB, array buffers ${mib(m.arrayBuffers)} MiB)`;
}

/** A cluster-scope Protobuf LIST of Pods, whole (the server streams it in pages: the same first encoding). */
function listOp(id: number): Op {
  return { id, op: 'list', type: PODS, enc: { format: 'protobuf', pretty: false }, namespace: '', opts: {} };
}

async function startProfile(): Promise<Session> {
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.setSamplingInterval', { interval: 200 });
  await session.post('Profiler.start');
  return session;
}

async function stopProfile(session: Session, file: string): Promise<void> {
  const { profile } = await session.post('Profiler.stop');
  writeFileSync(file, JSON.stringify(profile));
  session.disconnect();
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const n = Math.min(MAX_OBJECTS, arg(args, '--objects', 30_000));
  const lists = Math.min(10, arg(args, '--lists', 3));
  const p = args.indexOf('--cpu-prof');
  const prof = p >= 0 ? args[p + 1] : undefined;
  const dir = mkdtempSync(join(tmpdir(), 'plat-protobuf-first-list-'));
  try {
    const o = { ...DEFAULT_OPTIONS, dataDir: dir, shards: 1, storageBackend: 'lmdb' as const };
    const shard = new Shard({
      ...actorPoolConfig(o, makeIdentity(o.apiDomain)),
      shard: 0,
      rvBuffer: new SharedArrayBuffer(8),
    });
    await shard.init();
    aheadTuning.off = args.includes('--no-ahead') || args.includes('--ahead-after');
    const fillThreads = threadCpuMs();
    const f0 = performance.now();
    await fill(shard, n);
    process.stdout.write(
      `fill: ${(performance.now() - f0).toFixed(0)} ms wall; ${threadSplit(fillThreads, threadCpuMs())}\n${aheadLine()}\n`,
    );
    if (args.includes('--settle') || args.includes('--ahead-after')) {
      // steps as the idle hook runs them, each after the helper's next answer (bounded)
      aheadTuning.off = args.includes('--no-ahead');
      const settleThreads = threadCpuMs();
      shard.ahead.step();
      await aheadReady();
      for (let i = 0; i < 100_000; i++) {
        shard.ahead.step();
        if (aheadOut() === 0) break;
        await aheadAnswered();
      }
      process.stdout.write(`settled: ${aheadLine()}; ${threadSplit(settleThreads, threadCpuMs())}\n`);
    }
    // the objects a fresh server holds parsed: none of these (they were written long ago), as after a restart
    const caches = (shard as unknown as { caches: Map<string, TypeCache> }).caches;
    const all: Entry[] = [];
    for (const c of caches.values())
      for (const [, e] of c.scan('', undefined)) if (e.name.startsWith('o-')) all.push(e);
    process.stdout.write(
      `${n} Pods; ${all.length} entries; RSS ${(process.memoryUsage().rss / 2 ** 20).toFixed(0)} MiB\n`,
    );
    const sample = args.indexOf('--sample');
    if (sample >= 0 && all[0]) writeFileSync(args[sample + 1]!, all[0].json);
    if (args.includes('--parse-first')) {
      for (let r = 0; r < 2; r++) {
        const c = process.cpuUsage();
        for (const e of all) JSON.parse(e.json);
        const d = process.cpuUsage(c);
        process.stdout.write(
          `JSON.parse of every entry before the lists: ${((d.user + d.system) / n).toFixed(2)} µs/item\n`,
        );
      }
    }
    if (args.includes('--json-first')) {
      // as the density scenario: a JSON list before the Protobuf ones (it measures each text's UTF-8 length)
      const t0 = performance.now();
      const r = (await shard.run([{ ...listOp(0), enc: { format: 'json', pretty: false } }])).results[0];
      if (!r || !('code' in r)) throw new Error('JSON list failed');
      process.stdout.write(`JSON LIST: ${(performance.now() - t0).toFixed(0)} ms wall\n`);
    }
    helperTuning.off = args.includes('--no-helper');
    if (args.includes('--helper-first')) {
      // the helper thread and the actor's schema loaded before the first list (not the server's default)
      process.stdout.write(`helper thread ready: ${await startHelper()}\n`);
      protobufCodec().typeFor('', 'v1', 'Pod');
    }
    for (let i = 0; i < lists; i++) {
      let bytes = 0;
      const op = listOp(i + 1);
      const helped = helperStats.items;
      const threads = threadCpuMs();
      const session = prof ? await startProfile() : undefined;
      const t0 = performance.now();
      const cpu = await cpuOf(async () => {
        const r = (await shard.run([op])).results[0];
        if (!r || !('code' in r) || typeof r.body === 'string') throw new Error('list failed');
        bytes = r.body.byteLength;
      });
      const ms = performance.now() - t0;
      const split = threadSplit(threads, threadCpuMs());
      if (session && prof) await stopProfile(session, join(prof, `list-${i + 1}.cpuprofile`));
      process.stdout.write(
        `Protobuf LIST ${i + 1}: ${bytes} bytes, ${ms.toFixed(0)} ms wall, ${(cpu / n).toFixed(2)} µs CPU/item (all threads), ${helperStats.items - helped} items encoded by the helper thread; ${split}\n${JSON.stringify(helperStats)}\n`,
      );
    }
    process.stdout.write(`RSS after the lists: ${rssLine()}\n`);
    const gc = (globalThis as { gc?: () => void }).gc;
    if (gc) {
      // what is left once garbage is collected (run with --expose-gc): the kept item bytes and the cache
      gc();
      process.stdout.write(`RSS after the lists and a full GC: ${rssLine()}\n`);
    }
    process.stdout.write('stages of a first encoding, over every entry:\n');
    stages(all, Math.min(5, arg(args, '--stages', 3)));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
