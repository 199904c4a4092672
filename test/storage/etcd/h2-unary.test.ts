/**
 * The gRPC calls on node:http2 of the etcd backend, the commit's unary Txn (src/storage/etcd/h2-unary.ts)
 * and the watch's bidirectional stream (h2-stream.ts), against
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
import { FrameReader, H2Duplex } from '../../../src/storage/etcd/h2-stream.js';

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

describe('FrameReader', () => {
  const framed = (...ms: string[]): Buffer => Buffer.concat(ms.map((m) => grpcFrame(Buffer.from(m))));

  it('splits several messages in one chunk and joins one message spread over chunks', () => {
    const r = new FrameReader();
    assert.deepEqual(r.push(framed('one', 'two', '')).map(text), ['one', 'two', '']);
    const big = framed('x'.repeat(1000), 'tail');
    const got: string[] = [];
    // 3-byte chunks: headers and bodies split anywhere
    for (let i = 0; i < big.length; i += 3) got.push(...r.push(big.subarray(i, i + 3)).map(text));
    assert.deepEqual(got, ['x'.repeat(1000), 'tail']);
  });

  it('copies each message out of the chunks (a chunk written to later does not change it)', () => {
    const r = new FrameReader();
    const chunk = framed('abc');
    const [m] = r.push(chunk);
    chunk.fill(0);
    assert.equal(text(m!), 'abc');
  });

  it('throws on a compressed message', () => {
    const chunk = framed('z');
    chunk[0] = 1;
    assert.throws(() => new FrameReader().push(chunk), /compressed/);
  });
});

describe('H2Duplex', () => {
  /** the events of a stream, in order, until its 'end' */
  function events(s: H2Duplex<string, string>): Promise<string[]> {
    const seen: string[] = [];
    s.on('data', (m: string) => seen.push(`data ${m}`));
    s.on('error', (e: Error & { code?: number }) => seen.push(`error ${e.code} writable=${s.writable}`));
    return new Promise((resolve) => s.on('end', () => resolve([...seen, `end writable=${s.writable}`])));
  }
  const open = (): H2Duplex<string, string> =>
    new H2Duplex(host, undefined, '/etcdserverpb.Watch/Watch', { token: 't' }, (r: string) => Buffer.from(r), text);

  it('sends each write as a frame and emits each message, then end on an OK status', async () => {
    handler = (stream, _h, body) => {
      stream.respond({ ':status': 200, 'content-type': 'application/grpc' }, { waitForTrailers: true });
      stream.on('wantTrailers', () => stream.sendTrailers({ 'grpc-status': '0' }));
      stream.write(Buffer.concat([grpcFrame(Buffer.from('m1')), grpcFrame(Buffer.from('m2'))]));
      stream.end(grpcFrame(Buffer.from(`echo ${body.length}`)));
    };
    const s = open();
    const seen = events(s);
    s.write('req-a');
    s.write('req-b');
    // the server answers once the request side ends (its handler runs on 'end')
    (s as unknown as { stream: { end(): void } }).stream.end();
    assert.deepEqual(await seen, ['data m1', 'data m2', `data echo ${2 * (5 + 5)}`, 'end writable=false']);
    assert.deepEqual(
      requests.at(-1)!.body,
      Buffer.concat([grpcFrame(Buffer.from('req-a')), grpcFrame(Buffer.from('req-b'))]),
    );
    assert.equal(requests.at(-1)!.headers.token, 't');
  });

  it("emits etcd's error status while still writable (as grpc-js does), then end", async () => {
    handler = (stream) =>
      stream.respond(
        {
          ':status': 200,
          'content-type': 'application/grpc',
          'grpc-status': '11',
          'grpc-message': 'etcdserver%3A%20mvcc',
        },
        { endStream: true },
      );
    const s = open();
    const seen = events(s);
    (s as unknown as { stream: { end(): void } }).stream.end();
    assert.deepEqual(await seen, ['error 11 writable=true', 'end writable=false']);
  });

  it('cancel() emits CANCELLED then end, after the current callback; a broken stream is UNAVAILABLE', async () => {
    handler = () => undefined; // never answers
    const s = open();
    const seen = events(s);
    s.write('x');
    let during = true;
    s.on('error', () => assert.equal(during, false, 'error emitted inside cancel()'));
    s.cancel();
    during = false;
    assert.deepEqual(await seen, ['error 1 writable=true', 'end writable=false']);
    assert.equal(s.write('after'), false);
    handler = (stream) => stream.close(http2.constants.NGHTTP2_INTERNAL_ERROR);
    const broken = open();
    const seen2 = events(broken);
    (broken as unknown as { stream: { end(): void } }).stream.end();
    assert.deepEqual(await seen2, ['error 14 writable=true', 'end writable=false']);
  });
});
