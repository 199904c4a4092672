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
 * (a LIST flood) falls behind one of short requests instead of taking turns with it.
 *
 * A request occupies one or more seats (its width: a LIST's estimate from
 * src/flowcontrol/work-estimate.ts, at most the level's `maxSeats`), and is charged virtual time
 * for each. As upstream's queueset, a wide request at the head of the chosen queue waits until
 * enough seats are free: the level dispatches nothing else meanwhile. A write that fans out to
 * many watchers holds its seats (the larger of its initial and final seats) for its
 * `additionalLatencyMs` after it is answered, as upstream's queueset; its answer is not delayed.
 */
import type { WorkEstimate } from './work-estimate.js';
import { dealHand } from './shuffle-shard.js';

export { dealHand, flowHash } from './shuffle-shard.js';

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

interface Waiter {
  seats: number;
  work: WorkEstimate;
  go: (seat: Seat) => void;
  refuse: (reason: RejectReason) => void;
  timer: NodeJS.Timeout | undefined;
  queue: Waiter[];
}

/** the loans of a request served from its own seats (shared, never modified) */
const NO_LOANS: [Level, number][] = [];

/** the service time charged to a queue at dispatch before the real one is known (upstream: 3 ms) */
export const ESTIMATED_SERVICE_MS = 3;

export class Level {
  nominal = 0;
  lendable = 0;
  borrowLimit = Infinity;
  /** the widest a request of this level may be (upstream's MaxSeatsTracker value) */
  maxSeats = 1;
  /** own seats used by own requests */
  executingOwn = 0;
  /** own seats used by other levels' requests */
  lentOut = 0;
  /** seats of other levels used by own requests */
  borrowed = 0;
  /** requests executing (each holds one or more of the seats above) */
  requests = 0;
  waiting = 0;
  queues: Waiter[][] = [];
  /** per queue: virtual time (ms of seat time received, plus charges) and requests executing */
  vt: number[] = [];
  running: number[] = [];
  /** the virtual time of the latest dispatch: where a queue turning busy starts */
  private now = 0;

  constructor(public cfg: LevelConfig) {}

  /** seats in use by this level's requests */
  get executing(): number {
    return this.executingOwn + this.borrowed;
  }

  resize(queues: number): void {
    this.vt = Array.from({ length: queues }, (_, i) => this.vt[i] ?? this.now);
    this.running = Array.from({ length: queues }, (_, i) => this.running[i] ?? 0);
  }

  /** A request joins queue i (an idle queue catches up with the level's virtual time first). */
  enqueue(i: number, w: Waiter): void {
    if (this.queues[i]!.length === 0 && this.running[i] === 0) this.vt[i] = Math.max(this.vt[i]!, this.now);
    this.queues[i]!.push(w);
  }

  /**
   * Queue i dispatches a request of `seats` seats: charged the estimate now; `finish(ms)`
   * settles the real seat time (seats × ms, as upstream's work in seat-seconds).
   */
  dispatch(i: number, seats: number, afterwards = 0): (ms: number) => void {
    this.now = Math.max(this.now, this.vt[i]!);
    this.vt[i]! += ESTIMATED_SERVICE_MS * seats + afterwards;
    this.running[i]!++;
    return (ms) => {
      if (i >= this.vt.length) return; // the queue went with a configuration change
      this.vt[i]! += (ms - ESTIMATED_SERVICE_MS) * seats;
      this.running[i] = Math.max(0, this.running[i]! - 1);
    };
  }

  /**
   * The next waiter (not removed): the head of the non-empty queue whose head would finish
   * first in virtual time (its queue's virtual time plus the head's estimated work), as
   * upstream's queueset; so of two queues level in virtual time, a one-seat write goes before
   * an eight-seat LIST instead of waiting behind it for eight free seats.
   */
  peek(): Waiter | undefined {
    let best = -1;
    let bestFinish = Infinity;
    for (let i = 0; i < this.queues.length; i++) {
      const head = this.queues[i]![0];
      if (!head) continue;
      const finish =
        this.vt[i]! + ESTIMATED_SERVICE_MS * head.seats + head.work.finalSeats * head.work.additionalLatencyMs;
      if (finish < bestFinish) {
        best = i;
        bestFinish = finish;
      }
    }
    return best < 0 ? undefined : this.queues[best]![0];
  }
}

/** The seats one request holds: `own` of its level's, and loans from lending levels. */
interface Seat {
  by: Level;
  own: number;
  loans: [Level, number][];
}

export class Dispatcher {
  readonly levels = new Map<string, Level>();
  /** the length of the queue the latest queued request joined, itself included */
  lastQueueLength = 0;

  constructor(
    private serverLimit: number,
    private readonly maxWaitMs: number,
    private readonly clock: () => number = () => performance.now(),
    private readonly after: (ms: number, fn: () => void) => void = (ms, fn) => void setTimeout(fn, ms).unref(),
  ) {}

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
      for (const w of orphans) {
        w.queue = l.queues[0] ?? [];
        w.queue.push(w);
      }
      this.levels.set(cfg.name, l);
    }
    // a level gone from the configuration finishes what it runs; its waiters are refused
    for (const [name, l] of this.levels) {
      if (seen.has(name)) continue;
      for (const q of l.queues)
        for (const w of q.splice(0)) {
          clearTimeout(w.timer);
          w.refuse('concurrency-limit');
        }
      l.waiting = 0;
      if (l.executing === 0 && l.lentOut === 0) this.levels.delete(name);
    }
    // v1: the shares of every level count, the exempt one's too (its seats are not limited, but
    // they are taken out of what the Limited levels divide)
    const current = [...this.levels.values()].filter((l) => seen.has(l.cfg.name));
    const shares = current.reduce((s, l) => s + l.cfg.shares, 0) || 1;
    for (const l of current) {
      l.nominal = Math.ceil((this.serverLimit * l.cfg.shares) / shares);
      l.maxSeats = maxSeatsOf(l.nominal, l.cfg);
      l.lendable = Math.round((l.nominal * l.cfg.lendablePercent) / 100);
      l.borrowLimit =
        l.cfg.borrowingLimitPercent === undefined
          ? Infinity
          : Math.round((l.nominal * l.cfg.borrowingLimitPercent) / 100);
    }
    this.pump();
  }

  /** Hot path: the release admit's `go` would get at once (nothing waits, seats free); else undefined. */
  acquireNow(levelName: string, flowHash: number, work: WorkEstimate): (() => void) | undefined {
    const l = this.levels.get(levelName);
    if (l?.waiting !== 0) return undefined;
    const seats = seatsOf(l, work);
    const seat = this.acquire(l, seats, true);
    if (!seat) return undefined;
    return this.releaser(seat, l, l.queues.length ? this.shortestInHand(l, flowHash) : -1, seats, work);
  }

  /**
   * Runs `go(release)` now or once a seat frees; `refuse` when the request cannot be served.
   * Returns a cancel function while the request waits (client gone).
   */
  admit(
    levelName: string,
    flowHash: number,
    go: (release: () => void) => void,
    refuse: (reason: RejectReason) => void,
    estimate: WorkEstimate | number = 1,
  ): (() => void) | undefined {
    const l = this.levels.get(levelName);
    if (!l) return void refuse('concurrency-limit');
    const work =
      typeof estimate === 'number' ? { initialSeats: estimate, finalSeats: 0, additionalLatencyMs: 0 } : estimate;
    const now = this.acquireNow(levelName, flowHash, work);
    if (now) return void go(now);
    const seats = seatsOf(l, work);
    const qi = l.queues.length ? this.shortestInHand(l, flowHash) : -1;
    if (l.cfg.reject || qi < 0) return void refuse('concurrency-limit');
    const queue = l.queues[qi]!;
    if (queue.length >= l.cfg.queueLengthLimit) return void refuse('queue-full');
    let dispatched = false;
    const w: Waiter = { seats, work, go: () => {}, refuse, timer: undefined, queue };
    w.go = (s) => {
      dispatched = true;
      clearTimeout(w.timer);
      go(this.releaser(s, l, l.queues.indexOf(w.queue), seats, work));
    };
    l.enqueue(qi, w);
    l.waiting++;
    this.lastQueueLength = queue.length;
    // as upstream's queueset, an arrival dispatches as much as fair order allows: when its queue
    // has the least virtual time, free seats that the wide request at another queue's head
    // cannot use yet go to it now rather than at the next release
    this.pump();
    if (dispatched) return undefined;
    w.timer = setTimeout(() => {
      if (this.drop(l, w)) refuse('time-out');
    }, this.maxWaitMs);
    w.timer.unref();
    return () => {
      if (this.drop(l, w)) {
        clearTimeout(w.timer);
        refuse('cancelled');
      }
    };
  }

  private drop(l: Level, w: Waiter): boolean {
    const i = w.queue.indexOf(w);
    if (i < 0) return false;
    w.queue.splice(i, 1);
    l.waiting--;
    return true;
  }

  /**
   * `seats` seats, all or none: own seats first; the rest lent by other levels (each lends what
   * is free of its lendable part), within this level's borrowing limit.
   */
  private acquire(l: Level, seats: number, mayBorrow: boolean): Seat | undefined {
    const own = l.cfg.exempt ? seats : Math.min(seats, Math.max(0, l.nominal - l.executingOwn - l.lentOut));
    let need = seats - own;
    let loans = NO_LOANS;
    if (need > 0) {
      loans = [];
      if (!mayBorrow || l.borrowed + need > l.borrowLimit) return undefined;
      for (const j of this.levels.values()) {
        if (j === l || j.cfg.exempt || j.waiting > 0) continue;
        const n = Math.min(need, j.lendable - j.lentOut, j.nominal - j.executingOwn - j.lentOut);
        if (n <= 0) continue;
        loans.push([j, n]);
        if ((need -= n) === 0) break;
      }
      if (need > 0) return undefined;
    }
    l.executingOwn += own;
    l.requests++;
    for (const [j, n] of loans) {
      j.lentOut += n;
      l.borrowed += n;
    }
    return { by: l, own, loans };
  }

  /** Gives the seats back. */
  private free(seat: Seat): void {
    seat.by.executingOwn -= seat.own;
    seat.by.requests--;
    for (const [j, n] of seat.loans) {
      j.lentOut -= n;
      seat.by.borrowed -= n;
    }
  }

  /**
   * The release of a request's seats (after its additional latency, if any); one from queue
   * `qi` (≥ 0) settles its queue's virtual time.
   */
  private releaser(seat: Seat, l: Level, qi: number, seats: number, work: WorkEstimate): () => void {
    let done = false;
    const later = work.finalSeats > 0 ? work.additionalLatencyMs : 0;
    const finish = qi >= 0 ? l.dispatch(qi, seats, work.finalSeats * later) : undefined;
    // the seat time settles a queue's virtual time: without a queue there is nothing to time
    const started = finish ? this.clock() : 0;
    const free = () => {
      this.free(seat);
      this.pump();
    };
    return () => {
      if (done) return;
      done = true;
      finish?.(this.clock() - started);
      if (later > 0) this.after(later, free);
      else free();
    };
  }

  /**
   * Gives free seats to waiters: own seats first (lenders before borrowers), then borrowed ones.
   * A level's next request waits for all its seats; nothing behind it is dispatched meanwhile.
   */
  private pump(): void {
    for (const mayBorrow of [false, true]) {
      for (const l of this.levels.values()) {
        // hot path (every release pumps): a level with no waiter has nothing to dispatch, and
        // peek would scan each of its queues (64 by default)
        if (l.waiting === 0) continue;
        for (let w = l.peek(); w; w = l.peek()) {
          const seat = this.acquire(l, w.seats, mayBorrow);
          if (!seat) break;
          this.drop(l, w);
          w.go(seat);
        }
      }
    }
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

/** The seats a request occupies: a request never needs more than its level could ever give it. */
function seatsOf(l: Level, work: WorkEstimate): number {
  return l.cfg.exempt ? 1 : Math.max(1, Math.min(Math.max(work.initialSeats, work.finalSeats), l.maxSeats));
}

/**
 * The widest request a level takes (upstream's apf_controller): 15% of its nominal seats rounded
 * up, but no more than a hand's share of them, and at least 1; the work estimator caps it at 10.
 */
export function maxSeatsOf(nominal: number, cfg: Pick<LevelConfig, 'reject' | 'handSize'>): number {
  const fifteenPercent = Math.ceil(nominal * 0.15);
  const perHand = cfg.reject ? fifteenPercent : Math.floor(nominal / Math.max(1, cfg.handSize));
  return Math.max(1, Math.min(fifteenPercent, perHand));
}
