import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, existsSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ChangeEvent } from '../../src/actors/protocol.js';
import type { Watcher } from '../../src/http/watch-hub.js';
import { until } from '../helpers/poll.js';

// the trace is chosen when the modules load (each test file runs in a process of its own)
const dir = mkdtempSync(join(tmpdir(), 'watch-trace-'));
const file = join(dir, 'trace.jsonl');
process.env.PLAT_WATCH_TRACE = file;
const { WatchHub } = await import('../../src/http/watch-hub.js');
const { TRACE_FIELDS } = await import('../../src/http/watch-trace.js');
const { monoUs } = await import('../../src/actors/stream-events.js');

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

function watcher(buffered: number): Watcher {
  return {
    typeKey: '/configmaps',
    namespace: 'ns',
    matcher: undefined,
    fromRV: 0,
    startRV: 0,
    bookmarks: false,
    kind: 'ConfigMap',
    apiVersion: 'v1',
    closed: false,
    enc: { format: 'json', pretty: false },
    headersSent: false,
    sink: { write: () => buffered, close() {}, abort() {} },
  };
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
      const line = await until(
        async () => (existsSync(file) ? readFileSync(file, 'utf8').split('\n')[0] || undefined : undefined),
        'the trace line',
      );
      const row = Object.fromEntries(TRACE_FIELDS.map((f, i) => [f, (JSON.parse(line) as number[])[i]]));
      assert.equal(row.rv, 7);
      assert.equal(row.sentUs, sent);
      assert.equal(row.publishedUs, published);
      assert.ok(row.receivedUs! > published, 'received after published');
      assert.ok(row.flushUs! >= row.receivedUs!, 'flush after receipt');
      assert.ok(row.firstUs! >= row.flushUs! && row.lastUs! >= row.firstUs!, 'first and last write in order');
      assert.equal(row.sends, 2);
      assert.equal(row.backlogged, 1, 'the send into a backlogged socket is counted');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
