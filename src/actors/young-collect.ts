/**
 * Actor side of the idle collection (src/actors/idle-collect.ts): a scavenge of the calling
 * thread's young generation, asked for by the front thread once the shard went idle.
 *
 * Node has no API that starts a GC without --expose-gc; setting the flag on a running isolate
 * does not install the `gc` global there, but a new vm context made afterwards gets it, so the
 * function is taken from one, once, in the actor's thread only (the flag is process-wide but
 * nothing else reads it, and the front thread's global is untouched).
 */
import { getHeapSpaceStatistics, setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

type Gc = (options?: { type?: 'minor' | 'major'; execution?: 'sync' | 'async' }) => void;
let gc: Gc | undefined;

/** The calling thread's young generation in use (bytes). */
export function newSpaceUsed(): number {
  return getHeapSpaceStatistics().find((x) => x.space_name === 'new_space')?.space_used_size ?? 0;
}

export interface CollectReply {
  /** young generation in use before and after the scavenge (bytes) */
  before: number;
  after: number;
}

/** Scavenges the calling thread's young generation now. */
export function collectYoung(): CollectReply {
  if (!gc) {
    setFlagsFromString('--expose-gc');
    gc = runInNewContext('gc') as Gc;
  }
  const before = newSpaceUsed();
  gc({ type: 'minor', execution: 'sync' });
  return { before, after: newSpaceUsed() };
}
