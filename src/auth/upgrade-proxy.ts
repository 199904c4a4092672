/**
 * Streaming upgrades on the TLS front (upstream UpgradeAwareHandler): exec, attach and
 * portforward requests with an `Upgrade` header (WebSocket or SPDY/3.1). The head goes, on a
 * connection of its own, to the internal uWS listener, where the filter chain authenticates and
 * authorizes it and the connect handler resolves the node agent. Its answer is either an
 * ordinary response (an error: passed to the client, then the connection closes) or the
 * upgrade directive (src/kubelet/upgrade-directive.ts): then this thread dials the agent over
 * TLS with the kubelet client certificate, sends it the client's head with the agent's path,
 * and pipes raw bytes both ways with stream backpressure. The agent's own answer (101 and its
 * frames, or its error) reaches the client unchanged, so any protocol the client and the agent
 * share works: WebSocket v5.channel.k8s.io, SPDY/3.1, SPDY tunneled over WebSocket.
 * A pods/log GET is taken over the same way; its directive has the front stream the log
 * (src/auth/log-stream.ts).
 */
import { connect as netConnect } from 'node:net';
import type { Duplex, Writable } from 'node:stream';
import type { KubeletDialMaterial } from '../kubelet/client.js';
import { dialMessage } from '../kubelet/client.js';
import {
  TAKEN_OVER_HEADER,
  UPGRADE_DIRECTIVE_HEADER,
  decodeUpgradeDirective,
  type UpgradeTarget,
} from '../kubelet/upgrade-directive.js';
import { streamLog } from './log-stream.js';
import { dialAgent } from './agent-dial.js';
import { spdyUpgradeHead, translatableProtocol, translate, webSocketAccept } from './stream-translator.js';
import {
  MISSING_UPGRADE_HEADERS,
  spdyTunnelHead,
  tunnel,
  tunnelAccept,
  tunneledProtocols,
} from './portforward-tunnel.js';
import { FRONT_HEADER_PREFIX } from './x509.js';

const HEAD_END = Buffer.from('\r\n\r\n');
const CONNECTION_CLOSE = Buffer.from('Connection: close\r\n');
const MAX_RESPONSE_HEAD = 64 * 1024;
/** client bytes held while the agent is dialed before the client is paused */
const MAX_PENDING = 1024 * 1024;

export interface UpgradeProxyOptions {
  /** unix socket of the internal uWS listener */
  upstreamPath: string;
  secretHex: string;
  /** header name the front injects (dropped from what the agent sees) */
  identityHeader: string;
  kubelet?: KubeletDialMaterial;
}

/**
 * Whether a request line is a followed pods/log GET (`follow` true as strconv.ParseBool reads
 * it), which the front takes over as it does upgrades: a stream of unbounded length is piped
 * here. A bounded log stays an ordinary request, served through the kubelet client's pooled
 * connections.
 */
export function isFollowedLogRequest(requestLine: string): boolean {
  const m = POD_LOG.exec(requestLine);
  return m !== null && TRUE.has(new URLSearchParams(m[1] ?? '').get('follow') ?? '');
}
const POD_LOG = /^GET \/api\/v1\/namespaces\/[^/?# ]+\/pods\/[^/?# ]+\/log(?:\?([^ ]*))? HTTP\/1\.[01]$/;
const TRUE = new Set(['true', '1', 't', 'T', 'TRUE', 'True']);

/** The head as the internal listener gets it: marked as taken over (with the secret), so a directive may answer it. */
function markTakenOver(head: Buffer, secretHex: string): Buffer {
  const eol = head.indexOf('\r\n');
  return Buffer.concat([
    head.subarray(0, eol + 2),
    Buffer.from(`${TAKEN_OVER_HEADER}: ${secretHex}\r\n`, 'latin1'),
    head.subarray(eol + 2),
  ]);
}

/** Where the client's bytes after the upgrade head go. */
export interface Tunnel {
  write(b: Buffer): void;
}

/** Collects a response head (to the blank line, at most MAX_RESPONSE_HEAD bytes), then hands it over once. */
function readHead(from: Duplex, tooLong: () => void, done: (buf: Buffer, end: number) => void): void {
  let buf = Buffer.alloc(0);
  const onHead = (chunk: Buffer) => {
    buf = Buffer.concat([buf, chunk]);
    const end = buf.indexOf(HEAD_END);
    if (end < 0) {
      if (buf.length > MAX_RESPONSE_HEAD) tooLong();
      return;
    }
    from.off('data', onHead);
    done(buf, end);
  };
  from.on('data', onHead);
}

/** Starts serving one upgrade request whose (rewritten) head is `head`. */
export function startUpgrade(client: Duplex, head: Buffer, o: UpgradeProxyOptions): Tunnel {
  let backend: Writable | undefined;
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  let closed = false;
  /** a pods/log stream: the client's further bytes are not read by anyone */
  let discard = false;
  const internal = netConnect({ path: o.upstreamPath });
  const finish = () => {
    closed = true;
    internal.destroy();
    backend?.destroy();
  };
  client.on('close', finish);
  client.on('error', finish);
  client.on('end', () => backend?.end());
  internal.on('error', () => {
    if (!closed) client.destroy();
  });
  internal.write(markTakenOver(head, o.secretHex));
  readHead(
    internal,
    () => client.destroy(),
    (buf, end) => {
      const headText = buf.subarray(0, end).toString('latin1');
      const target = directiveOf(headText, o.secretHex);
      if (!target) return passResponse(client, internal, buf, end + 4, headText);
      internal.destroy();
      if (target.log) {
        discard = true;
        pending = [];
        client.resume();
        return streamLog(client, headText, target, o.kubelet);
      }
      dial(client, head, target, o, (b) => {
        backend = b;
        for (const p of pending) b.write(p);
        pending = [];
        client.resume();
        b.on('drain', () => client.resume());
      });
    },
  );
  return {
    write(b: Buffer) {
      if (discard) return;
      if (backend) {
        if (!backend.write(b)) client.pause();
        return;
      }
      pending.push(Buffer.from(b));
      pendingBytes += b.length;
      if (pendingBytes > MAX_PENDING) client.pause();
    },
  };
}

function directiveOf(head: string, secretHex: string): UpgradeTarget | undefined {
  for (const line of head.split('\r\n').slice(1)) {
    const colon = line.indexOf(':');
    if (colon > 0 && line.slice(0, colon).trim().toLowerCase() === UPGRADE_DIRECTIVE_HEADER)
      return decodeUpgradeDirective(secretHex, line.slice(colon + 1).trim());
  }
  return undefined;
}

/**
 * An ordinary answer (401, 403, 404, 400...): its head and Content-Length bytes, then close;
 * a streamed answer (an upgrade request to another path, e.g. a watch) is piped to its end.
 */
function passResponse(client: Duplex, internal: Duplex, received: Buffer, bodyStart: number, head: string): void {
  // the connection closes after this answer: say so, so the client does not reuse it
  const eol = head.indexOf('\r\n');
  const at = eol < 0 ? head.length + 2 : eol + 2;
  const buf = /\r\nconnection:/i.test(head)
    ? received
    : Buffer.concat([received.subarray(0, at), CONNECTION_CLOSE, received.subarray(at)]);
  bodyStart += buf.length - received.length;
  if (/\r\ntransfer-encoding:\s*chunked/i.test(head)) {
    client.write(buf);
    internal.pipe(client);
    return;
  }
  const m = /\r\ncontent-length:\s*(\d+)/i.exec(head);
  let left = m ? Number(m[1]) : 0;
  const first = buf.subarray(0, Math.min(buf.length, bodyStart + left));
  left -= first.length - bodyStart;
  client.write(first);
  if (left <= 0) {
    internal.destroy();
    client.end();
    return;
  }
  internal.on('data', (c: Buffer) => {
    const part = c.subarray(0, left);
    left -= part.length;
    client.write(part);
    if (left <= 0) {
      internal.destroy();
      client.end();
    }
  });
  internal.on('end', () => client.end());
}

/** The client's head as the agent sees it: the agent's path, its Host, no credentials. */
function agentHead(head: Buffer, t: UpgradeTarget, identityHeader: string): Buffer {
  const lines = head.toString('latin1').split('\r\n');
  const method = lines[0]!.split(' ')[0];
  const host = t.host.includes(':') ? `[${t.host}]:${t.port}` : `${t.host}:${t.port}`;
  let out = `${method} ${t.path} HTTP/1.1\r\nHost: ${host}\r\n`;
  for (const line of lines.slice(1)) {
    if (line === '') continue;
    const name = line
      .slice(0, Math.max(0, line.indexOf(':')))
      .trim()
      .toLowerCase();
    // the front's own headers carry the per-process secret: never shown to an agent
    if (name === 'host' || name === 'authorization' || name === identityHeader || name.startsWith(FRONT_HEADER_PREFIX))
      continue;
    if (name.startsWith('impersonate-') || name.startsWith('x-remote-')) continue;
    out += line + '\r\n';
  }
  return Buffer.from(out + '\r\n', 'latin1');
}

function dial(
  client: Duplex,
  head: Buffer,
  t: UpgradeTarget,
  o: UpgradeProxyOptions,
  ready: (b: Writable) => void,
): void {
  const tunneled = tunneledProtocols(head.toString('latin1'), t.path);
  if (tunneled.length) return dialTunnel(client, head, t, o, tunneled, ready);
  open(client, t, o, (sock) => {
    sock.write(agentHead(head, t, o.identityHeader));
    const protocol = translatableProtocol(head.toString('latin1'), t.path);
    if (!protocol) {
      sock.pipe(client);
      ready(sock);
      return;
    }
    // a WebSocket exec/attach: an agent refusing it may still speak SPDY (upstream StreamTranslator)
    agentAnswer(sock, client, (code, received) => {
      if (code === 101) {
        client.write(received);
        sock.pipe(client);
        ready(sock);
        return;
      }
      sock.destroy();
      open(client, t, o, (spdy) => {
        spdy.write(spdyUpgradeHead(t.path, hostOf(t)));
        agentAnswer(spdy, client, (spdyCode, answer, rest) => {
          if (spdyCode !== 101) {
            client.write(answer);
            spdy.pipe(client);
            ready(spdy);
            return;
          }
          client.write(webSocketAccept(head.toString('latin1'), protocol));
          ready(translate(client, spdy, rest, new URL(t.path, 'https://agent').searchParams, protocol));
        });
      });
    });
  });
}

/** A WebSocket-tunneled port-forward: the agent is asked for SPDY (src/auth/portforward-tunnel.ts). */
function dialTunnel(
  client: Duplex,
  head: Buffer,
  t: UpgradeTarget,
  o: UpgradeProxyOptions,
  protocols: string[],
  ready: (b: Writable) => void,
): void {
  open(client, t, o, (sock) => {
    sock.write(spdyTunnelHead(agentHead(head, t, o.identityHeader), protocols));
    agentAnswer(sock, client, (code, received, rest) => {
      if (code !== 101) {
        client.write(received);
        sock.pipe(client);
        ready(sock);
        return;
      }
      const accept = tunnelAccept(
        head.toString('latin1'),
        received.subarray(0, received.length - rest.length).toString('latin1'),
      );
      if (!accept) {
        sock.destroy();
        client.end(MISSING_UPGRADE_HEADERS);
        return;
      }
      client.write(accept);
      ready(tunnel(client, sock, rest));
    });
  });
}

/** The agent's response head: its status code, the bytes read so far, and those after the head. */
function agentAnswer(sock: Duplex, client: Duplex, done: (code: number, received: Buffer, rest: Buffer) => void): void {
  let buf: Buffer = Buffer.alloc(0);
  const onData = (c: Buffer) => {
    buf = buf.length ? Buffer.concat([buf, c]) : c;
    const end = buf.indexOf(HEAD_END);
    if (end < 0) {
      if (buf.length > MAX_RESPONSE_HEAD) {
        sock.destroy();
        client.destroy();
      }
      return;
    }
    sock.off('data', onData);
    sock.pause();
    const code = Number(/^HTTP\/1\.[01] (\d{3})/.exec(buf.subarray(0, 16).toString('latin1'))?.[1] ?? 0);
    done(code, buf, buf.subarray(end + 4));
    sock.resume();
  };
  sock.on('data', onData);
}

const hostOf = (t: UpgradeTarget) => (t.host.includes(':') ? `[${t.host}]:${t.port}` : `${t.host}:${t.port}`);

/** Dials the agent; a failed dial answers the client upstream's 500 `error dialing backend`. */
function open(client: Duplex, t: UpgradeTarget, o: UpgradeProxyOptions, connected: (sock: Duplex) => void): void {
  const sock = dialAgent(t, o.kubelet);
  const timeoutMs = o.kubelet?.timeoutMs ?? 5_000;
  const timer = setTimeout(
    () => sock.destroy(Object.assign(new Error('i/o timeout'), { code: 'ETIMEDOUT' })),
    timeoutMs,
  );
  let isConnected = false;
  sock.once('secureConnect', () => {
    isConnected = true;
    clearTimeout(timer);
    sock.setNoDelay(true);
    connected(sock);
  });
  sock.on('error', (e: NodeJS.ErrnoException) => {
    clearTimeout(timer);
    if (client.destroyed) return;
    // once piping, a broken agent connection breaks the client's (as a dropped TCP stream would)
    if (isConnected) {
      client.destroy();
      return;
    }
    const message = `error dialing backend: ${dialMessage(t, e)}`;
    const body = JSON.stringify({
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message,
      code: 500,
    });
    client.end(
      `HTTP/1.1 500 Internal Server Error\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  });
}
