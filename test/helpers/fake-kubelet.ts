/**
 * A loopback fake node agent speaking the kubelet's HTTPS API for the connect subresources:
 * `/healthz`, `/containerLogs/<ns>/<pod>/<container>` (follow streams until closed),
 * `/exec` and `/attach` over WebSocket (`v5.channel.k8s.io`, a few scripted commands), and
 * `/portForward` over plain SPDY/3.1 as a kubelet (test/helpers/spdy-portforward.ts; SPDY
 * tunneled in WebSocket only when `tunneledPortForward` is set). It requires a client
 * certificate signed by the given CA (the API server's cluster CA) and records who called.
 */
import { createServer, type Server } from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createHash } from 'node:crypto';
import type { Duplex } from 'node:stream';
import type { TLSSocket } from 'node:tls';
import { WsConn } from './ws-frames.js';
import { serveSpdyExec } from './spdy-exec.js';

export interface AgentCall {
  method: string;
  path: string;
  user: string;
  protocol?: string;
  headers: IncomingMessage['headers'];
}

export interface FakeKubelet {
  port: number;
  calls: AgentCall[];
  /** log lines already there per `<ns>/<pod>/<container>` */
  logs: Map<string, string[]>;
  /** appends to a followed log (every open follow of that container gets it) */
  emit(key: string, text: string | Buffer): void;
  /** open follow streams per key */
  followers(key: string): number;
  /**
   * handler for /portForward upgrades (set by tests that need it): a plain SPDY/3.1 upgrade, as
   * a kubelet speaks it, or (unlike a kubelet, for the benchmark's direct reads) SPDY tunneled
   * in WebSocket binary messages; either way `conn` carries the SPDY byte stream
   */
  portForward?: (conn: MessageConn, req: IncomingMessage) => void;
  /**
   * whether /portForward also accepts SPDY tunneled in WebSocket (default false: a kubelet
   * refuses it with 403, the API server must translate; the benchmark's direct reads set it)
   */
  tunneledPortForward: boolean;
  /** delays every response head (a slow agent) */
  delayMs: number;
  /** TLS connections accepted so far (pooling: sequential requests share one) */
  connections: number;
  /**
   * the next this many requests that arrive on an already used connection are dropped
   * unanswered (the connection closed): an agent closing an idle keep-alive connection just as
   * the client reuses it
   */
  dropReused: number;
  close(): Promise<void>;
}

/** A byte stream in messages: WebSocket binary messages, or a raw socket's reads and writes. */
export interface MessageConn {
  readonly sock: Duplex;
  /** false when the socket is full (wait for its 'drain') */
  send(b: Buffer): boolean;
  onMessage: (m: Buffer) => void;
  onClose: () => void;
}

/** A raw upgraded socket as a MessageConn (plain SPDY). */
function rawConn(sock: Duplex, head: Buffer): MessageConn {
  const c: MessageConn = {
    sock,
    send: (b) => !sock.destroyed && sock.write(b),
    onMessage: () => {},
    onClose: () => {},
  };
  sock.on('data', (m: Buffer) => c.onMessage(m));
  sock.on('close', () => c.onClose());
  sock.on('error', () => sock.destroy());
  if (head.length) queueMicrotask(() => c.onMessage(head));
  return c;
}

const WS_GUID = '258EAFA5-E914-47DA-95CA-C5AB0DC85B11';

export async function startFakeKubelet(tls: { cert: Buffer; key: Buffer; ca: Buffer }): Promise<FakeKubelet> {
  const followers = new Map<string, Set<ServerResponse>>();
  const k: FakeKubelet = {
    port: 0,
    calls: [],
    logs: new Map(),
    delayMs: 0,
    tunneledPortForward: false,
    connections: 0,
    dropReused: 0,
    emit(key, text) {
      for (const res of followers.get(key) ?? []) res.write(text);
    },
    followers: (key) => followers.get(key)?.size ?? 0,
    close: async () => {
      for (const set of followers.values()) for (const res of set) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
  const used = new WeakSet<object>();
  const server: Server = createServer(
    { cert: tls.cert, key: tls.key, ca: tls.ca, requestCert: true, rejectUnauthorized: true },
    (req, res) => {
      const user = String((req.socket as TLSSocket).getPeerCertificate().subject?.CN ?? '');
      k.calls.push({ method: req.method ?? '', path: req.url ?? '', user, headers: req.headers });
      if (used.has(req.socket) && k.dropReused > 0) {
        k.dropReused--;
        req.socket.destroy();
        return;
      }
      used.add(req.socket);
      const serve = () => serveHttp(k, followers, req, res);
      if (k.delayMs > 0) setTimeout(serve, k.delayMs);
      else serve();
    },
  );
  server.on('upgrade', (req: IncomingMessage, sock: Duplex, head: Buffer) => {
    const user = String((sock as TLSSocket).getPeerCertificate().subject?.CN ?? '');
    const offered = String(req.headers['sec-websocket-protocol'] ?? '')
      .split(',')
      .map((s) => s.trim());
    const path = req.url ?? '';
    const want = path.startsWith('/portForward/') ? 'SPDY/3.1+portforward.k8s.io' : 'v5.channel.k8s.io';
    k.calls.push({
      method: req.method ?? '',
      path,
      user,
      protocol: offered.includes(want) ? want : String(req.headers.upgrade),
      headers: req.headers,
    });
    // the `spdy` container's agent speaks only SPDY/3.1 for exec (kubectl then falls back to it)
    const spdyOnly = /^\/exec\/[^/]+\/[^/]+\/spdy\?/.test(path);
    if (spdyOnly && String(req.headers.upgrade) === 'SPDY/3.1') {
      k.calls[k.calls.length - 1]!.protocol = 'SPDY/3.1';
      sock.write(
        'HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: SPDY/3.1\r\nX-Stream-Protocol-Version: v4.channel.k8s.io\r\n\r\n',
      );
      if (head.length) sock.unshift(head);
      serveSpdyExec(sock, new URL(path, 'https://x'));
      return;
    }
    if (path.startsWith('/portForward/') && String(req.headers.upgrade) === 'SPDY/3.1') {
      const offeredSpdy = String(req.headers['x-stream-protocol-version'] ?? '')
        .split(',')
        .map((s) => s.trim());
      const call = k.calls[k.calls.length - 1]!;
      call.protocol = 'SPDY/3.1';
      if (!offeredSpdy.includes('portforward.k8s.io')) {
        sock.end(
          'HTTP/1.1 403 Forbidden\r\nContent-Type: text/plain\r\nContent-Length: 31\r\nConnection: close\r\n\r\nunsupported stream protocol(s)\n',
        );
        return;
      }
      sock.write(
        'HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: SPDY/3.1\r\nX-Stream-Protocol-Version: portforward.k8s.io\r\n\r\n',
      );
      const conn = rawConn(sock, head);
      if (k.portForward) k.portForward(conn, req);
      else sock.end();
      return;
    }
    if (path.startsWith('/portForward/') && !k.tunneledPortForward) {
      // upstream's wsstream handshake: the kubelet offers no tunneling protocol
      sock.end('HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\nConnection: close\r\n\r\n');
      return;
    }
    if (spdyOnly || String(req.headers.upgrade).toLowerCase() !== 'websocket' || !offered.includes(want)) {
      sock.end(
        'HTTP/1.1 400 Bad Request\r\nContent-Type: text/plain\r\nContent-Length: 27\r\nConnection: close\r\n\r\nunsupported upgrade request',
      );
      return;
    }
    const accept = createHash('sha1')
      .update(String(req.headers['sec-websocket-key']) + WS_GUID)
      .digest('base64');
    sock.write(
      `HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: ${accept}\r\nSec-WebSocket-Protocol: ${want}\r\n\r\n`,
    );
    const ws = new WsConn(sock, head);
    if (path.startsWith('/portForward/')) {
      if (k.portForward) k.portForward(ws, req);
      else ws.close();
      return;
    }
    runCommand(ws, new URL(path, 'https://x'));
  });
  server.on('secureConnection', () => {
    k.connections++;
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  k.port = (server.address() as { port: number }).port;
  return k;
}

function serveHttp(
  k: FakeKubelet,
  followers: Map<string, Set<ServerResponse>>,
  req: IncomingMessage,
  res: ServerResponse,
): void {
  const url = new URL(req.url ?? '/', 'https://x');
  if (url.pathname === '/healthz') {
    res.setHeader('content-type', 'text/plain; charset=utf-8');
    res.end('ok');
    return;
  }
  if (url.pathname === '/redirect') {
    res.statusCode = 302;
    res.setHeader('location', '/healthz');
    res.end();
    return;
  }
  if (url.pathname === '/echo') {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () =>
      res.end(
        JSON.stringify({
          method: req.method,
          path: url.pathname,
          query: url.search,
          headers: req.headers,
          body: Buffer.concat(chunks).toString(),
        }),
      ),
    );
    return;
  }
  const m = /^\/containerLogs\/([^/]+)\/([^/]+)\/([^/]+)$/.exec(url.pathname);
  if (!m) {
    res.statusCode = 404;
    res.end('404 page not found\n');
    return;
  }
  const [, ns, pod, container] = m;
  if (container === 'waiting') {
    res.statusCode = 400;
    res.end(`container "${container}" in pod "${pod}" is waiting to start: ContainerCreating`);
    return;
  }
  if (container === 'blast') return blast(res, Number(url.searchParams.get('limitBytes') ?? 0));
  const key = `${ns}/${pod}/${container}`;
  let lines = k.logs.get(key) ?? [];
  const tail = url.searchParams.get('tailLines');
  if (tail !== null) lines = lines.slice(Math.max(0, lines.length - Number(tail)));
  res.setHeader('content-type', 'text/plain');
  res.write(lines.map((l) => `${l}\n`).join(''));
  if (url.searchParams.get('follow') !== 'true') {
    res.end();
    return;
  }
  let set = followers.get(key);
  if (!set) followers.set(key, (set = new Set()));
  set.add(res);
  res.on('close', () => set!.delete(res));
}

/** The `blast` container: limitBytes of log as fast as the reader takes them (benchmarks). */
function blast(res: ServerResponse, total: number): void {
  const chunk = Buffer.alloc(64 * 1024, 'x\n');
  res.setHeader('content-type', 'text/plain');
  let left = total;
  const pump = () => {
    while (left > 0) {
      const part = left >= chunk.length ? chunk : chunk.subarray(0, left);
      left -= part.length;
      if (!res.write(part)) {
        res.once('drain', pump);
        return;
      }
    }
    res.end();
  };
  pump();
}

/** How long a scripted command "runs" before its exit status is sent (see runCommand). */
const PROCESS_RUNTIME_MS = 100;
/** How long a scripted command takes to start, before its first output (see runCommand). */
const PROCESS_START_MS = 50;

/** Channel ids of the remote-command WebSocket protocols. */
export const STDIN = 0,
  STDOUT = 1,
  STDERR = 2,
  ERROR = 3,
  CLOSE = 255;

function exitStatus(command: string[], code: number): string {
  if (code === 0) return JSON.stringify({ metadata: {}, status: 'Success' });
  return JSON.stringify({
    metadata: {},
    status: 'Failure',
    message: `command terminated with non-zero exit code: error executing command [${command.join(' ')}], exit code ${code}`,
    reason: 'NonZeroExitCode',
    details: { causes: [{ reason: 'ExitCode', message: String(code) }] },
  });
}

/**
 * The scripted "container": `sh -c 'exit N'`, `echo WORDS`, `cat` (stdin echoed to stdout
 * until stdin closes), and attach (a greeting, then stdin echoed).
 */
function runCommand(ws: WsConn, url: URL): void {
  const attach = url.pathname.startsWith('/attach/');
  const command = url.searchParams.getAll('command');
  // A process takes time to start and exit; a status sent in the same turn as the 101 can reach
  // kubectl before its WebSocket executor registered the error stream (client-go then logs
  // "Unknown stream id 3, discarding message" and exits 1), a race no real kubelet exposes.
  const finish = (code: number) => {
    setTimeout(() => {
      ws.send(Buffer.concat([Buffer.from([ERROR]), Buffer.from(exitStatus(command, code))]));
      ws.close();
    }, PROCESS_RUNTIME_MS);
  };
  const out = (text: string | Buffer) => ws.send(Buffer.concat([Buffer.from([STDOUT]), Buffer.from(text)]));
  // The same race for output: client-go's readDemuxLoop runs beside the goroutine that
  // registers the streams and discards a frame for a stream not yet registered, so output
  // sent with the 101 was lost now and then (`kubectl exec p1 -- echo` exiting 0 with no
  // output). A process's first output comes after it started, so it does here too.
  // (a promise: output queued before the start follows it, in order)
  const begun = new Promise<void>((r) => setTimeout(r, PROCESS_START_MS));
  const started = (run: () => void) => void begun.then(run);
  const exit = /^exit (\d+)$/.exec(command[0] === 'sh' && command[1] === '-c' ? (command[2] ?? '') : '');
  if (exit) return finish(Number(exit[1]));
  if (command[0] === 'echo') {
    return started(() => {
      out(command.slice(1).join(' ') + '\n');
      finish(0);
    });
  }
  if (command[0] === 'cat' || attach) {
    if (attach) started(() => out('attached\n'));
    ws.onMessage = (m) => {
      if (m[0] === STDIN) started(() => out(m.subarray(1)));
      else if (m[0] === CLOSE && m[1] === STDIN) started(() => finish(0));
    };
    return;
  }
  started(() => {
    ws.send(
      Buffer.concat([
        Buffer.from([STDERR]),
        Buffer.from(`exec: "${command[0]}": executable file not found in $PATH\n`),
      ]),
    );
    finish(127);
  });
}
