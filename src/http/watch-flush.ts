/**
 * One flush of the watch hub (src/http/watch-hub.ts): the groups with frames dispatched and the
 * solo watchers' queued frames, taken when the flush begins and written in as many slices as
 * the budget asks for. Frames dispatched meanwhile wait for the next flush, which begins only
 * once this one is done, so each watcher gets its frames in rv order, except that a watcher
 * this flush has yet to reach gets those newer frames with its own (groups: watch-group.ts;
 * solo watchers: `fresh`); a watcher written early (bookmark, close) takes its frames of this
 * flush out first (`take`).
 */
import { joinChunks, type Chunk } from '../codec/watch-encoding.js';
import type { Budget } from './watch-budget.js';
import type { Member, WatchGroup } from './watch-group.js';

type Send<W> = (w: W, chunk: Chunk) => void;

export class FlushRun<W extends Member> {
  private readonly groups: Iterator<WatchGroup<W>>;
  private group: WatchGroup<W> | undefined;
  private readonly solo: Iterator<[W, Chunk[]]>;
  /** ids of the solo watchers' frames, and the joined bytes per sequence of ids */
  private readonly ids = new Map<Chunk, number>();
  private readonly joined = new Map<string, Chunk>();
  /** front-thread time spent writing so far (ms): what paces the next flush */
  busyMs = 0;
  /** slices written so far */
  slices = 0;

  /** fresh: takes a solo watcher's frames queued since this flush began (newer than its own here) */
  constructor(
    groups: Set<WatchGroup<W>>,
    private readonly queued: Map<W, Chunk[]>,
    private readonly fresh: (w: W) => Chunk[] | undefined,
  ) {
    this.groups = groups.values();
    this.solo = queued.entries();
  }

  /** Writes until everything is written (true) or the budget runs out (false). */
  step(send: Send<W>, budget: Budget): boolean {
    for (;;) {
      if (!this.group) {
        const r = this.groups.next();
        if (r.done) break;
        this.group = r.value;
      }
      if (!this.group.flush(send, budget)) return false;
      this.group = undefined;
    }
    for (;;) {
      if (!budget.more()) return false;
      const r = this.solo.next();
      if (r.done) return true;
      const [w, chunks] = r.value;
      // written now: a later take() must not find it
      this.queued.delete(w);
      if (w.closed) continue;
      const newer = this.fresh(w);
      send(w, this.join(newer ? [...chunks, ...newer] : chunks));
    }
  }

  /** A solo watcher's frames of this flush not yet written, taken out (the caller writes them first). */
  take(w: W): Chunk[] | undefined {
    const chunks = this.queued.get(w);
    if (chunks) this.queued.delete(w);
    return chunks;
  }

  /** Watchers queued the same frames (the same objects, shared by the hub's collect) get the same joined bytes. */
  private join(chunks: Chunk[]): Chunk {
    if (chunks.length === 1) return chunks[0]!;
    let key = '';
    for (const c of chunks) {
      let id = this.ids.get(c);
      if (id === undefined) this.ids.set(c, (id = this.ids.size));
      key += `${id},`;
    }
    let out = this.joined.get(key);
    if (!out) this.joined.set(key, (out = joinChunks(chunks)));
    return out;
  }
}
