/**
 * Slow TLS clients (issue 18, item 12) against the TLS front of the secure port, with
 * `--read-header-timeout 1s` standing in for upstream's 32 s ReadHeaderTimeout (which also
 * bounds Go's TLS handshake): a connection that never sends a ClientHello is closed, a begun
 * request head that never completes is closed, and once the server is done with a connection
 * it keeps no half-closed socket of a client that never closes its side (the client's further
 * bytes are answered with a reset).
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { Socket, connect as tcpConnect } from 'node:net';
import { connect as tlsConnect, type TLSSocket } from 'node:tls';
import { startAuthServer, type AuthServer } from '../auth/helpers.js';

let s: AuthServer;
let ca: Buffer;

before(async () => {
  s = await startAuthServer(['--read-header-timeout', '1s']);
  ca = readFileSync(`${s.dataDir}/pki/ca.crt`);
});
after(async () => {
  await s?.stop();
  s?.cleanup();
});

/** Resolves with the ms until the event, or rejects after limitMs. */
function within(emitter: Socket, events: string[], limitMs: number, what: string): Promise<number> {
  const t0 = Date.now();
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${what}: nothing within ${limitMs} ms`)), limitMs);
    for (const e of events)
      emitter.once(e, () => {
        clearTimeout(timer);
        resolve(Date.now() - t0);
      });
  });
}

/** A TLS client that does not end its side when the server ends (a client that never closes). */
async function halfOpenClient(): Promise<TLSSocket> {
  const raw = new Socket({ allowHalfOpen: true });
  raw.connect(s.securePort, '127.0.0.1');
  const t = tlsConnect({ socket: raw, ca, servername: 'localhost' });
  t.on('error', () => {});
  await new Promise<void>((resolve, reject) => {
    t.once('secureConnect', resolve);
    t.once('error', reject);
  });
  return t;
}

/** After the server ended: further bytes from the client are refused (reset), not read by a lingering socket. */
async function assertNoLingeringSocket(t: TLSSocket): Promise<void> {
  const gone = within(t, ['error', 'close'], 3_000, 'the server socket is gone');
  // bounded: a few writes, the first ones may be buffered before the reset comes back
  for (let i = 0; i < 20 && !t.destroyed; i++) {
    t.write('X-More: 1\r\n');
    await new Promise((r) => setTimeout(r, 100));
  }
  await gone;
  t.destroy();
}

test('a connection that never sends a ClientHello is closed after the read-header timeout', async () => {
  const c = tcpConnect(s.securePort, '127.0.0.1');
  c.on('error', () => {});
  await new Promise<void>((resolve) => c.once('connect', () => resolve()));
  const ms = await within(c, ['close'], 5_000, 'closed without a handshake');
  assert.ok(ms >= 700, `not before the timeout (${ms} ms)`);
  c.destroy();
});

test('a request head that never completes is closed, and the server keeps no half-closed socket', async () => {
  const t = await halfOpenClient();
  t.write('GET /version HTTP/1.1\r\nHost: localhost\r\n');
  const ms = await within(t, ['end', 'close'], 5_000, 'the server gives up on the head');
  assert.ok(ms >= 700, `not before the timeout (${ms} ms)`);
  await assertNoLingeringSocket(t);
});

test('after answering a Connection: close request the server closes its socket, whatever the client does', async () => {
  const t = await halfOpenClient();
  let text = '';
  t.on('data', (d) => {
    text += d;
  });
  t.write('GET /version HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n');
  await within(t, ['end', 'close'], 5_000, 'the response ends');
  assert.match(text, /^HTTP\/1\.1 (200|401|403) /, text.slice(0, 80));
  await assertNoLingeringSocket(t);
});

test('a client completing its request in time is served', async () => {
  const t = await halfOpenClient();
  let text = '';
  t.on('data', (d) => {
    text += d;
  });
  t.write('GET /version HTTP/1.1\r\nHost: localhost\r\n');
  await new Promise((r) => setTimeout(r, 300));
  t.write('Connection: close\r\n\r\n');
  await within(t, ['end', 'close'], 5_000, 'the response ends');
  assert.match(text, /^HTTP\/1\.1 200 /, text.slice(0, 80));
  t.destroy();
});
