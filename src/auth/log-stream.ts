/**
 * pods/log served by the TLS front (upstream LocationStreamer). The front took the client's
 * connection over, the filter chain authenticated, authorized and admitted the request, and
 * the connect handler resolved the pod, container, options and node agent; its answer is the
 * directive (src/kubelet/upgrade-directive.ts) with the response headers it would have sent.
 * This thread then asks the agent with the kubelet client (pooled keep-alive connections, the
 * same dial and head timeouts and errors) and writes the agent's body to the client socket as
 * it arrives, chunked, with stream backpressure: the agent's response pauses while the client
 * socket is full. Bytes no longer cross the front thread, uWS and the internal socket.
 *
 * The connection closes after the log (`Connection: close`): requests a client pipelines
 * behind a log are not served, as for upgrades (clients do not pipeline; Go never does).
 */
import { STATUS_CODES, type IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { orderedStatus, type Status } from '../api/status.js';
import { agentResponseError, readAgentError, type KubeletClient } from '../kubelet/client.js';
import { UPGRADE_DIRECTIVE_HEADER, type UpgradeTarget } from '../kubelet/upgrade-directive.js';

const CRLF = Buffer.from('\r\n');
const LAST_CHUNK = '0\r\n\r\n';
/** headers of the handler's answer that describe its (empty) body or the hand-off, not the log */
const NOT_COPIED = new Set(['content-length', 'content-type', 'transfer-encoding', 'connection', UPGRADE_DIRECTIVE_HEADER]);

/** A response head: the status line, the handler's headers (audit id, cache control...), then `extra`. */
export function responseHead(handlerHead: string, code: number, extra: string[]): string {
  let out = `HTTP/1.1 ${code} ${STATUS_CODES[code] ?? 'Unknown'}\r\n`;
  for (const line of handlerHead.split('\r\n').slice(1)) {
    const colon = line.indexOf(':');
    if (colon <= 0 || NOT_COPIED.has(line.slice(0, colon).trim().toLowerCase())) continue;
    out += line + '\r\n';
  }
  return out + extra.map((h) => h + '\r\n').join('') + '\r\n';
}

/** Answers a Status (JSON, as sendStatus without a negotiated encoding) and closes. */
function endWithStatus(client: Duplex, handlerHead: string, status: Status): void {
  if (client.destroyed) return;
  const body = JSON.stringify(orderedStatus(status)) + '\n';
  client.end(responseHead(handlerHead, status.code, ['Content-Type: application/json', `Content-Length: ${Buffer.byteLength(body)}`, 'Connection: close']) + body);
}

/** Streams the log `t` names from its agent to `client`; `handlerHead` is the handler's answer head. */
export function streamLog(client: Duplex, handlerHead: string, t: UpgradeTarget, kubelet: KubeletClient): void {
  const pod = t.log?.pod ?? '';
  const req = kubelet.send({ host: t.host, port: t.port }, { method: 'GET', path: t.path, insecure: t.insecure }, {
    response: (res) => {
      const code = res.statusCode ?? 500;
      if (code < 200 || code > 206) {
        readAgentError(res, (text) => endWithStatus(client, handlerHead, agentResponseError(code, text, 'pods/log', pod).status), () => client.destroy());
        return;
      }
      pipeChunked(res, client, responseHead(handlerHead, 200, ['Content-Type: text/plain', 'Transfer-Encoding: chunked', 'Connection: close']));
    },
    error: (e) => endWithStatus(client, handlerHead, e.status),
  });
  client.once('close', () => req.destroy());
  req.end();
}

/**
 * The agent's body to the client in HTTP/1.1 chunks, one write per agent chunk (a single TLS
 * record batch). A body cut short (the agent went away) cuts the client's too: no last chunk,
 * so the client sees the log as truncated, as upstream's copy loop does.
 */
function pipeChunked(res: IncomingMessage, client: Duplex, head: string): void {
  if (client.destroyed) { res.destroy(); return; }
  client.write(head);
  res.on('data', (c: Buffer) => {
    if (client.write(Buffer.concat([Buffer.from(`${c.length.toString(16)}\r\n`), c, CRLF]))) return;
    res.pause();
    client.once('drain', () => res.resume());
  });
  res.once('end', () => client.end(LAST_CHUNK));
  res.once('close', () => { if (!res.complete) client.destroy(); });
  client.once('close', () => res.destroy());
}
