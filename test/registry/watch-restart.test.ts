import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, request } from '../helpers/server.js';
import { openWatch } from '../helpers/watch.js';

test('after a restart, a watch from a version before it is 410 Expired even for a type with no stored objects', async () => {
  const s = await startServer();
  const c = await request(s.url, 'POST', '/api/v1/namespaces/default/secrets', { metadata: { name: 'gone' } });
  const before = c.json.metadata.resourceVersion;
  await request(s.url, 'DELETE', '/api/v1/namespaces/default/secrets/gone');
  await s.stop();
  const again = await startServer([], s.dataDir);
  try {
    const w = await openWatch(again.url, `/api/v1/namespaces/default/secrets?watch=1&resourceVersion=${before}`);
    await w.waitFor((evs) => evs.some((e) => e.type === 'ERROR'), 'ERROR event');
    const err = w.events.find((e) => e.type === 'ERROR')!;
    assert.equal(err.object.code, 410);
    assert.equal(err.object.reason, 'Expired');
    w.close();
  } finally {
    await again.stop();
    again.cleanup();
  }
});
