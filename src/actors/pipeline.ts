/**
 * The order of a shard's pipelined batches (LMDB, and etcd's chained transactions): a batch executes while the batches
 * before it are still committing, reading their staged writes (`inFlight`, oldest first). Batches
 * execute one at a time in arrival order (`enter`); each batch's transaction starts once the one
 * before is written (its fsync may still run: one fsync can cover both) and it answers once that
 * one is published (`join`), so commits, events and answers keep the execution order. A commit
 * that fails discards its writes, and every batch executed after it runs again (`epoch`).
 */
import type { Staged } from './batch.js';

/** A batch's place in the commit order (see Pipeline.join). */
export interface Turn {
  /** settles once the batch before is written (or failed, or had nothing to write) */
  wroteBefore: Promise<void>;
  /** settles once the batch before is published */
  before: Promise<void>;
  /** this batch is written: the next one may start its transaction (idempotent) */
  wrote: () => void;
  /** this batch is published (or failed) */
  done: () => void;
}

export class Pipeline {
  /** the staged writes of batches executed and not yet published, oldest first */
  readonly inFlight: Staged[] = [];
  /** discards so far: a batch that executed in an older epoch read discarded writes */
  epoch = 0;
  private gate: Promise<void> = Promise.resolve();
  private last: Promise<void> = Promise.resolve();
  private written: Promise<void> = Promise.resolve();

  /** A turn to execute, after every batch or task that entered before (leave() ends it). */
  enter(): { turn: Promise<void>; leave: () => void } {
    const turn = this.gate;
    let leave!: () => void;
    this.gate = new Promise((r) => (leave = r));
    return { turn, leave };
  }

  /** Resolves once no batch is between its execution and its publication. */
  async idle(): Promise<void> {
    while (this.inFlight.length) await this.last;
  }

  /** Runs a task that changes or reads all of the shard (types, snapshot) with no batch in flight. */
  async exclusive<T>(task: () => Promise<T>): Promise<T> {
    const open = this.enter();
    try {
      await open.turn;
      await this.idle();
      return await task();
    } finally {
      open.leave();
    }
  }

  /** Takes the next place in the commit order (called right after the batch executed). */
  join(): Turn {
    const { last: before, written: wroteBefore } = this;
    let done!: () => void;
    let wrote!: () => void;
    this.last = new Promise((r) => (done = r));
    this.written = new Promise((r) => (wrote = r));
    return { before, wroteBefore, wrote, done };
  }

  /** A batch's staged writes leave the overlay (published, or discarded). */
  drop(pending: Staged): void {
    const i = this.inFlight.indexOf(pending);
    if (i >= 0) this.inFlight.splice(i, 1);
  }

  /**
   * A batch's staged writes will not be committed as they are: every in-flight batch after it
   * read them, so each runs again and none of their writes is read any more. from: the failed
   * batch's writes (the batches before it, written and not yet durable, stay readable); without
   * it, every in-flight batch's (the caller is at the head: every earlier batch is published).
   */
  discard(from?: Staged): void {
    this.epoch++;
    const i = from ? this.inFlight.indexOf(from) : 0;
    if (i >= 0) this.inFlight.length = i;
  }
}
