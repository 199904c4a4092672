/**
 * A dead shard actor is a real event (issue 18 item 5): the requests its batch held fail with a
 * 500 Status, /readyz reports the shard until its replacement has loaded the shard from its
 * store, requests queued meanwhile are served (not failed), and other shards serve throughout.
 * The death is injected (hidden flag --test-actor-faults, test-only): a GET of `plat-test-actor-crash`
 * ends the actor's thread, and `<dir>/hold-init` holds the restart so it can be watched.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startServer, request, type TestServer } from '../helpers/server.js';
import { until } from '../helpers/poll.js';
import { shardOf, typeKeyOf } from '../../src/actors/routing.js';

let s: TestServer;
let faults: string;
const CM = '/api/v1/namespaces/default/configmaps';

before(async () => {
  faults = mkdtempSync(join(tmpdir(), 'plat-faults-'));
  s = await startServer(['--shards', '2', '--test-actor-faults', faults]);
});
after(async () => {
  await s?.stop();
  s?.cleanup();
  rmSync(faults, { recursive: true, force: true });
});

const readyz = () => request(s.url, 'GET', '/readyz?verbose');

test('a killed actor fails only its batch, is reported by /readyz, restarts from its store and serves the queue', async () => {
  // the two kinds the test uses live on different shards
  assert.notEqual(shardOf(typeKeyOf('', 'configmaps'), 2), shardOf(typeKeyOf('', 'namespaces'), 2));
  assert.equal((await request(s.url, 'POST', CM, { metadata: { name: 'before' }, data: { k: 'v' } })).status, 201);
  assert.equal((await readyz()).status, 200);

  writeFileSync(join(faults, 'hold-init'), '');
  const crash = await request(s.url, 'GET', `${CM}/plat-test-actor-crash`);
  assert.equal(crash.status, 500, crash.text);
  assert.equal(crash.json.kind, 'Status');
  assert.equal(crash.json.reason, 'InternalError');
  assert.match(
    crash.json.message,
    /^Internal error occurred: shard actor [0-9]+ stopped \(.*\); it is being restarted$/,
  );

  const down = await readyz();
  assert.equal(down.status, 500);
  assert.match(down.text, /^\[-\]shard-actors failed: reason withheld$/m);
  assert.match(down.text, /readyz check failed/);
  assert.equal((await request(s.url, 'GET', '/readyz/shard-actors')).status, 500);
  // another shard serves throughout
  assert.equal((await request(s.url, 'GET', '/api/v1/namespaces/default')).status, 200);

  // queued behind the restart: neither failed nor lost
  let settled = false;
  const during = request(s.url, 'POST', CM, { metadata: { name: 'during' }, data: { k: 'v' } }).finally(() => {
    settled = true;
  });
  const read = request(s.url, 'GET', `${CM}/before?resourceVersion=0`);
  assert.equal((await readyz()).status, 500, 'still restarting while held');
  assert.equal(settled, false, 'the queued write waits for the restart');

  rmSync(join(faults, 'hold-init'));
  // a new worker thread loads every module and the shard: seconds on a loaded machine
  await until(async () => ((await readyz()).status === 200 ? true : undefined), '/readyz ok again', 60_000);
  assert.equal((await during).status, 201);
  const old = await read;
  assert.equal(old.status, 200, old.text);
  assert.equal(old.json.data.k, 'v', 'loaded from the store');
  assert.equal((await request(s.url, 'GET', `${CM}/during`)).status, 200);
  const list = await request(s.url, 'GET', CM);
  assert.deepEqual(list.json.items.map((o: { metadata: { name: string } }) => o.metadata.name).sort(), [
    'before',
    'during',
  ]);
});
