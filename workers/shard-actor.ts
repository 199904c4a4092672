/**
 * Piscina entry of a shard actor. workerData is the ActorConfig; each task is either the
 * init request or a Batch, answered with InitReply or BatchReply.
 */
import { workerData } from 'node:worker_threads';
import { move, transferableSymbol, valueSymbol } from 'piscina';
import { Shard } from '../src/actors/shard.js';
import { packBodies } from '../src/actors/pack.js';
import { unpackOps } from '../src/actors/wire-ops.js';
import { packReply } from '../src/actors/wire-reply.js';
import { reuse } from '../src/codec/buffer-pool.js';
import { collectYoung } from '../src/actors/young-collect.js';
import { crashIfAsked, holdIfAsked, holdInit } from '../src/actors/test-faults.js';
import type {
  ActorConfig,
  Batch,
  BatchReply,
  CollectRequest,
  DefsReply,
  DefsRequest,
  InitReply,
  InitRequest,
  SnapshotRequest,
} from '../src/actors/protocol.js';

const config = workerData as ActorConfig;
const shard = new Shard(config);

export default async function handle(
  task: Batch | InitRequest | DefsRequest | SnapshotRequest | CollectRequest,
): Promise<BatchReply | InitReply | DefsReply | unknown> {
  if ('init' in task) {
    await holdInit(config.testFaults);
    return shard.init();
  }
  // with no batch between its execution and its commit (pipelined batches, see Shard.run)
  if ('defs' in task) return shard.exclusive(() => shard.setDefs(task.defs));
  // between batches (piscina runs it when the front sends it: the shard was idle)
  if ('collect' in task) return collectYoung();
  if ('snapshot' in task) return shard.exclusive(() => shard.snapshot());
  const ops = task.wire ? unpackOps(task.wire) : task.ops;
  crashIfAsked(config.testFaults, ops);
  await holdIfAsked(config.testFaults, ops);
  if (task.returned) reuse(task.returned);
  const reply = await shard.run(ops, task.streams, task.poll);
  const bufs = packBodies(reply);
  packReply(reply);
  return bufs.length ? move({ [transferableSymbol]: bufs, [valueSymbol]: reply } as never) : reply;
}
