import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Dispatcher, dealHand, flowHash, maxSeatsOf, type LevelConfig } from '../../src/flowcontrol/dispatcher.js';

const level = (name: string, o: Partial<LevelConfig> = {}): LevelConfig => ({
  name,
  uid: name,
  exempt: false,
  shares: 10,
  lendablePercent: 0,
  borrowingLimitPercent: 0,
  reject: false,
  queues: 4,
  handSize: 2,
  queueLengthLimit: 2,
  ...o,
});

/** Records what ran and what was refused; `hold` keeps the releases. */
function harness(d: Dispatcher) {
  const ran: string[] = [];
  const refused: string[] = [];
  const held = new Map<string, () => void>();
  const send = (lvl: string, flow: string, id: string, seats = 1) =>
    d.admit(
      lvl,
      flowHash(flow),
      (release) => {
        ran.push(id);
        held.set(id, release);
      },
      (reason) => refused.push(`${id}:${reason}`),
      seats,
    );
  return { ran, refused, held, send };
}

test('nominal seats divide the server limit by shares (ceil); exempt is unlimited', () => {
  const d = new Dispatcher(10, 60_000);
  d.configure([level('a', { shares: 30 }), level('b', { shares: 10 }), level('x', { exempt: true, shares: 0 })]);
  assert.equal(d.levels.get('a')!.nominal, 8);
  assert.equal(d.levels.get('b')!.nominal, 3);
  const h = harness(d);
  for (let i = 0; i < 100; i++) h.send('x', 'f', `x${i}`);
  assert.equal(h.ran.length, 100);
  // v1: the exempt level's nominalConcurrencyShares count in the sum (its seats stay unlimited)
  d.configure([level('a', { shares: 30 }), level('b', { shares: 10 }), level('x', { exempt: true, shares: 40 })]);
  assert.deepEqual(
    ['a', 'b', 'x'].map((n) => d.levels.get(n)!.nominal),
    [4, 2, 5],
  );
  for (let i = 0; i < 100; i++) h.send('x', 'f', `y${i}`);
  assert.equal(h.ran.length, 200);
});

test('Reject: past the seats a request is refused at once (concurrency-limit)', () => {
  const d = new Dispatcher(1, 60_000);
  d.configure([level('r', { reject: true })]);
  const h = harness(d);
  h.send('r', 'f', '1');
  h.send('r', 'f', '2');
  assert.deepEqual(h.ran, ['1']);
  assert.deepEqual(h.refused, ['2:concurrency-limit']);
  h.held.get('1')!();
  h.send('r', 'f', '3');
  assert.deepEqual(h.ran, ['1', '3']);
});

test('Queue: a flow fills its shortest queue up to queueLengthLimit, then queue-full; freed seats dispatch', () => {
  const d = new Dispatcher(1, 60_000);
  d.configure([level('q', { queues: 1, handSize: 1, queueLengthLimit: 2 })]);
  const h = harness(d);
  for (const id of ['1', '2', '3', '4']) h.send('q', 'f', id);
  assert.deepEqual(h.ran, ['1']);
  assert.deepEqual(h.refused, ['4:queue-full']);
  h.held.get('1')!();
  assert.deepEqual(h.ran, ['1', '2']);
  h.held.get('2')!();
  h.held.get('2')!(); // a second release is a no-op
  assert.deepEqual(h.ran, ['1', '2', '3']);
  assert.equal(d.levels.get('q')!.executing, 1);
});

test("fair queuing: freed seats go round-robin over the flows' queues, a flood does not starve a quiet flow", () => {
  const d = new Dispatcher(1, 60_000);
  d.configure([level('q', { queues: 16, handSize: 1, queueLengthLimit: 100 })]);
  // two flows on different queues
  const noisy = 'noisy',
    quiet = ['quiet-a', 'quiet-b', 'quiet-c'].find(
      (f) => dealHand(flowHash(f), 16, 1)[0] !== dealHand(flowHash(noisy), 16, 1)[0],
    )!;
  const h = harness(d);
  h.send('q', noisy, 'n0');
  for (let i = 1; i <= 50; i++) h.send('q', noisy, `n${i}`);
  h.send('q', quiet, 'q1');
  h.send('q', quiet, 'q2');
  for (let step = 0; step < 6; step++) h.held.get(h.ran[h.ran.length - 1]!)!();
  assert.ok(h.ran.indexOf('q1') <= 2, `quiet flow ran early: ${h.ran.join(',')}`);
  assert.ok(h.ran.indexOf('q2') <= 4, `quiet flow keeps its turn: ${h.ran.join(',')}`);
});

test('fair queuing by seat time: a flow of long requests falls behind a flow of short ones', () => {
  let t = 0;
  const d = new Dispatcher(1, 60_000, () => t);
  d.configure([level('q', { queues: 16, handSize: 1, queueLengthLimit: 100 })]);
  const noisy = 'noisy',
    quiet = ['quiet-a', 'quiet-b', 'quiet-c'].find(
      (f) => dealHand(flowHash(f), 16, 1)[0] !== dealHand(flowHash(noisy), 16, 1)[0],
    )!;
  const h = harness(d);
  h.send('q', noisy, 'n0');
  for (let i = 1; i <= 20; i++) h.send('q', noisy, `n${i}`);
  for (let i = 1; i <= 5; i++) h.send('q', quiet, `q${i}`);
  // each noisy request holds the seat 100 ms, each quiet one 1 ms
  for (let step = 0; step < 8; step++) {
    const id = h.ran[h.ran.length - 1]!;
    t += id.startsWith('n') ? 100 : 1;
    h.held.get(id)!();
  }
  assert.deepEqual(h.ran.slice(0, 7), ['n0', 'q1', 'q2', 'q3', 'q4', 'q5', 'n1'], h.ran.join(','));
  // round robin would have interleaved them: n0, q1, n1, q2, n2, ...
});

test('borrowing: a busy level borrows lendable seats of an idle one, within its borrowing limit; lenders come first', () => {
  const d = new Dispatcher(4, 60_000);
  d.configure([
    level('busy', { shares: 10, borrowingLimitPercent: 100, queues: 1, handSize: 1, queueLengthLimit: 10 }),
    level('idle', { shares: 10, lendablePercent: 50, queues: 1, handSize: 1, queueLengthLimit: 10 }),
  ]);
  const h = harness(d);
  for (let i = 0; i < 5; i++) h.send('busy', 'b', `b${i}`);
  // own 2 seats + 1 lendable seat of idle (50% of 2)
  assert.deepEqual(h.ran, ['b0', 'b1', 'b2']);
  assert.equal(d.levels.get('idle')!.lentOut, 1);
  h.send('idle', 'i', 'i0');
  assert.ok(h.ran.includes('i0'), 'the lender keeps its unlent seat');
  h.send('idle', 'i', 'i1');
  assert.ok(!h.ran.includes('i1'), 'its lent seat is busy');
  h.held.get('b2')!();
  // the freed borrowed seat goes to the lender's own waiter first
  assert.equal(h.ran[h.ran.length - 1], 'i1');
  const noBorrow = new Dispatcher(4, 60_000);
  noBorrow.configure([
    level('busy', { borrowingLimitPercent: 0, reject: true }),
    level('idle', { lendablePercent: 100 }),
  ]);
  const h2 = harness(noBorrow);
  for (let i = 0; i < 4; i++) h2.send('busy', 'b', `b${i}`);
  assert.equal(h2.ran.length, 2, 'borrowingLimitPercent 0 never borrows');
});

test("maxSeats of a level: upstream's table (15% of nominal seats, at most a hand's share, at least 1)", () => {
  // upstream apf_controller Test_GetMaxSeats: [nominalCL, handSize, maxSeats]
  const table: [number, number, number][] = [
    [5, 6, 1],
    [10, 6, 1],
    [15, 6, 2],
    [20, 6, 3],
    [35, 6, 5],
    [100, 6, 15],
    [200, 6, 30],
    [10, 1, 2],
    [100, 20, 5],
  ];
  for (const [nominal, handSize, want] of table)
    assert.equal(maxSeatsOf(nominal, { reject: false, handSize }), want, `nominal ${nominal} hand ${handSize}`);
});

test('width: a request takes several seats; a wide one at the head waits for all of them and holds back the rest', () => {
  const d = new Dispatcher(40, 60_000);
  d.configure([level('w', { shares: 10, queues: 1, handSize: 1, queueLengthLimit: 10 })]);
  const l = d.levels.get('w')!;
  assert.equal(l.nominal, 40);
  assert.equal(l.maxSeats, 6, 'ceil(15% of 40)');
  const h = harness(d);
  h.send('w', 'f', 'big', 50);
  assert.equal(l.executing, 6, 'clamped to maxSeats');
  assert.equal(l.requests, 1);
  for (let i = 0; i < 34; i++) h.send('w', 'f', `s${i}`);
  assert.equal(l.executing, 40);
  h.send('w', 'f', 'wide', 5);
  h.send('w', 'f', 'small');
  assert.ok(!h.ran.includes('wide') && !h.ran.includes('small'));
  for (let i = 0; i < 4; i++) h.held.get(`s${i}`)!();
  assert.ok(!h.ran.includes('wide'), 'four free seats are not enough');
  assert.ok(!h.ran.includes('small'), 'and nothing behind the wide request is dispatched meanwhile');
  h.held.get('s4')!();
  assert.deepEqual(h.ran.slice(-1), ['wide']);
  assert.ok(!h.ran.includes('small'), 'the wide request took every free seat');
  h.held.get('big')!();
  assert.deepEqual(h.ran.slice(-1), ['small']);
  assert.equal(l.executing, 29 + 5 + 1);
  assert.equal(l.requests, 29 + 1 + 1);
});

test('an arrival from the queue with the least virtual time takes free seats a waiting wide request cannot use yet', () => {
  const d = new Dispatcher(40, 60_000, () => 0);
  d.configure([level('w', { shares: 10, queues: 16, handSize: 1, queueLengthLimit: 10 })]);
  const noisy = 'noisy',
    quiet = ['quiet-a', 'quiet-b', 'quiet-c'].find(
      (f) => dealHand(flowHash(f), 16, 1)[0] !== dealHand(flowHash(noisy), 16, 1)[0],
    )!;
  const h = harness(d);
  for (let i = 0; i < 6; i++) h.send('w', noisy, `n${i}`, 6);
  h.send('w', noisy, 'n6', 6);
  assert.ok(!h.ran.includes('n6'), 'four seats are free: the wide request waits');
  h.send('w', quiet, 'q1');
  assert.ok(h.ran.includes('q1'), "the quiet flow's request runs at once on a free seat");
  h.send('w', noisy, 'n7', 1);
  assert.ok(!h.ran.includes('n7'), 'a narrow request behind the wide one in its own queue still waits');
});

test('width: a wide request borrows the seats it lacks from several lenders, all or none, and gives them back', () => {
  const d = new Dispatcher(60, 60_000);
  d.configure([
    level('busy', { shares: 20, borrowingLimitPercent: 100, queues: 1, handSize: 1, queueLengthLimit: 10 }),
    level('a', { shares: 20, lendablePercent: 15, queues: 1, handSize: 1 }),
    level('b', { shares: 20, lendablePercent: 15, queues: 1, handSize: 1 }),
  ]);
  const busy = d.levels.get('busy')!,
    a = d.levels.get('a')!,
    b = d.levels.get('b')!;
  assert.deepEqual([busy.nominal, busy.maxSeats, a.lendable, b.lendable], [20, 3, 3, 3]);
  const h = harness(d);
  for (let i = 0; i < 19; i++) h.send('busy', 'f', `s${i}`);
  h.send('busy', 'f', 'wide', 3);
  assert.ok(h.ran.includes('wide'), 'one own seat and two lent ones');
  assert.deepEqual([a.lentOut, b.lentOut, busy.borrowed], [2, 0, 2]);
  h.send('busy', 'f', 'wide2', 3);
  assert.ok(h.ran.includes('wide2'), 'lent by both lenders');
  assert.deepEqual([a.lentOut, b.lentOut, busy.borrowed], [3, 2, 5]);
  h.send('busy', 'f', 'wide3', 3);
  assert.ok(!h.ran.includes('wide3'), 'one lendable seat is left: it waits rather than taking fewer seats');
  h.held.get('wide')!();
  assert.ok(h.ran.includes('wide3'), 'the returned seats go to it');
  assert.equal(busy.executing, 20 + 5);
  h.held.get('wide2')!();
  h.held.get('wide3')!();
  assert.deepEqual([a.lentOut, b.lentOut, busy.borrowed, busy.executing], [0, 0, 0, 19], 'every seat given back');
});

test('a write that fans out to watchers holds its seats after it is answered, for its additional latency', () => {
  const timers: [number, () => void][] = [];
  const d = new Dispatcher(
    40,
    60_000,
    () => 0,
    (ms, fn) => {
      timers.push([ms, fn]);
    },
  );
  d.configure([level('w', { shares: 10, queues: 1, handSize: 1, queueLengthLimit: 10 })]);
  const l = d.levels.get('w')!;
  let released: (() => void) | undefined;
  d.admit(
    'w',
    flowHash('f'),
    (release) => {
      released = release;
    },
    () => assert.fail('refused'),
    { initialSeats: 1, finalSeats: 3, additionalLatencyMs: 5 },
  );
  assert.equal(l.executing, 3, 'the larger of its initial and final seats while it runs');
  released!();
  assert.equal(l.executing, 3, 'still held once answered');
  assert.deepEqual(
    timers.map(([ms]) => ms),
    [5],
  );
  timers[0]![1]();
  assert.equal(l.executing, 0);
  assert.equal(l.requests, 0);
});

test('a queued request times out (time-out) or is cancelled by its client (cancelled)', async () => {
  const d = new Dispatcher(1, 30);
  d.configure([level('q', { queues: 1, handSize: 1, queueLengthLimit: 5 })]);
  const h = harness(d);
  h.send('q', 'f', '1');
  const cancel = h.send('q', 'f', '2');
  assert.equal(typeof cancel, 'function');
  cancel!();
  assert.deepEqual(h.refused, ['2:cancelled']);
  // the dispatcher's timers do not hold the process open: this interval does, until the answer
  const keepAlive = setInterval(() => {}, 1000);
  const timedOut = new Promise<string>((resolve) =>
    d.admit(
      'q',
      flowHash('f'),
      () => resolve('ran'),
      (reason) => resolve(reason),
    ),
  );
  assert.equal(await timedOut, 'time-out');
  clearInterval(keepAlive);
  assert.equal(d.levels.get('q')!.waiting, 0);
});

test('dealHand deals distinct queues, the same for the same flow', () => {
  for (const f of ['a', 'b', 'system:serviceaccount:x:y']) {
    const hand = dealHand(flowHash(f), 64, 6);
    assert.equal(new Set(hand).size, 6);
    assert.ok(hand.every((i) => i >= 0 && i < 64));
    assert.deepEqual(dealHand(flowHash(f), 64, 6), hand);
  }
});

test('dealHand deals the hands of a whole-deck Fisher–Yates shuffle (the queues a flow maps to are unchanged)', () => {
  const reference = (hash: number, deck: number, handSize: number): number[] => {
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
  };
  for (let f = 0; f < 2000; f++) {
    const hash = flowHash(`flow-${f}`);
    for (const [deck, handSize] of [
      [1, 1],
      [2, 2],
      [8, 8],
      [16, 4],
      [64, 6],
      [128, 8],
      [512, 16],
    ] as const)
      assert.deepEqual(
        dealHand(hash, deck, handSize),
        reference(hash, deck, handSize),
        `flow-${f} ${deck}/${handSize}`,
      );
  }
});
