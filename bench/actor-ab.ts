/**
 * Two builds' shard actors in one process, their batches of server-side applies alternating:
 * the CPU each build's actor code spends on the same work under the same load, which a
 * shared machine otherwise buries in noise (runs one after the other see different loads).
 * Each build opens its own Shard (its own modules, LMDB directory and objects) from its dist/;
 * a batch is 32 applies of the apply scenario's Deployment (bench/scenarios/apply.ts) through
 * Shard.run, timed on this thread's CPU clock (/proc/thread-self/schedstat, nanoseconds): the
 * actor's own thread, without LMDB's writer and compression threads nor the GC helpers. The
 * order within a round alternates, so neither build always runs after the other.
 *
 *   node dist/bench/actor-ab.js <other checkout> [mixed|deployer|scaler] [--rounds 300]
 *
 * mixed: the two managers alternate per batch (the scenario); deployer: every apply changes
 * the template; scaler: replicas only. Prints µs per apply for both and the ratio this/other.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

type Mode = 'mixed' | 'deployer' | 'scaler';
const MODES: readonly Mode[] = ['mixed', 'deployer', 'scaler'];
const BATCH = 32;
const WARMUP_ROUNDS = 40;
const MAX_ROUNDS = 5000;

interface Build {
  dir: string;
  /** one batch; answers the thread's CPU nanoseconds it took */
  run(): Promise<number>;
}

const cpuNs = (): number => Number(readFileSync('/proc/thread-self/schedstat', 'utf8').split(' ')[0]);

/** The shard of the build whose dist/ is at `root`, and a batch runner for `mode`. */
async function open(root: string, mode: Mode): Promise<Build> {
  const load = (p: string) => import(join(root, 'dist', p));
  const { Shard } = await load('src/actors/shard.js');
  const { DEFAULT_OPTIONS } = await load('src/server/options.js');
  const { actorPoolConfig } = await load('src/server/shards.js');
  const { makeIdentity } = await load('src/api/identity.js');
  const { deployerBody, scalerBody } = await load('bench/scenarios/apply.js');
  const dir = mkdtempSync(join(tmpdir(), 'plat-actor-ab-'));
  const o = { ...DEFAULT_OPTIONS, dataDir: dir, shards: 1, storageBackend: 'lmdb' };
  const shard = new Shard({
    ...actorPoolConfig(o, makeIdentity(o.apiDomain)),
    shard: 0,
    rvBuffer: new SharedArrayBuffer(8),
  });
  await shard.init();
  const names = Array.from({ length: BATCH }, (_, i) => `d-${i}`);
  const user = { username: 'bench', groups: ['system:masters', 'system:authenticated'] };
  let id = 1;
  let round = 0;
  const op = (name: string, scaler: boolean) => ({
    id: id++,
    op: 'patch',
    type: { group: 'apps', version: 'v1', resource: 'deployments' },
    enc: { format: 'json', pretty: false },
    dryRun: false,
    namespace: 'default',
    name,
    patchType: 'apply',
    text: scaler ? scalerBody(name, round) : deployerBody(name, round),
    force: scaler,
    fieldManager: scaler ? 'autoscaler' : 'deployer',
    user,
  });
  return {
    dir,
    run: async () => {
      round++;
      // the first round creates the objects (a deployer apply); scaler applies come after
      const scaler = round > 1 && (mode === 'scaler' || (mode === 'mixed' && round % 2 === 0));
      const ops = names.map((n) => op(n, scaler));
      const c0 = cpuNs();
      const reply = (await shard.run(ops)) as { results: { code?: number; error?: unknown }[] };
      const took = cpuNs() - c0;
      const bad = reply.results.find((r) => r.error !== undefined || (r.code ?? 0) >= 300);
      if (bad) throw new Error(`${root}: ${JSON.stringify(bad).slice(0, 300)}`);
      return took;
    },
  };
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const other = args[0];
  const mode = (args[1] && !args[1].startsWith('--') ? args[1] : 'mixed') as Mode;
  const i = args.indexOf('--rounds');
  const rounds = Math.min(MAX_ROUNDS, i >= 0 ? Number(args[i + 1]) : 300);
  if (!other || !MODES.includes(mode) || !(rounds > 0))
    throw new Error('usage: node dist/bench/actor-ab.js <other checkout> [mixed|deployer|scaler] [--rounds 300]');
  const here = resolve(fileURLToPath(import.meta.url), '../../..');
  const a = await open(resolve(other), mode);
  const b = await open(here, mode);
  try {
    for (let n = 0; n < WARMUP_ROUNDS; n++) {
      await a.run();
      await b.run();
    }
    let ta = 0;
    let tb = 0;
    for (let n = 0; n < rounds; n++) {
      if (n % 2) {
        ta += await a.run();
        tb += await b.run();
      } else {
        tb += await b.run();
        ta += await a.run();
      }
    }
    const per = (t: number) => (t / (rounds * BATCH) / 1000).toFixed(1);
    const load = readFileSync('/proc/loadavg', 'utf8').split(' ')[0];
    process.stdout.write(
      `${mode}: other ${per(ta)} µs/apply, this ${per(tb)} µs/apply (actor thread CPU, ${rounds} rounds of ${BATCH} each), this/other ${(tb / ta).toFixed(3)} (load ${load})\n`,
    );
  } finally {
    rmSync(a.dir, { recursive: true, force: true });
    rmSync(b.dir, { recursive: true, force: true });
  }
}

await main();
process.exit(0);
