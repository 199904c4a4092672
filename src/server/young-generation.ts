/**
 * Lets the front thread's young generation grow to FRONT_NEW_SPACE_MB (4 MB as V8 reports the
 * new space) instead of 32 MB. Imported first by src/main.ts, so it runs before the server
 * allocates anything, whether started by `npm start`, the `platform-apiserver` bin or a bench
 * or test harness (all run dist/src/main.js).
 *
 * Why: a watch request leaves a few KB of short-lived garbage (filters, flow control, request
 * info, the actor round trip) next to its ~4 KB of live state. With a growing young generation
 * that garbage sits in semi-space pages the idle server never collects or returns, so 1,000
 * idle watchers cost ~12–18 KB of RSS each; capped, ~7–9 KB (docs/benchmarks.md, "Watch,
 * fourth round", with the GET, LIST and create costs measured beside it). A 1 MB cap made the
 * request path's garbage scavenged so often that it cost a create ~20–30 µs of front thread;
 * 4 MB costs ~8 KB per idle watcher and a fifth less front CPU per create ("Creates, fifth round").
 *
 * How: `--max-semi-space-size` is read only when a heap is set up, so setting it here (after
 * the main isolate exists) does nothing; `--semi-space-growth-factor` is read each time V8
 * considers growing the new space, so a factor of 2 below the target (V8 doubles it) and of 1
 * at it (re-chosen after each GC of this thread) stops the main heap's growth at the target.
 * V8 flags are process-wide, so the worker threads (shard actors, body decoders) would keep
 * their initial young generation too, at 10–25% more CPU per list item, create and apply; they
 * are exempted by `--min-semi-space-size`, which V8 reads only when it sets a heap up: set
 * after this thread's heap exists, it gives every Worker started later a full-size young
 * generation from the start and leaves this thread's alone. Node re-applies the command line's V8 flags whenever it starts a Worker, resetting
 * this one, so it is set again on each 'worker' event and after each GC; a scavenge between a
 * reset and the next re-set can double the young generation once past the target, as can a
 * single event loop turn that allocates many MB (the flag is re-chosen between turns).
 * test/server/young-generation.test.ts checks the real server's front thread after startup and
 * 200 watch requests (at most one doubling past the target) and a retaining load in a fresh
 * process (exactly the target, against 32 MB uncapped).
 */
import { getHeapSpaceStatistics, setFlagsFromString } from 'node:v8';
import { keepFlagsSet, startedWith } from './v8-flags.js';

/**
 * The semi-space a Worker's heap starts with (MB; V8's default maximum on 64-bit): the cap is
 * for the front thread's idle memory, while the actors' batches allocate fast and a 1 MB young
 * generation cost them 10–25% more CPU per list item, create and apply (docs/benchmarks.md).
 */
export const WORKER_SEMI_SPACE_MB = 16;

/**
 * The front thread's new space target (MB, the size V8 reports for the new space, 1 at start
 * and 32 at most by default): V8 doubles it while its scavenges find many survivors; the
 * doubling is allowed below this size and stopped at it. See "Creates, fifth round" in
 * docs/benchmarks.md for the CPU per create and the idle watcher memory of each size.
 */
export const FRONT_NEW_SPACE_MB = 4;
const FRONT_NEW_SPACE_TARGET = FRONT_NEW_SPACE_MB * 1024 * 1024;

/** The calling thread's new space size (bytes), as V8 reports it. */
export function newSpaceBytes(): number {
  return getHeapSpaceStatistics().find((x) => x.space_name === 'new_space')?.space_size ?? 0;
}

/** Node flags that choose the young generation size themselves: an explicit choice wins. */
const EXPLICIT = /--(max|min)[-_]semi[-_]space[-_]size|--semi[-_]space[-_]growth[-_]factor/;

/** Whether the process was started with its own young-generation flags (command line or NODE_OPTIONS). */
export function explicitYoungGeneration(execArgv: readonly string[], nodeOptions: string | undefined): boolean {
  return startedWith(EXPLICIT, execArgv, nodeOptions);
}

/** Caps the calling process's main heap young generation at its initial size, unless flags chose one. */
export function capYoungGeneration(): boolean {
  if (explicitYoungGeneration(process.execArgv, process.env.NODE_OPTIONS)) return false;
  // set again after a Worker start resets it (v8-flags.ts); a GC in between may still double
  // the young generation once per Worker start
  keepFlagsSet(() => {
    // below the target V8 may double it (its default factor); at the target it stays
    setFlagsFromString(`--semi-space-growth-factor=${newSpaceBytes() < FRONT_NEW_SPACE_TARGET ? 2 : 1}`);
    // read only when a heap is set up: this thread's is (it stays at 1 MB), a Worker's is not
    // yet, so the shard actors and decoders start with the default maximum and are not capped
    setFlagsFromString(`--min-semi-space-size=${WORKER_SEMI_SPACE_MB}`);
  });
  return true;
}

capYoungGeneration();
