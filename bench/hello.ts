/**
 * The ceiling: a bare uWebSockets.js server doing the least work that produces a response of
 * the measured size. Started as a child process by bench/run.ts on a free loopback port; prints
 * the same "listening on" line as the real server.
 *
 *   node dist/bench/hello.js --body-bytes N [--status 201] [--fanout]
 *
 * Without --fanout every request is answered with an N-byte JSON-typed body (request bodies
 * are read to the end first). With --fanout, a GET carrying `watch` in its query becomes a
 * chunked stream, and each PUT/POST body is framed once as a watch event line and written to
 * every open stream (one write per stream per event-loop turn): the bare fan-out the watch
 * scenario is compared with.
 */
import uWS from 'uWebSockets.js';
import type { HttpResponse, HttpRequest } from 'uWebSockets.js';

interface HelloOptions {
  bodyBytes: number;
  status: number;
  fanout: boolean;
}

function parse(argv: string[]): HelloOptions {
  const o: HelloOptions = { bodyBytes: 2, status: 200, fanout: false };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--body-bytes') o.bodyBytes = Number(argv[++i]);
    else if (a === '--status') o.status = Number(argv[++i]);
    else if (a === '--fanout') o.fanout = true;
    else throw new Error(`unknown argument ${a}`);
  }
  if (!Number.isInteger(o.bodyBytes) || o.bodyBytes < 2) throw new Error('--body-bytes must be an integer >= 2');
  return o;
}

const STATUS_TEXT: Record<number, string> = { 200: '200 OK', 201: '201 Created' };

/** A JSON string literal of exactly n bytes. */
function bodyOf(n: number): Buffer {
  return Buffer.from(`"${'x'.repeat(n - 2)}"`);
}

function readAll(res: HttpResponse, done: (body: Buffer) => void): void {
  const chunks: Buffer[] = [];
  res.onData((ab, isLast) => {
    chunks.push(Buffer.from(ab.slice(0)));
    if (isLast) done(Buffer.concat(chunks));
  });
}

/** First line of a fan-out stream, so clients see the response head at once. */
const OPENING_LINE =
  '{"type":"BOOKMARK","object":{"kind":"ConfigMap","apiVersion":"v1","metadata":{"resourceVersion":"1"}}}\n';

interface Stream {
  res: HttpResponse;
  open: boolean;
}

function main(): void {
  const o = parse(process.argv.slice(2));
  const body = bodyOf(o.bodyBytes);
  const status = STATUS_TEXT[o.status] ?? `${o.status} Unknown`;
  const streams = new Set<Stream>();
  const app = uWS.App();

  const reply = (res: HttpResponse, payload: Buffer, code: string): void => {
    res.cork(() => {
      res.writeStatus(code).writeHeader('Content-Type', 'application/json').end(payload);
    });
  };

  const openStream = (res: HttpResponse): void => {
    const s: Stream = { res, open: true };
    res.onAborted(() => {
      s.open = false;
      streams.delete(s);
    });
    res.cork(() => {
      res.writeStatus('200 OK').writeHeader('Content-Type', 'application/json').write(OPENING_LINE);
    });
    // as the server's watch streams do (src/handlers/watch.ts): without a handler, uWS arms its
    // 10 s idle timeout when a backlogged stream drains, and cuts a stream that is then quiet
    // that long (between the scenario's phases on a loaded machine)
    res.onWritable(() => {
      res.cork(() => {});
      return true;
    });
    streams.add(s);
  };

  /**
   * Lines received in this event-loop turn go out together after the turn, one joined buffer
   * shared by every stream (writing every stream from inside each PUT handler, where uWS has
   * the requesting socket corked, measured several times slower).
   */
  let queued: Buffer[] = [];
  const flush = (): void => {
    const out = queued.length === 1 ? queued[0]! : Buffer.concat(queued);
    queued = [];
    for (const s of streams)
      if (s.open)
        s.res.cork(() => {
          s.res.write(out);
        });
  };
  const broadcast = (objectJson: Buffer): void => {
    if (queued.length === 0) setImmediate(flush);
    queued.push(Buffer.from('{"type":"MODIFIED","object":'), objectJson, Buffer.from('}\n'));
  };

  app.any('/*', (res: HttpResponse, req: HttpRequest) => {
    const method = req.getMethod();
    if (o.fanout && method === 'get' && req.getQuery()?.includes('watch')) return openStream(res);
    if (method === 'get' || method === 'head' || method === 'delete') return reply(res, body, status);
    let aborted = false;
    res.onAborted(() => {
      aborted = true;
    });
    readAll(res, (received) => {
      if (aborted) return;
      if (o.fanout) {
        broadcast(received);
        reply(res, received, '200 OK');
      } else {
        reply(res, body, status);
      }
    });
  });

  app.listen('127.0.0.1', 0, (sock) => {
    if (!sock) {
      process.stderr.write('hello: cannot listen\n');
      process.exit(1);
    }
    process.stdout.write(`listening on http://127.0.0.1:${uWS.us_socket_local_port(sock)}\n`);
  });
  const stop = (): void => process.exit(0);
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

main();
