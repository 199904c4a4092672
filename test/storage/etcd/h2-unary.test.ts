/**
 * The gRPC unary call on node:http2 of the etcd write path (src/storage/etcd/h2-unary.ts), against
 * an in-process HTTP/2 server that answers as a gRPC server does (and as one that misbehaves):
 * the request's headers and frame, answers in one or several chunks, etcd's refusals in a
 * trailers-only answer typed as grpc-js types them, broken streams and unreachable members as
 * UNAVAILABLE (recoverable for etcd3's pool), and a new session after a retired or failed one.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { once } from 'node:events';
import http2, { type Http2Server, type ServerHttp2Stream, type IncomingHttpHeaders } from 'node:http2';
import type { AddressInfo } from 'node:net';
import { castGrpcError, isRecoverableError } from 'etcd3';
import { H2Unary, grpcFrame } from '../../../src/storage/etcd/h2-unary.js';

type Handler = (stream: ServerHttp2Stream, headers: IncomingHttpHeaders, body: Buffer) => void;

let server: Http2Server;
let host: string;
let handler: Handler;
const requests: { headers: IncomingHttpHeaders; body: Buffer }[] = [];
let sessions = 0;

const text = (b: Buffer): string => b.toString();

/** answers msg as a gRPC server: headers, the framed message in `parts` writes, OK trailers */
function ok(msg: string, parts = 1): Handler {
  return (stream) => {
    stream.respond({ ':status': 200, 'content-type': 'application/grpc' }, { waitForTrailers: true });
    stream.on('wantTrailers', () => stream.sendTrailers({ 'grpc-status': '0' }));
    const frame = grpcFrame(Buffer.from(msg));
    const step = Math.ceil(frame.length / parts);
    for (let i = 0; i < frame.length; i += step) stream.write(frame.subarray(i, i + step));
    stream.end();
  };
}

async function failure(p: Promise<unknown>): Promise<Error & { code?: number }> {
  return p.then(
    () => assert.fail('answered'),
    (e: Error & { code?: number }) => e,
  );
}

before(async () => {
  server = http2.createServer();
  server.on('session', () => sessions++);
  server.on('stream', (s, headers) => {
    const stream = s as ServerHttp2Stream;
    // (a stream this server resets emits the reset as an error here too)
    stream.on('error', () => undefined);
    const chunks: Buffer[] = [];
    stream.on('data', (c: Buffer) => chunks.push(c));
    stream.on('end', () => {
      const body = Buffer.concat(chunks);
      requests.push({ headers, body });
      handler(stream, headers, body);
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  host = `127.0.0.1:${(server.address() as AddressInfo).port}`;
});

after(() => server.close());

describe('H2Unary', () => {
  it('sends the gRPC request headers, the metadata and the framed message, and decodes the one answer', async () => {
    const h2 = new H2Unary(undefined);
    try {
      handler = ok('answer');
      const call = h2.call(host, '/etcdserverpb.KV/Txn', grpcFrame(Buffer.from('request')), { token: 't1' }, text);
      assert.equal(await call.answer, 'answer');
      const { headers, body } = requests.at(-1)!;
      assert.equal(headers[':method'], 'POST');
      assert.equal(headers[':path'], '/etcdserverpb.KV/Txn');
      assert.equal(headers['content-type'], 'application/grpc');
      assert.equal(headers.te, 'trailers');
      assert.equal(headers.token, 't1');
      assert.deepEqual(body, grpcFrame(Buffer.from('request')));
    } finally {
      h2.close();
    }
  });

  it('joins an answer that arrives in several chunks', async () => {
    const h2 = new H2Unary(undefined);
    try {
      handler = ok('x'.repeat(40_000), 7);
      assert.equal(await h2.call(host, '/m', grpcFrame(Buffer.alloc(0)), {}, text).answer, 'x'.repeat(40_000));
    } finally {
      h2.close();
    }
  });

  it("answers etcd's refusal in a trailers-only answer as grpc-js does (code, decoded message)", async () => {
    const h2 = new H2Unary(undefined);
    try {
      handler = (stream) =>
        stream.respond(
          {
            ':status': 200,
            'content-type': 'application/grpc',
            'grpc-status': '3',
            'grpc-message': encodeURIComponent('etcdserver: duplicate key given in txn request'),
          },
          { endStream: true },
        );
      const err = await failure(h2.call(host, '/m', grpcFrame(Buffer.alloc(0)), {}, text).answer);
      assert.equal(err.code, 3);
      assert.equal(err.message, '3 INVALID_ARGUMENT: etcdserver: duplicate key given in txn request');
      const typed = castGrpcError(err);
      assert.match(typed.message, /duplicate key/);
      assert.equal(isRecoverableError(typed), false);
    } finally {
      h2.close();
    }
  });

  it('fails a compressed or truncated frame as INTERNAL, a refused stream as UNAVAILABLE', async () => {
    const h2 = new H2Unary(undefined);
    try {
      handler = (stream) => {
        stream.respond({ ':status': 200, 'content-type': 'application/grpc' }, { waitForTrailers: true });
        stream.on('wantTrailers', () => stream.sendTrailers({ 'grpc-status': '0' }));
        const frame = grpcFrame(Buffer.from('zipped'));
        frame[0] = 1;
        stream.end(frame);
      };
      assert.equal((await failure(h2.call(host, '/m', grpcFrame(Buffer.alloc(0)), {}, text).answer)).code, 13);
      handler = (stream) => stream.close(http2.constants.NGHTTP2_REFUSED_STREAM);
      const refused = await failure(h2.call(host, '/m', grpcFrame(Buffer.alloc(0)), {}, text).answer);
      assert.equal(refused.code, 14);
      assert.ok(isRecoverableError(castGrpcError(refused)));
    } finally {
      h2.close();
    }
  });

  it('fails a call to a member nobody listens on as UNAVAILABLE (recoverable)', async () => {
    const closed = http2.createServer().listen(0, '127.0.0.1');
    await once(closed, 'listening');
    const port = (closed.address() as AddressInfo).port;
    closed.close();
    const h2 = new H2Unary(undefined);
    try {
      const err = await failure(h2.call(`127.0.0.1:${port}`, '/m', grpcFrame(Buffer.alloc(0)), {}, text).answer);
      assert.equal(err.code, 14);
      assert.ok(isRecoverableError(castGrpcError(err)), err.message);
    } finally {
      h2.close();
    }
  });

  it('keeps one session per member, opens a new one after retire() and after the member ends the session', async () => {
    const h2 = new H2Unary(undefined);
    try {
      handler = ok('a');
      const s0 = sessions;
      await h2.call(host, '/m', grpcFrame(Buffer.alloc(0)), {}, text).answer;
      await h2.call(host, '/m', grpcFrame(Buffer.alloc(0)), {}, text).answer;
      assert.equal(sessions - s0, 1);
      h2.retire(host);
      await h2.call(host, '/m', grpcFrame(Buffer.alloc(0)), {}, text).answer;
      assert.equal(sessions - s0, 2);
      // the member drops the session after answering: the next call finds it gone
      handler = (stream, h, b) => {
        const session = stream.session;
        ok('b')(stream, h, b);
        stream.once('close', () => session?.destroy());
      };
      assert.equal(await h2.call(host, '/m', grpcFrame(Buffer.alloc(0)), {}, text).answer, 'b');
      // a call racing the session's end fails as UNAVAILABLE (etcd3 retries it); the next opens a new one
      handler = ok('c');
      let answer: unknown;
      for (let i = 0; i < 20 && answer !== 'c'; i++) {
        answer = await h2
          .call(host, '/m', grpcFrame(Buffer.alloc(0)), {}, text)
          .answer.catch((e: Error & { code?: number }) => {
            assert.equal(e.code, 14, e.message);
            return e;
          });
      }
      assert.equal(answer, 'c');
      assert.equal(sessions - s0, 3);
    } finally {
      h2.close();
    }
  });

  it('fails every call after close() as UNAVAILABLE', async () => {
    const h2 = new H2Unary(undefined);
    h2.close();
    const err = await failure(h2.call(host, '/m', grpcFrame(Buffer.alloc(0)), {}, text).answer);
    assert.equal(err.code, 14);
  });
});
