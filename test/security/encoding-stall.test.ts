/**
 * Issue 26 item 2, adversarial: one YAML LIST must not stall a shard. 100 ConfigMaps whose
 * managedFields[0].fieldsV1 nests 994 levels (inside the 1,000 limit) are listed as YAML while
 * another client writes ConfigMaps (the same type, so the same shard actor). YAML was encoded on
 * the actor, in time growing with the square of the depth: every write of the shard waited for
 * it. Now the actor answers in JSON and an encoding thread encodes YAML in slices, so the
 * writer's p99 stays under 100 ms (see WRITER_P99_MS for a loaded machine); a LIST with a short timeout is cut off with a 504 at its deadline and
 * its encoding stops, as it does when the client leaves (the encoding counters show it); /readyz
 * stays ok.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { request, startServer, stopServers, type TestServer } from '../helpers/server.js';
import { until } from '../helpers/poll.js';

const NS = 'enc-stall';
const CMS = `/api/v1/namespaces/${NS}/configmaps`;
/** the writer's ConfigMaps: another namespace, the same type, so the same shard actor */
const WRITES = '/api/v1/namespaces/enc-writer/configmaps';
const ITEMS = 100;
const DEPTH = 994;
/** data keys per ConfigMap: enough YAML work that the LIST takes a while on a quiet machine */
const KEYS = 200;
/**
 * The acceptance line for the writer's p99 during the LIST. On a machine so loaded that writes
 * alone come near it, the line is LOADED_FACTOR times the writer's own p99 measured just before
 * (on 2 cores at load 20, alone 70-220 ms, during the LIST 250-550 ms; the stall this test
 * catches held every write for the LIST's whole encoding: seconds to a minute).
 */
const WRITER_P99_MS = 100;
const LOADED_FACTOR = 4;

let s: TestServer;

/** managedFields-shaped nesting: `{"f:a993":{"f:a992":...{}}}` */
function fieldsV1(depth: number): unknown {
  let v: Record<string, unknown> = {};
  for (let i = 0; i < depth; i++) v = { [`f:a${i}`]: v };
  return v;
}

function deepConfigMap(i: number): unknown {
  const data: Record<string, string> = {};
  for (let k = 0; k < KEYS; k++) data[`key-${k}`] = `value ${k} of map ${i}`;
  const managedFields = [
    {
      manager: 'deep',
      operation: 'Update',
      apiVersion: 'v1',
      time: '2026-01-01T00:00:00Z',
      fieldsType: 'FieldsV1',
      fieldsV1: fieldsV1(DEPTH),
    },
  ];
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `deep-${i}`, managedFields }, data };
}

before(async () => {
  s = await startServer();
  for (const name of [NS, 'enc-writer'])
    assert.equal((await request(s.url, 'POST', '/api/v1/namespaces', { metadata: { name } })).status, 201);
  for (let i = 0; i < ITEMS; i += 4) {
    const created = await Promise.all([0, 1, 2, 3].map((j) => request(s.url, 'POST', CMS, deepConfigMap(i + j))));
    for (const r of created) assert.equal(r.status, 201, r.text.slice(0, 300));
  }
  const one = await request(s.url, 'GET', `${CMS}/deep-0`);
  assert.equal(
    JSON.stringify(one.json.metadata.managedFields[0].fieldsV1).split('{').length - 1,
    DEPTH + 1,
    'the deep managedFields are stored',
  );
});
after(() => stopServers([s]));

async function metric(name: string, labels: string): Promise<number> {
  const text = await (await fetch(`${s.url}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(`${name}{${labels}} `));
  return Number(line?.split(' ')[1] ?? 0);
}

interface Listed {
  status: number;
  text: string;
  ms: number;
}

function listYaml(query = ''): { done: () => boolean; result: Promise<Listed> } {
  let finished = false;
  const t0 = performance.now();
  const result = fetch(`${s.url}${CMS}${query}`, { headers: { accept: 'application/yaml' } })
    .then(async (r) => ({ status: r.status, text: await r.text(), ms: performance.now() - t0 }))
    .finally(() => {
      finished = true;
    });
  return { done: () => finished, result };
}

/** Creates small ConfigMaps one after another while `busy()`, bounded in count and time; returns each latency (ms). */
async function writeWhile(busy: () => boolean, prefix: string): Promise<number[]> {
  const latencies: number[] = [];
  const started = Date.now();
  for (let i = 0; i < 1000 && busy() && Date.now() - started < 60_000; i++) {
    const t = performance.now();
    const r = await request(s.url, 'POST', WRITES, { metadata: { name: `${prefix}-${i}` }, data: { k: 'v' } });
    latencies.push(performance.now() - t);
    assert.equal(r.status, 201, r.text);
  }
  return latencies;
}

function p99(xs: number[]): number {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil(sorted.length * 0.99) - 1)]!;
}

let fullMs = 0;
let writerLine = WRITER_P99_MS;
let fullValues = 0;

test('writes to the shard stay prompt while a YAML LIST of 994-level objects is encoded', async () => {
  let n = 0;
  const alone = p99(await writeWhile(() => n++ < 50, 'alone'));
  const line = Math.max(WRITER_P99_MS, LOADED_FACTOR * alone);
  const values0 = await metric('platform_response_encoded_values_total', 'format="yaml"');
  const list = listYaml();
  const latencies = await writeWhile(() => !list.done(), 'during');
  const listed = await list.result;
  assert.equal(listed.status, 200, listed.text.slice(0, 300));
  assert.match(listed.text, /^kind: ConfigMapList\napiVersion: v1\nmetadata:\n/);
  // past the flow depth the nesting is written as JSON: the output stays linear in the input
  assert.match(listed.text, /\{"f:a\d+": \{"f:a\d+": /);
  assert.equal(listed.text.match(/^ {2}- kind: ConfigMap$/gm)?.length, ITEMS);
  fullMs = listed.ms;
  fullValues = (await metric('platform_response_encoded_values_total', 'format="yaml"')) - values0;
  assert.ok(latencies.length >= 3, `only ${latencies.length} writes during a ${Math.round(listed.ms)} ms LIST`);
  const worst = p99(latencies);
  const seen = `writer p99 ${worst.toFixed(1)} ms over ${latencies.length} writes during a ${Math.round(listed.ms)} ms YAML LIST (alone: ${alone.toFixed(1)} ms)`;
  assert.ok(worst < line, seen);
  writerLine = line;
  console.log(seen);
  assert.equal((await request(s.url, 'GET', '/readyz')).text, 'ok');
});

test('a YAML LIST past its timeout is a 504 at the deadline and its encoding stops', async () => {
  assert.ok(fullMs > 0 && fullValues > 0, 'the full LIST ran first');
  // first a third of the full LIST's time (at most 2 s): the actor's part (JSON of cached bytes)
  // is a small share of it. A LIST that completes before a deadline measured on a slower (colder) run is a 200: halve the
  // deadline and list again, at most 5 times; the LIST that does not complete is what is checked.
  let timeoutMs = Math.max(100, Math.min(2000, Math.round(fullMs / 3)));
  let timeouts0 = 0,
    values0 = 0,
    latencies: number[] = [];
  let listed: Listed = { status: 0, text: '', ms: 0 };
  for (let attempt = 0; attempt < 5; attempt++) {
    timeouts0 = await metric('platform_response_encodings_total', 'format="yaml",outcome="timeout"');
    values0 = await metric('platform_response_encoded_values_total', 'format="yaml"');
    const list = listYaml(`?timeout=${timeoutMs}ms`);
    latencies = await writeWhile(() => !list.done(), `cut${attempt}`);
    listed = await list.result;
    if (listed.status !== 200 || timeoutMs <= 25) break;
    timeoutMs = Math.round(timeoutMs / 2);
  }
  assert.equal(listed.status, 504, listed.text.slice(0, 300));
  assert.match(listed.text, /reason: Timeout/);
  assert.match(listed.text, /request did not complete within requested timeout - context deadline exceeded/);
  assert.ok(
    listed.ms < timeoutMs + 1000 + fullMs / 4,
    `504 after ${Math.round(listed.ms)} ms for a ${timeoutMs} ms timeout`,
  );
  if (latencies.length) assert.ok(p99(latencies) < writerLine, `writer p99 ${p99(latencies).toFixed(1)} ms`);
  // the encoding thread stopped the job at the deadline (it reports a job only once its encoder
  // has stopped), part way through the list
  await until(
    async () => ((await metric('platform_response_encodings_in_progress', 'format="yaml"')) === 0 ? true : undefined),
    'the encoding to stop',
  );
  assert.equal(await metric('platform_response_encodings_total', 'format="yaml",outcome="timeout"'), timeouts0 + 1);
  const stoppedAt = (await metric('platform_response_encoded_values_total', 'format="yaml"')) - values0;
  assert.ok(stoppedAt < fullValues, `encoded ${stoppedAt} of ${fullValues} values`);
  console.log(
    `cut off after ${Math.round(listed.ms)} ms (timeout ${timeoutMs} ms), ${stoppedAt} of ${fullValues} values encoded`,
  );
  assert.equal((await request(s.url, 'GET', '/readyz')).text, 'ok');
});

test('a client that leaves during a YAML LIST stops its encoding', async () => {
  const cancelled0 = await metric('platform_response_encodings_total', 'format="yaml",outcome="cancelled"');
  const leave = new AbortController();
  const listed = fetch(`${s.url}${CMS}`, { headers: { accept: 'application/yaml' }, signal: leave.signal })
    .then((r) => r.text())
    .catch((e: Error) => e.name);
  await until(
    async () => ((await metric('platform_response_encodings_in_progress', 'format="yaml"')) === 1 ? true : undefined),
    'the encoding to start',
  );
  leave.abort();
  assert.equal(await listed, 'AbortError');
  await until(
    async () => ((await metric('platform_response_encodings_in_progress', 'format="yaml"')) === 0 ? true : undefined),
    'the encoding to stop',
  );
  assert.equal(await metric('platform_response_encodings_total', 'format="yaml",outcome="cancelled"'), cancelled0 + 1);
  assert.equal((await request(s.url, 'GET', '/readyz')).text, 'ok');
});
