/**
 * Test-only fault injection for shard actors, on only when the environment variable
 * PLAT_TEST_ACTOR_FAULTS names a directory (tests set it; a production server never does):
 * a GET of an object named CRASH_NAME ends the actor's thread (as an out-of-memory death
 * would), and while `<dir>/hold-init` exists a (re)starting actor waits before loading, so a
 * test can watch the restart in progress.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Op } from './protocol.js';

export const CRASH_NAME = 'plat-test-actor-crash';
const DIR = process.env.PLAT_TEST_ACTOR_FAULTS;

/** Ends the thread when the batch asks for the crash (never returns then). */
export function crashIfAsked(ops: readonly Op[]): void {
  if (DIR && ops.some((op) => op.op === 'get' && op.name === CRASH_NAME)) process.exit(70);
}

/** Waits (polling every 20 ms) while the hold file exists. */
export async function holdInit(): Promise<void> {
  if (!DIR) return;
  while (existsSync(join(DIR, 'hold-init'))) await new Promise((r) => setTimeout(r, 20));
}
