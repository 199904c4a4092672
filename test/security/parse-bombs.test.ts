/**
 * Issue 18 item 4, adversarial: parse-time bombs per content type. Each hostile body must be
 * answered (never 5xx) within a wall-clock budget, and while it is being decoded the server
 * keeps serving: GET /readyz on another connection answers within a small budget throughout.
 * Budgets are generous for a loaded machine; the attacks they catch took seconds to minutes
 * (quadratic YAML duplicate-key check on the front thread, per-repeat line scans, bignums).
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { encodeCbor } from '../../src/codec/cbor.js';
import { startServer, stopServers, type TestServer } from '../helpers/server.js';

/**
 * Budgets per bomb. The server's CPU time (process_cpu_seconds_total, every thread) is the sharp
 * one: linear decoding of the largest bomb here costs about a second of CPU, the quadratic YAML
 * check cost over 20 s for the same body, and CPU time hardly grows on a loaded machine where
 * wall-clock time does. The wall-clock budget catches hangs (the request timeout is 60 s), and
 * /readyz on another connection must stay prompt while the bomb is decoded (the front thread
 * decoded the YAML bomb itself and stalled every request for its whole duration).
 */
const CPU_BUDGET_S = 8;
const WALL_BUDGET_MS = 50_000;
const READY_BUDGET_MS = 5_000;

const SSR = '/apis/authentication.plat.io/v1/selfsubjectreviews';
const CMS = '/api/v1/namespaces/default/configmaps';
const YAML = 'application/yaml';
const CBOR = 'application/cbor';
const PROTOBUF = 'application/vnd.platform.protobuf';

let s: TestServer;
before(async () => {
  s = await startServer(['--feature-gates', 'CBORServingAndStorage=true']);
});
after(() => stopServers([s]));

interface Outcome {
  status: number;
  text: string;
  elapsed: number;
  cpu: number;
  readyMax: number;
}

async function cpuSeconds(): Promise<number> {
  const text = await (await fetch(`${s.url}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith('process_cpu_seconds_total '));
  return Number(line?.split(' ')[1]);
}

/**
 * Sends the bomb, and GET /readyz one after another on another connection until the bomb is
 * answered (bounded in count); reports the bomb's status, time and the server's CPU time, and
 * the slowest /readyz.
 */
async function bomb(path: string, body: string | Uint8Array<ArrayBuffer>, contentType: string): Promise<Outcome> {
  const cpu0 = await cpuSeconds();
  const started = Date.now();
  let done = false;
  const res = fetch(s.url + path, {
    method: 'POST',
    body,
    headers: { 'content-type': contentType, connection: 'close' },
  })
    .then(async (r) => ({ status: r.status, text: (await r.text()).slice(0, 300) }))
    .finally(() => {
      done = true;
    });
  let readyMax = 0;
  for (let i = 0; i < 500 && !done && Date.now() - started < WALL_BUDGET_MS * 2; i++) {
    const t = Date.now();
    const r = await fetch(`${s.url}/readyz`);
    await r.text();
    assert.equal(r.status, 200);
    readyMax = Math.max(readyMax, Date.now() - t);
  }
  const { status, text } = await res;
  const elapsed = Date.now() - started;
  return { status, text, elapsed, cpu: (await cpuSeconds()) - cpu0, readyMax };
}

function assertHeld(o: Outcome, what: string): void {
  assert.ok(o.status < 500, `${what}: ${o.status} ${o.text}`);
  assert.ok(o.cpu < CPU_BUDGET_S, `${what}: the server spent ${o.cpu.toFixed(1)} s of CPU on it`);
  assert.ok(o.elapsed < WALL_BUDGET_MS, `${what}: answered after ${o.elapsed} ms`);
  assert.ok(o.readyMax < READY_BUDGET_MS, `${what}: /readyz took ${o.readyMax} ms while the bomb was decoded`);
}

const yamlDoc = (kind: string, apiVersion: string, annotations: string): string =>
  `apiVersion: ${apiVersion}\nkind: ${kind}\nmetadata:\n  name: bomb\n  annotations: {${annotations}}\n`;

test('YAML: 40,000 flow-style keys to a review decoded by the front thread', async () => {
  const keys = Array.from({ length: 40_000 }, (_, i) => `k${i}: v`).join(', ');
  const o = await bomb(SSR, yamlDoc('SelfSubjectReview', 'authentication.plat.io/v1', keys), YAML);
  assertHeld(o, 'flow keys');
});

test('YAML: 40,000 repeats of one key, strict field validation (decoded in the actor)', async () => {
  const keys = Array.from({ length: 40_000 }, () => 'a: v').join(', ');
  const o = await bomb(`${CMS}?fieldValidation=Strict`, yamlDoc('ConfigMap', 'v1', keys), YAML);
  assertHeld(o, 'repeated keys');
  assert.equal(o.status, 400, o.text);
  assert.match(o.text, /already set in map/);
});

test('YAML: a billion laughs (aliases of aliases) is 400 "excessive aliasing"', async () => {
  let doc =
    'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: laughs\nx0: &x0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol","lol"]\n';
  for (let i = 1; i < 12; i++)
    doc += `x${i}: &x${i} [${Array(10)
      .fill(`*x${i - 1}`)
      .join(',')}]\n`;
  const o = await bomb(SSR, doc, YAML);
  assertHeld(o, 'aliases');
  assert.equal(o.status, 400, o.text);
  assert.match(o.text, /excessive aliasing/);
});

test('YAML: block nesting 1,400 deep and flow nesting 200,000 deep are 400', async () => {
  let block = 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: deep\ndata:\n';
  for (let i = 0; i < 1400; i++) block += ' '.repeat(i + 1) + 'a:\n';
  const b = await bomb(SSR, block, YAML);
  assertHeld(b, 'block nesting');
  assert.equal(b.status, 400, b.text);
  const flow = await bomb(SSR, 'kind: ConfigMap\ndata: ' + '['.repeat(200_000) + ']'.repeat(200_000), YAML);
  assertHeld(flow, 'flow nesting');
  assert.equal(flow.status, 400, flow.text);
});

test('JSON: 100,000 repeated keys one per line, strict (a per-repeat line scan was quadratic)', async () => {
  const body =
    '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"dups"},"data":{\n' +
    Array.from({ length: 100_000 }, () => '"a":"v"').join(',\n') +
    '}}';
  const o = await bomb(`${CMS}?fieldValidation=Strict`, body, 'application/json');
  assertHeld(o, 'json repeats');
  assert.equal(o.status, 400, o.text);
});

test('JSON: 20,000 distinct keys and 200,000-deep nesting', async () => {
  const keys =
    '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"keys"},"data":{' +
    Array.from({ length: 20_000 }, (_, i) => `"k${i}":"v"`).join(',') +
    '}}';
  assertHeld(await bomb(CMS, keys, 'application/json'), 'json keys');
  const deep = await bomb(
    SSR,
    '{"kind":"SelfSubjectReview","x":' + '['.repeat(200_000) + ']'.repeat(200_000) + '}',
    'application/json',
  );
  assertHeld(deep, 'json nesting');
  assert.equal(deep.status, 400, deep.text);
});

test('CBOR: nested and indefinite-length items, huge length heads, bignums are 400', async () => {
  const cat = (...parts: number[][]): Uint8Array<ArrayBuffer> => Uint8Array.from(parts.flat());
  const n = 200_000;
  const bodies: [string, Uint8Array<ArrayBuffer>][] = [
    ['nested arrays', cat(Array(n).fill(0x81), [0])],
    ['indefinite nesting', cat(Array(n).fill(0x9f), Array(n).fill(0xff))],
    ['huge array head', cat([0x9b, 0, 0, 0, 1, 0, 0, 0, 0])],
    ['huge string head', cat([0x7b, 0, 0, 0, 1, 0, 0, 0, 0, 0x61])],
    // a 64 KiB bignum: cbor-x built its BigInt a byte at a time (seconds)
    ['bignum', cat([0xa1, 0x61, 0x6b, 0xc2, 0x5a, 0, 1, 0, 0], Array(65536).fill(0xff))],
  ];
  for (const [what, body] of bodies) {
    const o = await bomb(CMS, body, CBOR);
    assertHeld(o, what);
    assert.equal(o.status, 400, `${what}: ${o.text}`);
  }
  // 100,000 repeats of one key in an indefinite-length map: decoded promptly
  const dups = cat(
    [0xbf, 0x64, ...Buffer.from('kind'), 0x69, ...Buffer.from('ConfigMap')],
    Array(100_000).fill([0x61, 0x61, 0x01]).flat(),
    [0xff],
  );
  assertHeld(await bomb(CMS, dups, CBOR), 'repeated keys');
  assertHeld(
    await bomb(
      CMS,
      new Uint8Array(
        encodeCbor({
          apiVersion: 'v1',
          kind: 'ConfigMap',
          metadata: { name: 'wide' },
          data: Object.fromEntries(Array.from({ length: 10_000 }, (_, i) => [`k${i}`, 'v'])),
        }),
      ),
      CBOR,
    ),
    'wide map',
  );
});

test('Protobuf: huge length prefixes and deeply nested groups are 400', async () => {
  const magic = [0x6b, 0x38, 0x73, 0x00];
  const bodies: [string, Uint8Array<ArrayBuffer>][] = [
    ['huge length', Uint8Array.from([...magic, 0x12, 0xff, 0xff, 0xff, 0xff, 0x0f, 1, 2])],
    ['nested groups', Uint8Array.from([...magic, ...Array(200_000).fill(0x1b), ...Array(200_000).fill(0x1c)])],
  ];
  for (const [what, body] of bodies) {
    const o = await bomb(CMS, body, PROTOBUF);
    assertHeld(o, what);
    assert.equal(o.status, 400, `${what}: ${o.text}`);
  }
});
