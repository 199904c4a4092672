/**
 * Upstream's TunnelingHandler (apimachinery pkg/util/proxy/streamtunnel.go) on the TLS front.
 * kubectl v1.32 sends port-forward as a WebSocket whose subprotocol `SPDY/3.1+portforward.k8s.io`
 * says its binary messages carry a SPDY/3.1 byte stream; a kubelet speaks only plain SPDY on
 * /portForward. As upstream, the front never offers the agent the WebSocket: it asks for a SPDY
 * upgrade (`POST`, `Upgrade: SPDY/3.1`, one `X-Stream-Protocol-Version` per tunneled protocol
 * with the `SPDY/3.1+` prefix removed, the WebSocket headers dropped). On the agent's 101 it
 * answers the client's WebSocket upgrade with the agent's chosen protocol re-prefixed, then
 * moves bytes: each chunk read from the agent goes out as one binary message (upstream's
 * TunnelingConnection writes one message per Write), the payloads of the client's binary
 * messages go to the agent unchanged. Any other answer of the agent reaches the client as is
 * (upstream replays it on the hijacked connection).
 */
import type { Writable, Duplex } from 'node:stream';
import { webSocketAccept } from './stream-translator.js';
import { relay } from './relay.js';
import { frameSink, NORMAL_CLOSE, OP_BINARY, OP_PONG, WsReader, wsFrame, wsHeader } from './ws-framing.js';

const TUNNEL_PREFIX = 'SPDY/3.1+';
/** request headers of the client's WebSocket upgrade that the agent's SPDY upgrade does not carry */
const WEBSOCKET_ONLY = new Set([
  'upgrade',
  'sec-websocket-protocol',
  'sec-websocket-key',
  'sec-websocket-version',
  'sec-websocket-extensions',
  'x-stream-protocol-version',
  'content-length',
  'transfer-encoding',
  'connection',
]);

/**
 * The SPDY protocols a WebSocket port-forward tunnels (upstream spdyProtocolsFromWebsocketProtocols:
 * `SPDY/3.1+…k8s.io`, prefix removed); empty when the request is not one.
 */
export function tunneledProtocols(clientHead: string, agentPath: string): string[] {
  if (!agentPath.startsWith('/portForward/') || !/\r\nupgrade:\s*websocket\s*(?:\r\n|$)/i.test(clientHead + '\r\n'))
    return [];
  const offered = [...clientHead.matchAll(/\r\nsec-websocket-protocol:([^\r]*)/gi)]
    .flatMap((m) => m[1]!.split(','))
    .map((p) => p.trim());
  return offered
    .filter((p) => p.startsWith(TUNNEL_PREFIX) && p.endsWith('k8s.io'))
    .map((p) => p.slice(TUNNEL_PREFIX.length));
}

/** The agent's SPDY upgrade request made from the client's head as the agent would see it (path, Host, no credentials). */
export function spdyTunnelHead(agentHead: Buffer, protocols: string[]): Buffer {
  const lines = agentHead.toString('latin1').split('\r\n');
  const path = lines[0]!.split(' ')[1];
  let out = `POST ${path} HTTP/1.1\r\n`;
  for (const line of lines.slice(1)) {
    if (
      line === '' ||
      WEBSOCKET_ONLY.has(
        line
          .slice(0, Math.max(0, line.indexOf(':')))
          .trim()
          .toLowerCase(),
      )
    )
      continue;
    out += line + '\r\n';
  }
  out +=
    'Connection: Upgrade\r\nUpgrade: SPDY/3.1\r\n' +
    protocols.map((p) => `X-Stream-Protocol-Version: ${p}\r\n`).join('') +
    'Content-Length: 0\r\n\r\n';
  return Buffer.from(out, 'latin1');
}

/**
 * The 101 for the client once the agent switched to SPDY (its X-Stream-Protocol-Version, if
 * any, re-prefixed as the WebSocket subprotocol); undefined when the agent's 101 does not say
 * `Connection: Upgrade` and `Upgrade: SPDY/3.1` (upstream then answers 500).
 */
export function tunnelAccept(clientHead: string, agentHead: string): string | undefined {
  const header = (name: string) => new RegExp(`\\r\\n${name}:([^\\r]*)`, 'i').exec(agentHead)?.[1]?.trim() ?? '';
  if (!header('connection').toLowerCase().includes('upgrade') || !header('upgrade').toLowerCase().includes('spdy/3.1'))
    return undefined;
  const chosen = header('x-stream-protocol-version');
  return webSocketAccept(clientHead, chosen ? TUNNEL_PREFIX + chosen : '');
}

/** upstream's answer (http.Error) when the agent's 101 is not a SPDY upgrade */
export const MISSING_UPGRADE_HEADERS =
  'HTTP/1.1 500 Internal Server Error\r\nContent-Type: text/plain; charset=utf-8\r\nX-Content-Type-Options: nosniff\r\n' +
  'Content-Length: 55\r\nConnection: close\r\n\r\nunable to upgrade: missing upgrade headers in response\n';

/**
 * Runs the tunnel once the agent answered 101 (`rest`: its SPDY bytes that came with the head).
 * Returns the writable the client's WebSocket bytes go to (backpressure: its callback waits
 * for the agent to drain).
 */
export function tunnel(client: Duplex, agent: Duplex, rest: Buffer): Writable {
  let done = false;
  const finish = () => {
    if (done) return;
    done = true;
    if (!client.destroyed && !client.writableEnded) client.end(NORMAL_CLOSE);
    agent.destroy();
  };
  if (rest.length) client.write(Buffer.concat([wsHeader(rest.length, OP_BINARY), rest]));
  // each read one binary message, head and payload written together (src/auth/relay.ts)
  relay(agent, client, (n) => wsHeader(n, OP_BINARY));
  agent.on('end', finish);
  agent.on('error', finish);
  client.on('close', () => {
    done = true;
    agent.destroy();
  });
  const reader = new WsReader({
    message: (payload, opcode) => {
      if (opcode === OP_BINARY && payload.length) agent.write(payload);
    },
    ping: (payload) => client.write(wsFrame(payload, OP_PONG)),
    close: finish,
  });
  return frameSink(reader, agent);
}
