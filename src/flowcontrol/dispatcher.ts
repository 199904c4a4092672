/**
 * Seats, queues and borrowing of API Priority and Fairness. Each Limited priority level gets a
 * nominal share of the server's concurrency limit, may lend `lendablePercent` of it and borrow
 * up to `borrowingLimitPercent` from others (borrowing here is per seat at dispatch time;
 * upstream re-divides every 10 s). A request finding no seat is rejected (limitResponse
 * Reject) or queued: shuffle sharding deals its flow a hand of queues, it joins the one with the
 * fewest requests waiting and executing. Freed seats go to the non-empty queue with the least
 * virtual time (fair queuing by service received, as upstream's queueset): every dispatch from a
 * queue charges it an estimated service time, corrected to the real seat time on release, and a
 * queue that turns busy starts at the level's current virtual time, so a flow of long requests
 * (a LIST flood) falls behind one of short requests instead of taking turns with it. Every
 * request takes one seat (no width estimate for LISTs).
 */

export interface LevelConfig {
  name: string;
  uid: string;
  exempt: boolean;
  shares: number;
  lendablePercent: number;
  /** undefined = no limit */
  borrowingLimitPercent: number | undefined;
  /** limitResponse.type Reject (no queues) */
  reject: boolean;
  queues: number;
  handSize: number;
  queueLengthLimit: number;
}

export type RejectReason = 'queue-full' | 'concurrency-limit' | 'time-out' | 'cancelled';

interface Waiter { go: () => void; refuse: (reason: RejectReason) => void; timer: NodeJS.Timeout | undefined; queue: Waiter[] }

/** the service time charged to a queue at dispatch before the real one is known (upstream: 3 ms) */
export const ESTIMATED_SERVICE_MS = 3;

export class Level {
  nominal = 0;
  lendable = 0;
  borrowLimit = Infinity;
  /** own requests on own seats */
  executingOwn = 0;
  /** own seats used by other levels' requests */
  lentOut = 0;
  /** own requests on other levels' seats */
  borrowed = 0;
  waiting = 0;
  queues: Waiter[][] = [];
  /** per queue: virtual time (ms of seat time received, plus charges) and requests executing */
  vt: number[] = [];
  running: number[] = [];
  /** the virtual time of the latest dispatch: where a queue turning busy starts */
  private now = 0;

  constructor(public cfg: LevelConfig) {}

  get executing(): number { return this.executingOwn + this.borrowed; }

  resize(queues: number): void {
    this.vt = Array.from({ length: queues }, (_, i) => this.vt[i] ?? this.now);
    this.running = Array.from({ length: queues }, (_, i) => this.running[i] ?? 0);
  }

  /** A request joins queue i (an idle queue catches up with the level's virtual time first). */
  enqueue(i: number, w: Waiter): void {
    if (this.queues[i]!.length === 0 && this.running[i] === 0) this.vt[i] = Math.max(this.vt[i]!, this.now);
    this.queues[i]!.push(w);
  }

  /** Queue i dispatches a request: charged the estimate now; `finish(ms)` settles the real seat time. */
  dispatch(i: number): (ms: number) => void {
    this.now = Math.max(this.now, this.vt[i]!);
    this.vt[i]! += ESTIMATED_SERVICE_MS;
    this.running[i]!++;
    return (ms) => {
      if (i >= this.vt.length) return; // the queue went with a configuration change
      this.vt[i]! += ms - ESTIMATED_SERVICE_MS;
      this.running[i] = Math.max(0, this.running[i]! - 1);
    };
  }

  /** The next waiter: the head of the non-empty queue with the least virtual time. */
  next(): Waiter | undefined {
    let best = -1;
    for (let i = 0; i < this.queues.length; i++) {
      if (this.queues[i]!.length && (best < 0 || this.vt[i]! < this.vt[best]!)) best = i;
    }
    if (best < 0) return undefined;
    this.waiting--;
    return this.queues[best]!.shift();
  }
}

interface Seat { from: Level; by: Level }

export class Dispatcher {
  readonly levels = new Map<string, Level>();

  constructor(private serverLimit: number, private readonly maxWaitMs: number, private readonly clock: () => number = () => performance.now()) {}

  /** Installs a configuration; levels keep their counters and waiters across changes. */
  configure(configs: LevelConfig[], serverLimit = this.serverLimit): void {
    this.serverLimit = serverLimit;
    const seen = new Set<string>();
    for (const cfg of configs) {
      seen.add(cfg.name);
      const l = this.levels.get(cfg.name) ?? new Level(cfg);
      l.cfg = cfg;
      const queues = cfg.reject || cfg.exempt ? 0 : Math.max(1, cfg.queues);
      // waiters of removed queues keep their place in the remaining ones
      const orphans = l.queues.slice(queues).flat();
      l.queues = Array.from({ length: queues }, (_, i) => l.queues[i] ?? []);
      l.resize(queues);
      for (const w of orphans) { w.queue = l.queues[0] ?? []; w.queue.push(w); }
      this.levels.set(cfg.name, l);
    }
    // a level gone from the configuration finishes what it runs; its waiters are refused
    for (const [name, l] of this.levels) {
      if (seen.has(name)) continue;
      for (const q of l.queues) for (const w of q.splice(0)) { clearTimeout(w.timer); w.refuse('concurrency-limit'); }
      l.waiting = 0;
      if (l.executing === 0 && l.lentOut === 0) this.levels.delete(name);
    }
    const limited = [...this.levels.values()].filter((l) => seen.has(l.cfg.name) && !l.cfg.exempt);
    const shares = limited.reduce((s, l) => s + l.cfg.shares, 0) || 1;
    for (const l of limited) {
      l.nominal = Math.ceil((this.serverLimit * l.cfg.shares) / shares);
      l.lendable = Math.round((l.nominal * l.cfg.lendablePercent) / 100);
      l.borrowLimit = l.cfg.borrowingLimitPercent === undefined ? Infinity : Math.round((l.nominal * l.cfg.borrowingLimitPercent) / 100);
    }
    this.pump();
  }

  /**
   * Runs `go(release)` now or once a seat frees; `refuse` when the request cannot be served.
   * Returns a cancel function while the request waits (client gone).
   */
  admit(levelName: string, flowHash: number, go: (release: () => void) => void, refuse: (reason: RejectReason) => void): (() => void) | undefined {
    const l = this.levels.get(levelName);
    if (!l) return void refuse('concurrency-limit');
    const qi = l.queues.length ? this.shortestInHand(l, flowHash) : -1;
    const seat = l.waiting === 0 ? this.acquire(l, true) : undefined;
    if (seat) return void go(this.releaser(seat, l, qi));
    if (l.cfg.reject || qi < 0) return void refuse('concurrency-limit');
    const queue = l.queues[qi]!;
    if (queue.length >= l.cfg.queueLengthLimit) return void refuse('queue-full');
    const w: Waiter = { go: () => {}, refuse, timer: undefined, queue };
    w.go = () => {
      clearTimeout(w.timer);
      const s = this.acquire(l, true)!;
      go(this.releaser(s, l, l.queues.indexOf(w.queue)));
    };
    w.timer = setTimeout(() => { if (this.drop(l, w)) refuse('time-out'); }, this.maxWaitMs);
    w.timer.unref();
    l.enqueue(qi, w);
    l.waiting++;
    return () => { if (this.drop(l, w)) { clearTimeout(w.timer); refuse('cancelled'); } };
  }

  private drop(l: Level, w: Waiter): boolean {
    const i = w.queue.indexOf(w);
    if (i < 0) return false;
    w.queue.splice(i, 1);
    l.waiting--;
    return true;
  }

  /** Own seat first; then a seat another level lends, within this level's borrowing limit. */
  private acquire(l: Level, mayBorrow: boolean): Seat | undefined {
    if (l.cfg.exempt) { l.executingOwn++; return { from: l, by: l }; }
    if (l.executingOwn + l.lentOut < l.nominal) { l.executingOwn++; return { from: l, by: l }; }
    if (!mayBorrow || l.borrowed >= l.borrowLimit) return undefined;
    for (const j of this.levels.values()) {
      if (j === l || j.cfg.exempt || j.waiting > 0) continue;
      if (j.lentOut < j.lendable && j.executingOwn + j.lentOut < j.nominal) {
        j.lentOut++;
        l.borrowed++;
        return { from: j, by: l };
      }
    }
    return undefined;
  }

  /** The release of a seat; a request from queue `qi` (≥ 0) settles its queue's virtual time. */
  private releaser(seat: Seat, l: Level, qi: number): () => void {
    let done = false;
    const started = this.clock();
    const finish = qi >= 0 ? l.dispatch(qi) : undefined;
    return () => {
      if (done) return;
      done = true;
      finish?.(this.clock() - started);
      if (seat.from === seat.by) seat.by.executingOwn--;
      else { seat.from.lentOut--; seat.by.borrowed--; }
      this.pump();
    };
  }

  /** Gives free seats to waiters: own seats first (lenders before borrowers), then borrowed ones. */
  private pump(): void {
    for (const mayBorrow of [false, true]) {
      for (const l of this.levels.values()) {
        while (l.waiting > 0) {
          const probe = this.acquire(l, mayBorrow);
          if (!probe) break;
          this.undo(probe);
          l.next()!.go();
        }
      }
    }
  }

  private undo(seat: Seat): void {
    if (seat.from === seat.by) seat.by.executingOwn--;
    else { seat.from.lentOut--; seat.by.borrowed--; }
  }

  /** The queue of the flow's hand with the fewest requests waiting and executing. */
  private shortestInHand(l: Level, flowHash: number): number {
    let best = -1;
    const load = (i: number) => l.queues[i]!.length + l.running[i]!;
    for (const i of dealHand(flowHash, l.queues.length, Math.min(l.cfg.handSize, l.queues.length))) {
      if (best < 0 || load(i) < load(best)) best = i;
    }
    return best;
  }
}

/** Shuffle sharding: `handSize` distinct queue indexes out of `deck`, determined by the hash. */
export function dealHand(hash: number, deck: number, handSize: number): number[] {
  const cards = Array.from({ length: deck }, (_, i) => i);
  const hand: number[] = [];
  let h = hash;
  for (let i = 0; i < handSize; i++) {
    const pick = i + (h % (deck - i));
    h = Math.floor(h / (deck - i));
    [cards[i], cards[pick]] = [cards[pick]!, cards[i]!];
    hand.push(cards[i]!);
  }
  return hand;
}

/** FNV-1a over the flow key, widened to 48 bits for dealing. */
export function flowHash(key: string): number {
  let a = 0x811c9dc5, b = 0x01000193 ^ 0x5bd1e995;
  for (let i = 0; i < key.length; i++) {
    const c = key.charCodeAt(i);
    a = Math.imul(a ^ c, 0x01000193);
    b = Math.imul(b ^ c, 0x01000193);
  }
  return (a >>> 0) * 0x10000 + ((b >>> 0) & 0xffff);
}
