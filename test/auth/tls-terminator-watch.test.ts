/**
 * Watch framing through the node:tls front (`--client-ca-file`; issue 19 item 7): the front pipes
 * uWS's bytes, so a strict chunk reader over TLS gets the headers of a watch with no initial
 * events at once, no JSON byte before the first event (only the whitespace filler the pinned uWS
 * build needs, see test/handlers/watch-filler-uws.test.ts), and each event complete on the wire
 * before the next write. test/handlers/watch-framing.test.ts checks the same on the plain port.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { connect } from 'node:tls';
import { Pki, request, startAuthServer, type AuthServer, type TlsClient } from './helpers.js';
import { StrictChunkReader } from '../helpers/chunk-reader.js';
import { until } from '../helpers/poll.js';

const CMS = '/api/v1/namespaces/default/configmaps';
let pki: Pki;
let s: AuthServer;
let tls: TlsClient;

before(async () => {
  pki = new Pki()
    .ca('client-ca')
    .ca('serving-ca')
    .server('serving-ca', 'apiserver')
    .client('client-ca', 'carol', '/O=system:masters/CN=carol');
  s = await startAuthServer([
    '--client-ca-file',
    pki.path('client-ca.crt'),
    '--tls-cert-file',
    pki.path('apiserver.crt'),
    '--tls-private-key-file',
    pki.path('apiserver.key'),
  ]);
  tls = { ca: pki.read('serving-ca.crt'), cert: pki.read('carol.crt'), key: pki.read('carol.key') };
});
after(async () => {
  await s?.stop();
  s?.cleanup();
  pki?.cleanup();
});

test('a watch through the TLS front: headers at once, no JSON before the first event, each event complete before the next write', async () => {
  const rv = (await request(s.secureUrl, tls, 'GET', CMS)).json.metadata.resourceVersion;
  const sock = connect({ host: '127.0.0.1', port: s.securePort, ca: tls.ca, cert: tls.cert, key: tls.key });
  const reader = new StrictChunkReader(sock, `${CMS}?watch=1&resourceVersion=${rv}`, 'secureConnect');
  try {
    await until(async () => reader.head, 'the response headers of a watch with no initial events', 5_000);
    assert.match(reader.head!, /^HTTP\/1\.1 200 OK\r\n/);
    assert.match(reader.head!, /\r\ntransfer-encoding: chunked/i);
    assert.ok(
      reader.chunks.every((c) => c.trim() === ''),
      `body before the first event: ${JSON.stringify(reader.chunks)}`,
    );
    for (const name of ['one', 'two']) {
      const r = await request(s.secureUrl, tls, 'POST', CMS, { metadata: { name } });
      assert.equal(r.status, 201, r.text);
      // the next write happens only once this event has arrived complete
      await until(
        async () => (reader.events().some((e) => e.object.metadata.name === name) ? true : undefined),
        `the ADDED event of ${name} before the next write`,
        5_000,
      );
    }
    assert.equal((await request(s.secureUrl, tls, 'DELETE', `${CMS}/one`)).status, 200);
    await until(
      async () => (reader.events().some((e) => e.type === 'DELETED') ? true : undefined),
      'the DELETED event in a quiet period',
      5_000,
    );
    assert.deepEqual(
      reader.events().map((e) => `${e.type} ${e.object.metadata.name}`),
      ['ADDED one', 'ADDED two', 'DELETED one'],
    );
    for (const c of reader.chunks) if (c.trim()) assert.ok(c.endsWith('\n'), JSON.stringify(c.slice(-20)));
  } finally {
    sock.destroy();
  }
});
