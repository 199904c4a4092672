/**
 * The pieces of the TLS front's port-forward tunnel (src/auth/portforward-tunnel.ts, upstream's
 * TunnelingHandler) and its WebSocket framing (src/auth/ws-framing.ts); kubectl v1.32 runs the
 * whole path in test/e2e/kubectl-node-agent.test.ts against an agent that only speaks SPDY.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { spdyTunnelHead, tunnel, tunnelAccept, tunneledProtocols } from '../../src/auth/portforward-tunnel.js';
import { WsReader, wsHeader } from '../../src/auth/ws-framing.js';

const CLIENT =
  'GET /api/v1/namespaces/ns/pods/p/portforward HTTP/1.1\r\nHost: x\r\nUser-Agent: kubectl/v1.32.0\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n' +
  'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Protocol: SPDY/3.1+portforward.k8s.io, portforward.k8s.io\r\n';

test('only a WebSocket port-forward offering SPDY/3.1+…k8s.io is tunneled; the prefix is removed', () => {
  assert.deepEqual(tunneledProtocols(CLIENT, '/portForward/ns/p?port=80'), ['portforward.k8s.io']);
  assert.deepEqual(tunneledProtocols(CLIENT, '/exec/ns/p/c?command=ls'), []);
  assert.deepEqual(
    tunneledProtocols(CLIENT.replace('Upgrade: websocket', 'Upgrade: SPDY/3.1'), '/portForward/ns/p'),
    [],
  );
  assert.deepEqual(tunneledProtocols(CLIENT.replace('SPDY/3.1+portforward.k8s.io, ', ''), '/portForward/ns/p'), []);
});

test("the agent is asked for a SPDY upgrade: POST, the tunneled protocols, no WebSocket headers, the client's others kept", () => {
  const agentHead = Buffer.from(
    CLIENT.replace('GET /api/v1/namespaces/ns/pods/p/portforward', 'GET /portForward/ns/p?port=80') + '\r\n',
    'latin1',
  );
  assert.equal(
    spdyTunnelHead(agentHead, ['portforward.k8s.io']).toString('latin1'),
    'POST /portForward/ns/p?port=80 HTTP/1.1\r\nHost: x\r\nUser-Agent: kubectl/v1.32.0\r\nConnection: Upgrade\r\nUpgrade: SPDY/3.1\r\n' +
      'X-Stream-Protocol-Version: portforward.k8s.io\r\nContent-Length: 0\r\n\r\n',
  );
});

test("the client's 101 carries the agent's chosen protocol re-prefixed; a 101 that is not a SPDY upgrade is refused", () => {
  const spdy =
    'HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: SPDY/3.1\r\nX-Stream-Protocol-Version: portforward.k8s.io';
  assert.equal(
    tunnelAccept(CLIENT, spdy),
    'HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n' +
      'Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\nSec-WebSocket-Protocol: SPDY/3.1+portforward.k8s.io\r\n\r\n',
  );
  assert.doesNotMatch(tunnelAccept(CLIENT, spdy.replace(/\r\nX-Stream[^\r]*/, ''))!, /Sec-WebSocket-Protocol/);
  assert.equal(
    tunnelAccept(CLIENT, 'HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: websocket'),
    undefined,
  );
});

/** A masked client frame. */
function masked(payload: Buffer, opcode = 2, fin = true): Buffer {
  const key = Buffer.from([1, 2, 3, 4]);
  const body = Buffer.from(payload.map((b, i) => b ^ key[i & 3]!));
  const n = payload.length;
  const len = n < 126 ? Buffer.from([0x80 | n]) : Buffer.from([0x80 | 126, n >> 8, n & 255]);
  return Buffer.concat([Buffer.from([(fin ? 0x80 : 0) | opcode]), len, key, body]);
}

test("the tunnel: agent bytes become binary messages, the client's message payloads reach the agent, close ends both", async () => {
  const client = new PassThrough(),
    agent = new PassThrough();
  const toClient: Buffer[] = [];
  const toAgent: Buffer[] = [];
  client.on('data', (c: Buffer) => toClient.push(c));
  agent.write = ((b: Buffer) => {
    toAgent.push(Buffer.from(b));
    return true;
  }) as typeof agent.write;
  const fromClient = tunnel(client, agent, Buffer.from('early'));
  agent.emit('data', Buffer.alloc(70_000, 7));
  const long = Buffer.alloc(300, 9);
  // a fragmented message with a ping between its fragments, then the client's close
  fromClient.write(
    Buffer.concat([
      masked(long.subarray(0, 100), 2, false),
      masked(Buffer.from('ping'), 9),
      masked(long.subarray(100), 0),
    ]),
  );
  fromClient.write(masked(Buffer.from([3, 0xe8]), 8));
  await new Promise((r) => setImmediate(r));
  const got: [number, number][] = [];
  new WsReader({ message: (p, op) => got.push([op, p.length]), ping: () => {}, close: () => got.push([8, 0]) }).feed(
    Buffer.concat(toClient),
  );
  assert.deepEqual(
    got,
    [
      [2, 5],
      [2, 70_000],
      [8, 0],
    ],
    'one binary message per agent read (a 64-bit length for 70,000 bytes), the pong skipped, then the close',
  );
  assert.deepEqual(Buffer.concat(toClient).subarray(0, 7), Buffer.concat([wsHeader(5), Buffer.from('early')]));
  assert.deepEqual(
    toAgent.map((b) => [b.length, b[0], b[299]]),
    [[300, 9, 9]],
    'the unmasked, joined payload',
  );
  assert.equal(agent.destroyed, true, "the client's close ends the agent connection");
  assert.ok(client.writableEnded);
});
