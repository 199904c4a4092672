/**
 * Raw HTTP/1.1 over node:net for what fetch and node:http will not send: Content-Length that
 * does not match the body, conflicting framing headers, broken chunked encoding, malformed
 * request lines and headers, pipelined requests. The server may answer a malformed message
 * with a bare protocol error or by closing; it must answer well-formed ones properly.
 */
import net from 'node:net';
import type { HttpReply } from './check.js';
import type { Rng } from './rng.js';

export interface RawCase {
  note: string;
  chunks: Buffer[];
  /** leading requests that are well-formed HTTP: each must get a proper (Status-checked) answer */
  wellFormed: number;
  /** the paths of those requests, for the oracle */
  targets: string[];
  methods: string[];
  halfClose: boolean;
}

export interface RawResult {
  replies: HttpReply[];
  closedByServer: boolean;
  error?: string;
  garbage: boolean;
}

/** how long a raw exchange may take: malformed ones usually end at once (closed), well-formed ones end with `Connection: close` */
export const RAW_WAIT_MS = 1_500;
const RAW_WELL_FORMED_WAIT_MS = 5_000;

const CM = '/api/v1/namespaces/default/configmaps';
const cmBody = (name: string) =>
  JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: { k: 'v' } });

function req(method: string, path: string, headers: string[], body = ''): string {
  return `${method} ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\n${headers.map((h) => h + '\r\n').join('')}\r\n${body}`;
}

export function planRaw(rng: Rng): RawCase {
  const name = `fz-raw-${rng.int(6)}`;
  const body = cmBody(name);
  const ok = (note: string, text: string, targets: string[], methods: string[], halfClose = false): RawCase => ({
    note,
    chunks: [Buffer.from(text)],
    wellFormed: targets.length,
    targets,
    methods,
    halfClose,
  });
  const bad = (note: string, text: string | Buffer, halfClose = rng.chance(0.5)): RawCase => ({
    note,
    chunks: [typeof text === 'string' ? Buffer.from(text) : text],
    wellFormed: 0,
    targets: [],
    methods: [],
    halfClose,
  });
  return rng.weighted<() => RawCase>([
    [
      3,
      () => {
        const declared = body.length + rng.pick([1, 10, 1000, 5_000_000]);
        return bad(
          `content-length ${declared} > body ${body.length}`,
          req('POST', CM, ['Content-Type: application/json', `Content-Length: ${declared}`], body),
          true,
        );
      },
    ],
    [
      3,
      () => {
        // the bytes past Content-Length are a malformed second request: the parser may close before the first is answered
        const declared = rng.int(body.length);
        return {
          ...ok(
            `content-length ${declared} < body ${body.length}`,
            req('POST', CM, ['Content-Type: application/json', `Content-Length: ${declared}`], body),
            [CM],
            ['POST'],
          ),
          wellFormed: 0,
        };
      },
    ],
    [
      2,
      () =>
        bad(
          'content-length garbage',
          req(
            'POST',
            CM,
            [
              'Content-Type: application/json',
              `Content-Length: ${rng.pick(['abc', '-1', '1e3', '99999999999999999999', ' 5', '0x10', '5, 6', ''])}`,
            ],
            body,
          ),
        ),
    ],
    [
      2,
      () =>
        bad(
          'duplicate content-length',
          req(
            'POST',
            CM,
            ['Content-Type: application/json', `Content-Length: ${body.length}`, `Content-Length: ${body.length + 3}`],
            body + 'abc',
          ),
        ),
    ],
    [
      2,
      () =>
        bad(
          'transfer-encoding and content-length',
          req(
            'POST',
            CM,
            ['Content-Type: application/json', 'Transfer-Encoding: chunked', `Content-Length: ${body.length}`],
            `${body.length.toString(16)}\r\n${body}\r\n0\r\n\r\n`,
          ),
        ),
    ],
    [
      2,
      () => {
        const b = cmBody(name + '-ch');
        const ext = rng.chance(0.3);
        const c = ok(
          `chunked body${ext ? ' with chunk extension' : ''}`,
          req(
            'POST',
            CM,
            ['Content-Type: application/json', 'Transfer-Encoding: chunked', 'Connection: close'],
            `${(10).toString(16)}\r\n${b.slice(0, 10)}\r\n${(b.length - 10).toString(16)}${ext ? ';ext=1' : ''}\r\n${b.slice(10)}\r\n0\r\n\r\n`,
          ),
          [CM],
          ['POST'],
        );
        // uWS closes on chunk extensions (documented in docs/reliability.md)
        return ext ? { ...c, wellFormed: 0 } : c;
      },
    ],
    [
      3,
      () =>
        bad(
          'chunked garbage',
          req(
            'POST',
            CM,
            ['Content-Type: application/json', 'Transfer-Encoding: chunked'],
            rng.pick([
              `zz\r\n${body}\r\n0\r\n\r\n`,
              `ffffffffffffffff\r\n${body}\r\n`,
              `${body.length.toString(16)}\r\n${body}`,
              `-5\r\nabc\r\n0\r\n\r\n`,
              `${(body.length + 5).toString(16)}\r\n${body}\r\n0\r\n\r\n`,
              `3\r\nabcdef\r\n0\r\n\r\n`,
            ]),
          ),
        ),
    ],
    [
      1,
      () =>
        bad(
          'transfer-encoding unknown',
          req(
            'POST',
            CM,
            [
              'Content-Type: application/json',
              `Transfer-Encoding: ${rng.pick(['gzip', 'chunked, identity', 'x', 'chunked\t'])}`,
            ],
            body,
          ),
        ),
    ],
    [
      2,
      () =>
        bad(
          'header garbage',
          `GET ${CM} HTTP/1.1\r\nHost: x\r\n${rng.pick([
            'NoColonHere',
            'Bad Name: v',
            ' leading: space',
            'X: a\u0000b',
            'X: folded\r\n continued',
            ': empty-name',
            'Accept:' + 'x'.repeat(70_000),
          ])}\r\n\r\n`,
        ),
    ],
    [
      1,
      () =>
        bad(
          'many headers',
          `GET ${CM} HTTP/1.1\r\nHost: x\r\n${Array.from({ length: rng.pick([60, 200, 2000]) }, (_, i) => `X-H${i}: v`).join('\r\n')}\r\n\r\n`,
        ),
    ],
    [1, () => bad('bare LF line endings', `GET ${CM} HTTP/1.1\nHost: x\nAccept: application/json\n\n`)],
    [
      3,
      () =>
        bad(
          'request line',
          rng.pick([
            `GET ${CM} HTTP/1.0\r\n\r\n`,
            `GET ${CM} HTTP/2.0\r\nHost: x\r\n\r\n`,
            `GET  ${CM} HTTP/1.1\r\nHost: x\r\n\r\n`,
            `GET http://127.0.0.1${CM} HTTP/1.1\r\nHost: x\r\n\r\n`,
            'GET * HTTP/1.1\r\nHost: x\r\n\r\n',
            `get ${CM} HTTP/1.1\r\nHost: x\r\n\r\n`,
            `GET ${CM}\r\n\r\n`,
            `GET ${CM} HTTP/1.1 extra\r\nHost: x\r\n\r\n`,
            `GET /${'a'.repeat(100_000)} HTTP/1.1\r\nHost: x\r\n\r\n`,
            'PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n',
            `GET /api/v1/namespaces/default/configmaps/../../../../etc/passwd HTTP/1.1\r\nHost: x\r\n\r\n`,
            `GET /api/v1/namespaces/default/configmaps/fz\u0000x HTTP/1.1\r\nHost: x\r\n\r\n`,
            '\r\n\r\n\r\n',
            `G\u00e9T ${CM} HTTP/1.1\r\n\r\n`,
          ]),
        ),
    ],
    [1, () => bad('binary garbage', Buffer.from(rng.bytes(rng.size(4096))))],
    [1, () => bad('TLS client hello', Buffer.from('16030100a5010000a10303' + '00'.repeat(40), 'hex'))],
    [
      3,
      () => {
        const n = rng.range(2, 4);
        const parts = Array.from({ length: n }, (_, i) =>
          rng.pick([
            () => [req('GET', '/readyz', []), '/readyz', 'GET'],
            () => [req('GET', CM + '?limit=1', ['Accept: application/json']), CM, 'GET'],
            () => {
              const b = cmBody(`${name}-p${i}`);
              return [
                req('POST', CM, ['Content-Type: application/json', `Content-Length: ${Buffer.byteLength(b)}`], b),
                CM,
                'POST',
              ];
            },
            () => [req('GET', `${CM}/nope-${i}`, []), `${CM}/nope`, 'GET'],
            () => [req('DELETE', `${CM}/${name}-p${i}`, ['Content-Length: 0']), `${CM}/x`, 'DELETE'],
          ])(),
        );
        // uWS closes a connection when a request arrives while an earlier one awaits an asynchronous answer
        // (documented in docs/reliability.md): whatever it does answer must be right
        return {
          ...ok(
            `pipelined x${n}`,
            parts.map((p) => p[0]).join(''),
            parts.map((p) => p[1]!),
            parts.map((p) => p[2]!),
            rng.chance(0.5),
          ),
          wellFormed: 0,
        };
      },
    ],
    [
      1,
      () =>
        ok(
          'expect 100-continue',
          req(
            'POST',
            CM,
            [
              'Content-Type: application/json',
              `Content-Length: ${body.length}`,
              'Expect: 100-continue',
              'Connection: close',
            ],
            body,
          ),
          [CM],
          ['POST'],
        ),
    ],
    [
      1,
      () =>
        bad(
          'websocket upgrade',
          req('GET', CM + '?watch=1&timeoutSeconds=1', [
            'Connection: Upgrade',
            'Upgrade: websocket',
            'Sec-WebSocket-Version: 13',
            'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==',
          ]),
        ),
    ],
  ])();
}

/** Sends the bytes, collects everything the server writes until it closes or RAW_WAIT_MS passes. */
export function sendRaw(port: number, c: RawCase): Promise<RawResult> {
  return new Promise((resolve) => {
    const sock = net.connect({ host: '127.0.0.1', port });
    const data: Buffer[] = [];
    let error: string | undefined;
    let closedByServer = false;
    const timer = setTimeout(() => sock.destroy(), c.wellFormed ? RAW_WELL_FORMED_WAIT_MS : RAW_WAIT_MS);
    sock.on('connect', () => {
      for (const ch of c.chunks) sock.write(ch);
      if (c.halfClose) sock.end();
    });
    sock.on('data', (d: Buffer) => data.push(d));
    sock.on('end', () => {
      closedByServer = true;
    });
    sock.on('error', (e) => {
      error = `${(e as NodeJS.ErrnoException).code ?? ''} ${e.message}`;
    });
    sock.on('close', () => {
      clearTimeout(timer);
      const { replies, garbage } = parseReplies(Buffer.concat(data));
      resolve({ replies, closedByServer, error, garbage });
    });
  });
}

/** Splits a byte stream into HTTP/1.1 responses (Content-Length or chunked bodies); 1xx skipped. */
export function parseReplies(buf: Buffer): { replies: HttpReply[]; garbage: boolean } {
  const replies: HttpReply[] = [];
  let pos = 0;
  while (pos < buf.length) {
    const end = buf.indexOf('\r\n\r\n', pos);
    if (end < 0) return { replies, garbage: true };
    const lines = buf.subarray(pos, end).toString('latin1').split('\r\n');
    const m = /^HTTP\/1\.[01] (\d{3})/.exec(lines[0]!);
    if (!m) return { replies, garbage: true };
    const headers: Record<string, string> = {};
    for (const l of lines.slice(1)) {
      const i = l.indexOf(':');
      if (i > 0) headers[l.slice(0, i).trim().toLowerCase()] = l.slice(i + 1).trim();
    }
    pos = end + 4;
    const status = Number(m[1]);
    if (status >= 100 && status < 200) continue;
    let body: Buffer;
    if (/chunked/i.test(headers['transfer-encoding'] ?? '')) {
      const parts: Buffer[] = [];
      for (;;) {
        const le = buf.indexOf('\r\n', pos);
        if (le < 0)
          return {
            replies: [...replies, { status, headers, body: Buffer.concat(parts), abortedByClient: true }],
            garbage: false,
          };
        const size = parseInt(buf.subarray(pos, le).toString('latin1'), 16);
        pos = le + 2;
        if (!(size > 0)) {
          pos = buf.indexOf('\r\n', pos) + 2 || buf.length;
          break;
        }
        parts.push(buf.subarray(pos, pos + size));
        pos += size + 2;
      }
      body = Buffer.concat(parts);
    } else {
      const len = Number(headers['content-length'] ?? (status === 204 || status === 304 ? 0 : buf.length - pos));
      body = buf.subarray(pos, pos + len);
      pos += len;
    }
    replies.push({ status, headers, body });
  }
  return { replies, garbage: false };
}
