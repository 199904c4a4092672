/**
 * Piscina entry of a shard actor. workerData is the ActorConfig; each task is either the
 * init request or a Batch, answered with InitReply or BatchReply.
 */
import { workerData } from 'node:worker_threads';
import { Shard } from '../src/actors/shard.js';
import type { ActorConfig, Batch, BatchReply, InitReply, InitRequest } from '../src/actors/protocol.js';

const shard = new Shard(workerData as ActorConfig);

export default async function handle(task: Batch | InitRequest): Promise<BatchReply | InitReply> {
  if ('init' in task) return shard.init();
  return shard.run(task.ops);
}
