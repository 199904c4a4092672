import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, existsSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ChangeEvent } from '../../src/actors/protocol.js';
import type { Watcher } from '../../src/http/watch-hub.js';
import { until } from '../helpers/poll.js';
import { watcher as hubWatcher } from '../helpers/hub-watchers.js';

// the trace is chosen when the modules load (each test file runs in a process of its own)
const dir = mkdtempSync(join(tmpdir(), 'watch-trace-'));
const file = join(dir, 'trace.jsonl');
process.env.PLAT_WATCH_TRACE = file;
const { WatchHub } = await import('../../src/http/watch-hub.js');
const { TRACE_FIELDS, WatchTrace, gcFile } = await import('../../src/http/watch-trace.js');
const { monoUs } = await import('../../src/metrics/process-metrics.js');

function event(rv: number, sentUs: number, publishedUs: number): ChangeEvent {
  const json = JSON.stringify({
    kind: 'ConfigMap',
    apiVersion: 'v1',
    metadata: { name: 'a', namespace: 'ns', resourceVersion: String(rv), annotations: { 'bench-ts': String(sentUs) } },
  });
  return {
    typeKey: '/configmaps',
    type: 'MODIFIED',
    rv,
    namespace: 'ns',
    name: 'a',
    json,
    labels: undefined,
    fields: {},
    apiVersion: 'v1',
    uid: 'u',
    publishedUs,
  };
}

/** The trace lines of a file once it has `n`, as objects keyed by TRACE_FIELDS. */
async function rows(path: string, n: number): Promise<Record<string, number>[]> {
  const lines = await until(async () => {
    const l = existsSync(path) ? readFileSync(path, 'utf8').split('\n').filter(Boolean) : [];
    return l.length >= n ? l : undefined;
  }, `${n} trace lines`);
  return lines.map((l) => Object.fromEntries(TRACE_FIELDS.map((f, i) => [f, (JSON.parse(l) as number[])[i]!])));
}

/** A watcher whose socket reports `buffered` bytes after each write (0: drained). */
function watcher(buffered: number): Watcher {
  return hubWatcher({ namespace: 'ns', sink: { write: () => buffered, close() {}, abort() {} } }).w;
}

describe('watch stage trace (PLAT_WATCH_TRACE, bench only)', () => {
  it('records per event the send, publish, receipt and its flush, in order, with the flush shape', async () => {
    try {
      const hub = new WatchHub(1 << 20);
      hub.add(watcher(0));
      hub.add(watcher(100));
      const sent = monoUs() - 5000;
      const published = sent + 1000;
      hub.dispatch([event(7, sent, published)]);
      hub.flush();
      const [row] = await rows(file, 1);
      assert.ok(row);
      assert.equal(row.rv, 7);
      assert.equal(row.sentUs, sent);
      assert.equal(row.publishedUs, published);
      assert.ok(row.receivedUs! > published, 'received after published');
      assert.ok(row.flushUs! >= row.receivedUs!, 'flush after receipt');
      assert.ok(row.firstUs! >= row.flushUs! && row.lastUs! >= row.firstUs!, 'first and last write in order');
      assert.equal(row.sends, 2);
      assert.equal(row.backlogged, 1, 'the send into a backlogged socket is counted');
      assert.equal(row.slices, 1, 'an unlimited flush is one slice');
      assert.ok(row.busyUs! >= 0 && row.busyUs! <= row.lastUs! - row.flushUs! + 1000, 'busy within the wall');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("records a sliced flush's slices: one that stopped at once and the scheduled slice that finished it", async () => {
    const own = mkdtempSync(join(tmpdir(), 'watch-trace-'));
    const path = join(own, 'trace.jsonl');
    try {
      const hub = new WatchHub(1 << 20);
      (hub as unknown as { trace: InstanceType<typeof WatchTrace> }).trace = new WatchTrace(path);
      hub.add(watcher(0));
      hub.dispatch([event(9, monoUs(), monoUs())]);
      // the first slice's budget is spent before its first send; the hub goes on with a slice of its own
      hub.flush({ more: () => false });
      const [row] = await rows(path, 1);
      assert.equal(row!.rv, 9);
      assert.equal(row!.slices, 2);
      assert.equal(row!.sends, 1);
    } finally {
      rmSync(own, { recursive: true, force: true });
    }
  });

  it("writes the front thread's garbage collections beside the trace (gcFile)", async () => {
    const own = mkdtempSync(join(tmpdir(), 'watch-trace-'));
    const path = join(own, 'trace.jsonl');
    try {
      const before = monoUs();
      new WatchTrace(path);
      // enough short-lived garbage for several young-generation collections
      let keep: unknown[] = [];
      for (let i = 0; i < 2_000_000; i++) {
        keep.push({ i, s: `x${i}` });
        if (keep.length > 1000) keep = [];
      }
      const lines = await until(async () => {
        const l = existsSync(gcFile(path)) ? readFileSync(gcFile(path), 'utf8').split('\n').filter(Boolean) : [];
        return l.length ? l : undefined;
      }, 'GC lines');
      const [at, kind, us] = JSON.parse(lines[0]!) as number[];
      assert.ok(at! >= before - 1000 && at! <= monoUs(), 'monotonic µs, as the trace lines');
      assert.ok([1, 2, 4, 8, 16].includes(kind!), `a GC kind (${kind})`);
      assert.ok(us! >= 0);
    } finally {
      rmSync(own, { recursive: true, force: true });
    }
  });

  it('an event received during a flush: first write at the next send, last write with the next flush', async () => {
    const own = mkdtempSync(join(tmpdir(), 'watch-trace-'));
    const path = join(own, 'trace.jsonl');
    try {
      const t = new WatchTrace(path);
      t.received([event(1, 0, 0)]);
      t.flushBegins();
      t.sent(0);
      t.received([event(2, 0, 0)]);
      // a member this flush had yet to reach: it gets rv 2 with rv 1
      t.sent(0);
      t.flushEnds();
      // the next flush begins on a later microsecond of the clock
      const at = monoUs();
      while (monoUs() === at);
      t.flushBegins();
      t.sent(0);
      t.flushEnds();
      const [first, second] = await rows(path, 2);
      assert.equal(first!.rv, 1);
      assert.equal(second!.rv, 2);
      assert.ok(second!.firstUs! < second!.flushUs!, 'first written by the flush under way at its receipt');
      assert.ok(second!.lastUs! >= second!.flushUs!, 'last written by the next flush');
      assert.ok(first!.firstUs! >= first!.flushUs!);
    } finally {
      rmSync(own, { recursive: true, force: true });
    }
  });
});
