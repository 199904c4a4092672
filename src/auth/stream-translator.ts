/**
 * Upstream's StreamTranslator on the TLS front: a client speaking the WebSocket remote-command
 * protocol (`v5.channel.k8s.io`, or v4) for exec/attach, and a node agent that refused the
 * WebSocket upgrade (one that only speaks SPDY/3.1). The front answers the client's WebSocket
 * upgrade itself, opens the agent's SPDY/3.1 upgrade (`v4.channel.k8s.io`), creates the
 * streams client-go would (error, then stdin, stdout, stderr as the query asks, resize with a
 * tty), and moves bytes between WebSocket channels and SPDY streams: channel 0 → stdin,
 * 4 → resize, 255 [0] (v5 close of stdin) → FIN on stdin; stdout, stderr and error → channels
 * 1, 2, 3. When the error stream ends (its Status carries the exit code) the WebSocket closes.
 * Header blocks are zlib stored blocks (no dictionary, so any SPDY/3 reader inflates them);
 * SPDY flow control is not used (the kubelet's spdystream does not enforce it).
 */
import { createHash } from 'node:crypto';
import type { Writable, Duplex } from 'node:stream';
import { frameSink, NORMAL_CLOSE, OP_PONG, WsReader, wsFrame } from './ws-framing.js';

const WS_GUID = '258EAFA5-E914-47DA-95CA-C5AB0DC85B11';
const SYN_STREAM = 1,
  RST_STREAM = 3,
  PING = 6,
  GOAWAY = 7;
const STDIN = 0,
  STDOUT = 1,
  STDERR = 2,
  ERROR = 3,
  RESIZE = 4,
  CLOSE = 255;

/** The WebSocket subprotocol the front speaks with this client, or undefined when it cannot translate. */
export function translatableProtocol(clientHead: string, agentPath: string): string | undefined {
  if (!/^\/(exec|attach)\//.test(agentPath) || !/\r\nupgrade:\s*websocket\r\n/i.test(clientHead + '\r\n'))
    return undefined;
  const offered = (/\r\nsec-websocket-protocol:([^\r]*)/i.exec(clientHead)?.[1] ?? '').split(',').map((p) => p.trim());
  return ['v5.channel.k8s.io', 'v4.channel.k8s.io'].find((p) => offered.includes(p));
}

/** The 101 the front answers the client's WebSocket upgrade with (no Sec-WebSocket-Protocol when `protocol` is empty). */
export function webSocketAccept(clientHead: string, protocol: string): string {
  const key = /\r\nsec-websocket-key:\s*([^\r]*)/i.exec(clientHead)?.[1]?.trim() ?? '';
  const accept = createHash('sha1')
    .update(key + WS_GUID)
    .digest('base64');
  const chosen = protocol ? `Sec-WebSocket-Protocol: ${protocol}\r\n` : '';
  return `HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: ${accept}\r\n${chosen}\r\n`;
}

/** The SPDY upgrade request for the agent (client-go's, offering v4 only). */
export function spdyUpgradeHead(path: string, host: string): string {
  return `POST ${path} HTTP/1.1\r\nHost: ${host}\r\nConnection: Upgrade\r\nUpgrade: SPDY/3.1\r\nX-Stream-Protocol-Version: v4.channel.k8s.io\r\nContent-Length: 0\r\n\r\n`;
}

/** One SPDY/3 name/value header block as zlib stored blocks (the zlib header only in the session's first). */
export function headerBlock(pairs: [string, string][], first: boolean): Buffer {
  const parts: Buffer[] = [u32(pairs.length)];
  for (const [n, v] of pairs) parts.push(u32(n.length), Buffer.from(n), u32(Buffer.byteLength(v)), Buffer.from(v));
  const data = Buffer.concat(parts);
  const stored = Buffer.from([0, data.length & 255, data.length >> 8, ~data.length & 255, (~data.length >> 8) & 255]);
  return Buffer.concat([
    first ? Buffer.from([0x78, 0x01]) : Buffer.alloc(0),
    stored,
    data,
    Buffer.from([0, 0, 0, 0xff, 0xff]),
  ]);
}

function u32(n: number): Buffer {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(n >>> 0);
  return b;
}

function control(type: number, flags: number, payload: Buffer): Buffer {
  const h = Buffer.from([0x80, 0x03, 0x00, type, 0, 0, 0, 0]);
  h.writeUInt32BE((((flags & 255) << 24) | payload.length) >>> 0, 4);
  return Buffer.concat([h, payload]);
}

function dataFrame(id: number, fin: boolean, data: Buffer): Buffer {
  const h = Buffer.alloc(8);
  h.writeUInt32BE(id & 0x7fffffff, 0);
  h.writeUInt32BE((((fin ? 1 : 0) << 24) | data.length) >>> 0, 4);
  return Buffer.concat([h, data]);
}

/**
 * Opens one SPDY stream per channel the query asks for (error first, as the kubelet expects) and
 * maps channels to stream ids and back.
 */
function openStreams(
  agent: Duplex,
  query: URLSearchParams,
): { idOf: Map<number, number>; channelOf: Map<number, number> } {
  const kinds: [string, number][] = [['error', ERROR]];
  if (query.get('input') === '1') kinds.push(['stdin', STDIN]);
  if (query.get('output') === '1') kinds.push(['stdout', STDOUT]);
  if (query.get('error') === '1') kinds.push(['stderr', STDERR]);
  if (query.get('tty') === '1') kinds.push(['resize', RESIZE]);
  const idOf = new Map<number, number>(),
    channelOf = new Map<number, number>();
  kinds.forEach(([kind, channel], i) => {
    const id = 2 * i + 1;
    idOf.set(channel, id);
    channelOf.set(id, channel);
    const p = Buffer.concat([u32(id), u32(0), Buffer.from([0, 0]), headerBlock([['streamtype', kind]], i === 0)]);
    agent.write(control(SYN_STREAM, 0, p));
  });
  return { idOf, channelOf };
}

/**
 * Runs the translation once the agent answered its SPDY upgrade with 101 (`agent` carries SPDY
 * frames from `rest` on). Returns the writable the client's WebSocket bytes go to.
 */
export function translate(
  client: Duplex,
  agent: Duplex,
  rest: Buffer,
  query: URLSearchParams,
  protocol: string,
): Writable {
  const { idOf, channelOf } = openStreams(agent, query);
  const v5 = protocol.startsWith('v5');
  let done = false;
  const finish = () => {
    if (done) return;
    done = true;
    if (!client.destroyed) client.end(NORMAL_CLOSE);
    agent.destroy();
  };
  const toClient = (b: Buffer) => {
    if (!client.write(b)) {
      agent.pause();
      client.once('drain', () => agent.resume());
    }
  };
  let sbuf: Buffer = Buffer.alloc(0);
  const onAgent = (chunk: Buffer) => {
    sbuf = sbuf.length ? Buffer.concat([sbuf, chunk]) : chunk;
    while (sbuf.length >= 8 && !done) {
      const len = sbuf.readUInt32BE(4) & 0xffffff;
      if (sbuf.length < 8 + len) break;
      const frame = sbuf.subarray(0, 8 + len);
      sbuf = sbuf.subarray(8 + len);
      if (frame[0]! & 0x80) {
        const type = frame.readUInt16BE(2);
        if (type === PING) agent.write(Buffer.from(frame));
        else if (type === RST_STREAM || type === GOAWAY) finish();
        continue;
      }
      const channel = channelOf.get(frame.readUInt32BE(0) & 0x7fffffff);
      if (channel === undefined) continue;
      if (len > 0) toClient(wsFrame(Buffer.concat([Buffer.from([channel]), frame.subarray(8)])));
      // the error stream's end is the command's: its Status (if any) was just sent
      if (channel === ERROR && frame[4]! & 1) finish();
    }
  };
  agent.on('data', onAgent);
  agent.on('end', finish);
  agent.on('error', finish);
  client.on('close', () => {
    done = true;
    agent.destroy();
  });
  if (rest.length) onAgent(rest);
  return clientFrames(client, agent, idOf, v5);
}

/** Parses the client's masked WebSocket frames into SPDY data (stdin, resize, stdin close). */
function clientFrames(client: Duplex, agent: Duplex, idOf: Map<number, number>, v5: boolean): Writable {
  const message = (m: Buffer) => {
    if (m.length === 0) return;
    const channel = m[0]!;
    if (v5 && channel === CLOSE && m.length > 1) {
      const id = idOf.get(m[1]!);
      if (id !== undefined) agent.write(dataFrame(id, true, Buffer.alloc(0)));
      return;
    }
    const id = idOf.get(channel);
    if (id !== undefined && (channel === STDIN || channel === RESIZE)) agent.write(dataFrame(id, false, m.subarray(1)));
  };
  const reader = new WsReader({
    message,
    ping: (payload) => client.write(wsFrame(payload, OP_PONG)),
    close: () => {
      client.end(NORMAL_CLOSE);
      agent.destroy();
    },
  });
  return frameSink(reader, agent);
}
