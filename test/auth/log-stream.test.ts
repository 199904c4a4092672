/**
 * The TLS front's pods/log stream (src/auth/log-stream.ts), in process: a fake node agent that
 * requires the kubelet client certificate, and a loopback socket standing for the client's
 * connection, whose raw bytes are checked (head, chunked body, close).
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, connect, type Server, type Socket } from 'node:net';
import { rmSync } from 'node:fs';
import { Pki } from './helpers.js';
import { startFakeKubelet, type FakeKubelet } from '../helpers/fake-kubelet.js';
import { until } from '../helpers/poll.js';
import type { KubeletDialMaterial } from '../../src/kubelet/client.js';
import { streamLog, responseHead, parseAgentHead, dechunk } from '../../src/auth/log-stream.js';
import type { UpgradeTarget } from '../../src/kubelet/upgrade-directive.js';

const HANDLER_HEAD =
  'HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nAudit-Id: 7\r\nx-plat-upgrade-directive: secret xyz\r\nDate: now\r\nContent-Length: 0';

let pki: Pki;
let agent: FakeKubelet;
let kubelet: KubeletDialMaterial;
let sockets: Server;
let accepted: ((s: Socket) => void) | undefined;

before(async () => {
  pki = new Pki().ca('ca').server('ca', 'agent').client('ca', 'kc', '/CN=plat-apiserver-kubelet-client');
  agent = await startFakeKubelet({ cert: pki.read('agent.crt'), key: pki.read('agent.key'), ca: pki.read('ca.crt') });
  kubelet = { cert: pki.read('kc.crt'), key: pki.read('kc.key'), timeoutMs: 1_000 };
  sockets = createServer((s) => accepted?.(s));
  await new Promise<void>((r) => sockets.listen(0, '127.0.0.1', () => r()));
});

after(async () => {
  await agent.close();
  sockets.close();
  rmSync(pki.dir, { recursive: true, force: true });
});

interface Seen {
  raw: () => string;
  closed: () => boolean;
  reader: Socket;
}

/** Runs streamLog on the server end of a loopback connection; returns what the client end reads. */
async function serve(t: Partial<UpgradeTarget>): Promise<Seen> {
  const front = new Promise<Socket>((r) => {
    accepted = r;
  });
  const reader = connect((sockets.address() as { port: number }).port, '127.0.0.1');
  const client = await front;
  let raw = '',
    closed = false;
  reader.on('data', (c: Buffer) => {
    raw += c.toString('latin1');
  });
  reader.on('close', () => {
    closed = true;
  });
  reader.on('error', () => {});
  streamLog(
    client,
    HANDLER_HEAD,
    { host: '127.0.0.1', port: agent.port, path: '/', insecure: true, log: { pod: 'p' }, ...t },
    kubelet,
  );
  return { raw: () => raw, closed: () => closed, reader };
}

test("responseHead keeps the handler's headers but not its body framing nor the directive", () => {
  assert.equal(
    responseHead(HANDLER_HEAD, 200, ['Connection: close']),
    'HTTP/1.1 200 OK\r\nAudit-Id: 7\r\nDate: now\r\nConnection: close\r\n\r\n',
  );
});

test("the agent's head and a chunked error body are read as Go's transport would", () => {
  assert.deepEqual(parseAgentHead('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked'), { code: 200, chunked: true });
  assert.deepEqual(parseAgentHead('HTTP/1.1 400 Bad Request\r\nContent-Length: 12\r\nX: y'), {
    code: 400,
    chunked: false,
    length: 12,
  });
  assert.equal(parseAgentHead('SSH-2.0-OpenSSH'), undefined);
  assert.equal(dechunk(Buffer.from('3\r\nabc\r\n2;x=1\r\nde\r\n0\r\n\r\n')).toString(), 'abcde');
  assert.equal(dechunk(Buffer.from('3\r\nabc\r\n5\r\nfg')).toString(), 'abcfg', 'what arrived of a cut body');
});

test("a log arrives chunked with the handler's headers, then the connection closes", async () => {
  agent.logs.set('default/p/c', ['one', 'two']);
  const seen = await serve({ path: '/containerLogs/default/p/c' });
  await until(async () => (seen.closed() ? true : undefined), 'the connection to close after the log');
  const [head, body] = seen.raw().split('\r\n\r\n', 2) as [string, string];
  assert.equal(
    head,
    'HTTP/1.1 200 OK\r\nAudit-Id: 7\r\nDate: now\r\nContent-Type: text/plain\r\nTransfer-Encoding: chunked\r\nConnection: close',
  );
  assert.ok(seen.raw().endsWith('0\r\n\r\n'), 'the last chunk ends the body');
  assert.equal(dechunk(Buffer.from(seen.raw().slice(head.length + 4), 'latin1')).toString(), 'one\ntwo\n', body);
  assert.equal(agent.calls.at(-1)?.user, 'plat-apiserver-kubelet-client');
});

test('a followed log streams as the agent writes; an agent that goes away cuts the body short (no last chunk)', async () => {
  const seen = await serve({ path: '/containerLogs/default/f/c?follow=true' });
  await until(async () => (agent.followers('default/f/c') === 1 ? true : undefined), 'the follow to reach the agent');
  agent.emit('default/f/c', 'live\n');
  await until(async () => (seen.raw().includes('live\n') ? true : undefined), 'the line to arrive');
  assert.equal(seen.closed(), false);
  const other = await startFakeKubelet({
    cert: pki.read('agent.crt'),
    key: pki.read('agent.key'),
    ca: pki.read('ca.crt'),
  });
  const cut = await serve({ port: other.port, path: '/containerLogs/default/f/c?follow=true' });
  await until(
    async () => (other.followers('default/f/c') === 1 ? true : undefined),
    'the second follow to reach its agent',
  );
  await other.close();
  await until(async () => (cut.closed() ? true : undefined), 'the client connection to close');
  assert.ok(!cut.raw().endsWith('0\r\n\r\n'), 'no last chunk: the client sees a truncated body');
  seen.reader.destroy();
  await until(
    async () => (agent.followers('default/f/c') === 0 ? true : undefined),
    'the agent stream to close when the client leaves',
  );
});

test("the agent's 400 becomes upstream's BadRequest Status; a refused dial the 500 upstream words", async () => {
  const waiting = await serve({ path: '/containerLogs/default/p/waiting' });
  await until(async () => (waiting.closed() ? true : undefined), 'the answer');
  const [head, body] = waiting.raw().split('\r\n\r\n', 2) as [string, string];
  assert.match(
    head,
    /^HTTP\/1\.1 400 Bad Request\r\nAudit-Id: 7\r\nDate: now\r\nContent-Type: application\/json\r\nContent-Length: \d+\r\nConnection: close$/,
  );
  assert.deepEqual(JSON.parse(body), {
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message: 'container "waiting" in pod "p" is waiting to start: ContainerCreating',
    reason: 'BadRequest',
    code: 400,
  });
  const missing = await serve({ path: '/nothing-here' });
  await until(async () => (missing.closed() ? true : undefined), 'the answer');
  assert.equal(
    JSON.parse(missing.raw().split('\r\n\r\n')[1]!).message,
    'the server could not find the requested resource ( pods/log p)',
  );
  const gone = createServer();
  await new Promise<void>((r) => gone.listen(0, '127.0.0.1', () => r()));
  const port = (gone.address() as { port: number }).port;
  await new Promise<void>((r) => gone.close(() => r()));
  const refused = await serve({ port, path: '/containerLogs/default/p/c' });
  await until(async () => (refused.closed() ? true : undefined), 'the answer');
  const status = JSON.parse(refused.raw().split('\r\n\r\n')[1]!);
  assert.deepEqual(
    [status.code, status.message],
    [
      500,
      `Get "https://127.0.0.1:${port}/containerLogs/default/p/c": dial tcp 127.0.0.1:${port}: connect: connection refused`,
    ],
  );
});
