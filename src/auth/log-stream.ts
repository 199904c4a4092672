/**
 * pods/log served by the TLS front (upstream LocationStreamer). The front took the client's
 * connection over, the filter chain authenticated, authorized and admitted the request, and
 * the connect handler resolved the pod, container, options and node agent; its answer is the
 * directive (src/kubelet/upgrade-directive.ts) with the response headers it would have sent.
 * This thread then asks the agent itself (kubelet client certificate, `Connection: close`)
 * and, once the agent's head says 2xx, pipes the agent's body bytes to the client socket
 * unchanged, with its framing (chunked, or a length), with backpressure (src/auth/relay.ts:
 * the reads of one I/O turn written together, the agent paused while 1 MiB waits).
 * No byte crosses the front thread, uWS or the internal socket, and the body is neither
 * parsed nor re-framed: a log costs this thread one TLS decryption and one encryption.
 *
 * Errors are the kubelet client's (src/kubelet/client.ts): the dial error, the timeout
 * awaiting the agent's head, a non-2xx answer as upstream's Status. The connection to the
 * client closes after the log (`Connection: close`): requests a client pipelines behind a log
 * are not served, as for upgrades (clients do not pipeline; Go never does). The agent
 * connection is not pooled: one TLS handshake per log.
 */
import { STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import { orderedStatus, type Status } from '../api/status.js';
import { KubeletClient, agentResponseError, dialMessage, type KubeletDialMaterial } from '../kubelet/client.js';
import { plainError } from '../kubelet/location.js';
import { UPGRADE_DIRECTIVE_HEADER, type UpgradeTarget } from '../kubelet/upgrade-directive.js';
import { dialAgent } from './agent-dial.js';
import { relay } from './relay.js';

const HEAD_END = Buffer.from('\r\n\r\n');
const MAX_AGENT_HEAD = 64 * 1024;
/** the most of a failed answer's body kept for its Status (as the kubelet client) */
const MAX_ERROR_BODY = 4096;
/** headers of the handler's answer that describe its (empty) body or the hand-off, not the log */
const NOT_COPIED = new Set([
  'content-length',
  'content-type',
  'transfer-encoding',
  'connection',
  UPGRADE_DIRECTIVE_HEADER,
]);

/** A response head: the status line, the handler's headers (audit id, flow schema...), then `extra`. */
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
  if (client.destroyed || client.writableEnded) return;
  const body = JSON.stringify(orderedStatus(status)) + '\n';
  client.end(
    responseHead(handlerHead, status.code, [
      'Content-Type: application/json',
      `Content-Length: ${Buffer.byteLength(body)}`,
      'Connection: close',
    ]) + body,
  );
}

/** The agent's response head: its code and the framing of its body. */
export interface AgentHead {
  code: number;
  chunked: boolean;
  length?: number;
}

export function parseAgentHead(text: string): AgentHead | undefined {
  const lines = text.split('\r\n');
  const m = /^HTTP\/1\.[01] (\d{3})(?: |$)/.exec(lines[0] ?? '');
  if (!m) return undefined;
  const head: AgentHead = { code: Number(m[1]), chunked: false };
  for (const line of lines.slice(1)) {
    const colon = line.indexOf(':');
    const name = line.slice(0, Math.max(0, colon)).trim().toLowerCase();
    const value = line.slice(colon + 1).trim();
    if (name === 'transfer-encoding') head.chunked = /(?:^|,)\s*chunked\s*$/i.test(value);
    else if (name === 'content-length' && /^\d{1,15}$/.test(value)) head.length = Number(value);
  }
  return head;
}

/** Streams the log `t` names from its agent to `client`; `handlerHead` is the handler's answer head. */
export function streamLog(
  client: Duplex,
  handlerHead: string,
  t: UpgradeTarget,
  k: KubeletDialMaterial | undefined,
): void {
  const url = JSON.stringify(KubeletClient.url(t, t.path));
  const agent = dialAgent(t, k);
  let head: AgentHead | undefined;
  const fail = (message: string) => {
    clearTimeout(timer);
    agent.destroy();
    endWithStatus(client, handlerHead, plainError(`Get ${url}: ${message}`).status);
  };
  // as the kubelet client: --kubelet-timeout bounds the dial plus the wait for the head
  const timer = setTimeout(() => fail('net/http: timeout awaiting response headers'), k?.timeoutMs ?? 5_000);
  client.once('close', () => {
    clearTimeout(timer);
    agent.destroy();
  });
  agent.once('secureConnect', () => {
    const host = t.host.includes(':') ? `[${t.host}]:${t.port}` : `${t.host}:${t.port}`;
    agent.write(`GET ${t.path} HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`);
  });
  agent.on('error', (e: NodeJS.ErrnoException) => {
    if (!head) return fail(dialMessage(t, e));
    // mid-body: the client's stream breaks as the agent's did (no last chunk, a short length)
    client.destroy();
  });
  // closed before a complete head: Go's transport says EOF
  agent.once('close', () => {
    if (!head) fail('EOF');
  });
  let buf: Buffer = Buffer.alloc(0);
  const onHead = (chunk: Buffer) => {
    buf = buf.length ? Buffer.concat([buf, chunk]) : chunk;
    const end = buf.indexOf(HEAD_END);
    if (end < 0) {
      if (buf.length > MAX_AGENT_HEAD) fail('net/http: HTTP/1.x transport connection broken: malformed HTTP response');
      return;
    }
    agent.off('data', onHead);
    head = parseAgentHead(buf.subarray(0, end).toString('latin1'));
    if (!head) return fail('net/http: HTTP/1.x transport connection broken: malformed HTTP response');
    clearTimeout(timer);
    const body = buf.subarray(end + 4);
    if (head.code < 200 || head.code > 206)
      return collectError(agent, body, head, (text) =>
        endWithStatus(client, handlerHead, agentResponseError(head!.code, text, 'pods/log', t.log?.pod ?? '').status),
      );
    relayBody(agent, client, responseHead(handlerHead, 200, logHeaders(head)), body);
  };
  agent.on('data', onHead);
}

/** A log answer's headers: the agent's framing (chunked or its length), kept as it sent it. */
function logHeaders(head: AgentHead): string[] {
  const framing = head.chunked
    ? ['Transfer-Encoding: chunked']
    : head.length !== undefined
      ? [`Content-Length: ${head.length}`]
      : [];
  return ['Content-Type: text/plain', ...framing, 'Connection: close'];
}

/** Writes the head and the body's first bytes, then relays the agent's body to its end. */
function relayBody(agent: Duplex, client: Duplex, head: string, first: Buffer): void {
  client.write(head);
  if (first.length) client.write(first);
  relay(agent, client);
  agent.once('end', () => client.end());
}

/** Reads a failed answer's body (to the agent's close, at most MAX_ERROR_BODY) and hands over its text. */
function collectError(agent: Duplex, first: Buffer, head: AgentHead, done: (text: string) => void): void {
  const chunks = [first];
  let size = first.length;
  let finished = false;
  const finish = () => {
    if (finished) return;
    finished = true;
    agent.destroy();
    const raw = Buffer.concat(chunks);
    done(
      (head.chunked ? dechunk(raw) : raw.subarray(0, head.length ?? raw.length))
        .toString('utf8')
        .slice(0, MAX_ERROR_BODY),
    );
  };
  const enough = () =>
    size >= (head.length ?? MAX_ERROR_BODY) || (head.chunked && Buffer.concat(chunks).includes('\r\n0\r\n'));
  if (enough()) return finish();
  agent.on('data', (c: Buffer) => {
    chunks.push(c);
    size += c.length;
    if (enough()) finish();
  });
  agent.once('end', finish);
  agent.once('close', finish);
}

/** The data of a chunked body (what arrived of it). */
export function dechunk(raw: Buffer): Buffer {
  const out: Buffer[] = [];
  for (let at = 0; at < raw.length; ) {
    const eol = raw.indexOf('\r\n', at);
    if (eol < 0) break;
    const n = parseInt(raw.subarray(at, eol).toString('latin1'), 16);
    if (!(n > 0)) break;
    out.push(raw.subarray(eol + 2, Math.min(raw.length, eol + 2 + n)));
    at = eol + 2 + n + 2;
  }
  return Buffer.concat(out);
}
