/**
 * Test-only fault injection for shard actors, on only when the hidden flag --test-actor-faults
 * names a directory (ActorConfig.testFaults.dir; tests set it, a production server never does):
 * a GET of an object named CRASH_NAME ends the actor's thread (as an out-of-memory death
 * would), and while `<dir>/hold-init` exists a (re)starting actor waits before loading, so a
 * test can watch the restart in progress; while `<dir>/hold-batch` exists a batch holding a write
 * of an object named HOLD_NAME waits before it runs (writing `<dir>/held` first), so a test can
 * act while that write is in flight.
 */
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Op, TestFaults } from './protocol.js';

export const CRASH_NAME = 'plat-test-actor-crash';
export const HOLD_NAME = 'plat-test-actor-hold';

/** Ends the thread when the batch asks for the crash (never returns then). */
export function crashIfAsked(faults: TestFaults | undefined, ops: readonly Op[]): void {
  if (faults?.dir && ops.some((op) => op.op === 'get' && op.name === CRASH_NAME)) process.exit(70);
}

/** Waits (polling every 20 ms) while `<dir>/<name>` exists. */
async function waitWhileExists(dir: string, name: string): Promise<void> {
  while (existsSync(join(dir, name))) await new Promise((r) => setTimeout(r, 20));
}

/** Waits while the hold-init file exists. */
export async function holdInit(faults: TestFaults | undefined): Promise<void> {
  if (faults?.dir) await waitWhileExists(faults.dir, 'hold-init');
}

/** Waits while the hold-batch file exists, if the batch writes HOLD_NAME. */
export async function holdIfAsked(faults: TestFaults | undefined, ops: readonly Op[]): Promise<void> {
  const dir = faults?.dir;
  if (!dir || !ops.some((op) => op.op !== 'get' && 'name' in op && op.name === HOLD_NAME)) return;
  if (!existsSync(join(dir, 'hold-batch'))) return;
  writeFileSync(join(dir, 'held'), '');
  await waitWhileExists(dir, 'hold-batch');
}
