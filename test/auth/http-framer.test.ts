import { test } from 'node:test';
import assert from 'node:assert/strict';
import { RequestFramer } from '../../src/auth/http-framer.js';
import { isFollowedLogRequest } from '../../src/auth/upgrade-proxy.js';

const DROP = 'x-identity';
const INJECT = 'x-identity: me\r\n';

function run(input: string, split: number[] = []): { out: string; failed?: number } {
  let out = '';
  let failed: number | undefined;
  const f = new RequestFramer(DROP, INJECT, {
    write: (b) => {
      out += b.toString('latin1');
    },
    fail: (code) => {
      failed = code;
    },
  });
  const buf = Buffer.from(input, 'latin1');
  let at = 0;
  for (const s of [...split, buf.length]) {
    if (s > at) f.push(buf.subarray(at, s));
    at = Math.max(at, s);
  }
  return { out, failed };
}

const GET = 'GET /a HTTP/1.1\r\nHost: x\r\nX-Identity: forged\r\n\r\n';
const GET_OUT = 'GET /a HTTP/1.1\r\nx-identity: me\r\nHost: x\r\n\r\n';

test('head: the client copy of the identity header is dropped, the connection one inserted', () => {
  assert.deepEqual(run(GET), { out: GET_OUT, failed: undefined });
});

test('pipelined requests with Content-Length and chunked bodies, at every split point', () => {
  const post = 'POST /b HTTP/1.1\r\nContent-Length: 5\r\n\r\nhello';
  const chunked = 'PUT /c HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n3;ext=1\r\nabc\r\n0\r\nTrailer: t\r\n\r\n';
  const input = GET + post + chunked + GET;
  const expected =
    GET_OUT +
    post.replace('\r\n', '\r\nx-identity: me\r\n') +
    chunked.replace('\r\n', '\r\nx-identity: me\r\n') +
    GET_OUT;
  for (let i = 0; i <= input.length; i++) {
    assert.deepEqual(run(input, [i]), { out: expected, failed: undefined }, `split at ${i}`);
  }
  // byte by byte
  assert.equal(run(input, [...Array(input.length).keys()]).out, expected);
});

test('a body that looks like a head is passed through untouched', () => {
  const body = 'GET /evil HTTP/1.1\r\nX-Identity: forged\r\n\r\n';
  const input = `POST /b HTTP/1.1\r\nContent-Length: ${body.length}\r\n\r\n${body}`;
  assert.equal(run(input).out, input.replace('\r\n', '\r\nx-identity: me\r\n'));
});

test('upgrade: after the head everything is tunnelled', () => {
  const input = 'GET /ws HTTP/1.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n\x81\x05X-Identity: raw';
  assert.equal(run(input).out, input.replace('\r\n', '\r\nx-identity: me\r\n'));
});

test('unframeable input is refused', () => {
  assert.equal(run('POST / HTTP/1.1\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n').failed, 400);
  assert.equal(run('POST / HTTP/1.1\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\n').failed, 400);
  assert.equal(run('POST / HTTP/1.1\r\nContent-Length: -1\r\n\r\n').failed, 400);
  assert.equal(run('POST / HTTP/1.1\r\nTransfer-Encoding: gzip\r\n\r\n').failed, 400);
  assert.equal(run('POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n').failed, 400);
  assert.equal(run('GET / HTTP/1.1\r\nA: ' + 'x'.repeat(70 * 1024)).failed, 431);
});

test('takesOver: a request the sink names (pods/log) is handed over like an upgrade; later bytes follow it', () => {
  const heads: string[] = [];
  let out = '';
  const f = new RequestFramer(DROP, INJECT, {
    write: (b) => {
      out += b.toString('latin1');
    },
    fail: () => {},
    upgrade: (h) => {
      heads.push(h.toString('latin1'));
    },
    takesOver: isFollowedLogRequest,
  });
  const log = 'GET /api/v1/namespaces/default/pods/p/log?follow=true HTTP/1.1\r\nHost: x\r\n\r\n';
  f.push(Buffer.from(GET + log + 'GET /b HTTP/1.1\r\n\r\n', 'latin1'));
  assert.deepEqual(heads, [log.replace('\r\n', '\r\nx-identity: me\r\n')]);
  assert.equal(
    out,
    GET_OUT + 'GET /b HTTP/1.1\r\n\r\n',
    'the request before is relayed; the bytes after go to the taken-over connection',
  );
});

test('isFollowedLogRequest: only a followed GET of core pods/log (a bounded log stays an ordinary request)', () => {
  const lines: [string, boolean][] = [
    ['GET /api/v1/namespaces/default/pods/p/log?follow=true HTTP/1.1', true],
    ['GET /api/v1/namespaces/default/pods/p/log?container=c&follow=true HTTP/1.1', true],
    ['GET /api/v1/namespaces/default/pods/p/log?follow=1&follow=false HTTP/1.1', true],
    ['GET /api/v1/namespaces/default/pods/p/log HTTP/1.1', false],
    ['GET /api/v1/namespaces/default/pods/p/log?follow=false HTTP/1.1', false],
    ['GET /api/v1/namespaces/default/pods/p/log?tailLines=3&follow= HTTP/1.1', false],
    ['POST /api/v1/namespaces/default/pods/p/log?follow=true HTTP/1.1', false],
    ['HEAD /api/v1/namespaces/default/pods/p/log?follow=true HTTP/1.1', false],
    ['GET /api/v1/namespaces/default/pods/p HTTP/1.1', false],
    ['GET /api/v1/namespaces/default/pods/p/log/x?follow=true HTTP/1.1', false],
    ['GET /api/v1/namespaces/default/pods/p/exec?follow=true HTTP/1.1', false],
    ['GET /apis/x.io/v1/namespaces/default/pods/p/log?follow=true HTTP/1.1', false],
  ];
  assert.deepEqual(
    lines.map(([l]) => [l, isFollowedLogRequest(l)]),
    lines,
  );
});
