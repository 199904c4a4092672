/**
 * Server-side apply's own function (src/apply/managed-fields.ts apply: typing, merge, ownership,
 * conflicts) of two builds in one process, on this thread's CPU clock, their batches alternating:
 * the apply scenario's deployer and autoscaler bodies in turn (bench/scenarios/apply.ts), parsed
 * and applied onto the Deployment the build's previous apply returned. No shard, LMDB, validation
 * or encoding: the part of an apply that actor-ab.ts measures among everything else.
 *
 *   node dist/bench/apply-ab.js <other checkout> [--rounds 400]
 *
 * Prints µs per apply (body parse included) for both and the ratio this/other.
 */
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const BATCH = 200;
const WARMUP_ROUNDS = 50;
const MAX_ROUNDS = 5000;

const cpuNs = (): number => Number(readFileSync('/proc/thread-self/schedstat', 'utf8').split(' ')[0]);

/** A batch runner of the build whose dist/ is at `root`. */
async function open(root: string): Promise<() => void> {
  const load = (p: string) => import(join(root, 'dist', p));
  const { schemaIndex } = await load('src/schema/schema.js');
  const { apply } = await load('src/apply/managed-fields.js');
  const { deployerBody, scalerBody } = await load('bench/scenarios/apply.js');
  const schema = schemaIndex().forKind('apps', 'v1', 'Deployment');
  const target = { kind: 'Deployment', group: 'apps', name: 'd' };
  const first = JSON.parse(deployerBody('d', 0));
  let live: unknown = apply(undefined, first, schema, 'deployer', 'apps/v1', 't0', false, target);
  let k = 1;
  return () => {
    for (let i = 0; i < BATCH; i++, k++) {
      const scaler = k % 2 === 0;
      const body = JSON.parse(scaler ? scalerBody('d', k) : deployerBody('d', k));
      const manager = scaler ? 'autoscaler' : 'deployer';
      live = apply(live, body, schema, manager, 'apps/v1', `t${k}`, scaler, target);
    }
  };
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const other = args[0];
  const i = args.indexOf('--rounds');
  const rounds = Math.min(MAX_ROUNDS, i >= 0 ? Number(args[i + 1]) : 400);
  if (!other || !(rounds > WARMUP_ROUNDS))
    throw new Error('usage: node dist/bench/apply-ab.js <other checkout> [--rounds 400]');
  const self = resolve(fileURLToPath(import.meta.url), '../../..');
  const a = await open(resolve(other));
  const b = await open(self);
  let ta = 0;
  let tb = 0;
  for (let r = 0; r < rounds; r++) {
    // the order alternates, so neither build always runs after the other
    const [x, y] = r % 2 ? [a, b] : [b, a];
    const c0 = cpuNs();
    x();
    const c1 = cpuNs();
    y();
    const c2 = cpuNs();
    if (r < WARMUP_ROUNDS) continue;
    if (x === a) [ta, tb] = [ta + c1 - c0, tb + c2 - c1];
    else [ta, tb] = [ta + c2 - c1, tb + c1 - c0];
  }
  const per = (t: number) => (t / ((rounds - WARMUP_ROUNDS) * BATCH) / 1000).toFixed(2);
  process.stdout.write(`apply(): other ${per(ta)} µs, this ${per(tb)} µs, this/other ${(tb / ta).toFixed(3)}\n`);
}

await main();
