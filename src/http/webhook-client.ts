/**
 * Calls one webhook (admission, src/admission/webhook/dispatcher.ts; CRD conversion,
 * src/handlers/conversion-review.ts): POSTs the review over HTTPS to `clientConfig.url`, or
 * to a `clientConfig.service` resolved through its Endpoints (the first ready address and the
 * port the service port targets; TLS server name `<name>.<namespace>.svc`, as upstream's
 * endpoint routing), trusting `caBundle` when given (else the system roots), with
 * `?timeout=<n>s` and the webhook's timeout. Errors come back as upstream's wording (the
 * caller prefixes `failed calling webhook "x": `).
 */
import type { IncomingMessage } from 'node:http';
import { Agent, request } from 'node:https';
import type { ReadCache } from '../actors/read-cache.js';
import { resolveService } from '../actors/service-resolver.js';
import { stringifyValue } from '../schema/deep-value.js';
import { isRecord } from '../api/object.js';

const MAX_RESPONSE_BYTES = 3 * 1024 * 1024;

export interface Target {
  url: URL;
  servername?: string;
  ca?: string;
}

/** Where the webhook lives; throws upstream-like messages when the service cannot be resolved. */
/** clientConfig: a WebhookClientConfig as written (admission webhooks, CRD conversion), any field missing. */
export function resolveTarget(clientConfig: unknown, readCache: ReadCache): Target {
  const cc: Record<string, unknown> = isRecord(clientConfig) ? clientConfig : {};
  const ca = cc.caBundle ? Buffer.from(String(cc.caBundle), 'base64').toString('utf8') : undefined;
  if (cc.url) return { url: new URL(String(cc.url)), ...(ca ? { ca } : {}) };
  const svc: Record<string, unknown> = isRecord(cc.service) ? cc.service : {};
  const r = resolveService(readCache, String(svc.namespace ?? ''), String(svc.name ?? ''), Number(svc.port ?? 443));
  if ('reason' in r) throw new Error(r.message);
  const { host, port, servername } = r.address;
  return { url: new URL(`https://${host}:${port}${svc.path ?? ''}`), servername, ...(ca ? { ca } : {}) };
}

/**
 * Keep-alive agents per (origin, CA, server name): a TLS handshake per call would cost more
 * than the call itself. Bounded: the oldest agent is dropped past MAX_AGENTS.
 */
const agents = new Map<string, Agent>();
const MAX_AGENTS = 64;

function agentFor(target: Target): Agent {
  const key = `${target.url.origin}|${target.servername ?? ''}|${target.ca ?? ''}`;
  let a = agents.get(key);
  if (!a) {
    if (agents.size >= MAX_AGENTS) {
      const [oldest, agent] = agents.entries().next().value as [string, Agent];
      agent.destroy();
      agents.delete(oldest);
    }
    a = new Agent({
      keepAlive: true,
      maxSockets: 64,
      ...(target.ca ? { ca: target.ca } : {}),
      ...(target.servername ? { servername: target.servername } : {}),
    });
    agents.set(key, a);
  }
  return a;
}

/** POSTs the review; resolves with the parsed body of a 2xx reply. */
export function callWebhook(target: Target, review: unknown, timeoutSeconds: number): Promise<unknown> {
  const url = new URL(target.url);
  url.searchParams.set('timeout', `${timeoutSeconds}s`);
  const where = `Post "${url.toString()}"`;
  // stringifyValue: a DELETE's oldObject may nest deeper than JSON.stringify recurses (an old stored object)
  const body = Buffer.from(stringifyValue(review));
  return new Promise((resolve, reject) => {
    let settled = false;
    const fail = (why: string) => {
      if (!settled) {
        settled = true;
        reject(new Error(`failed to call webhook: ${where}: ${why}`));
      }
    };
    const req = request(
      url,
      {
        method: 'POST',
        ...(target.ca ? { ca: target.ca } : {}),
        ...(target.servername ? { servername: target.servername } : {}),
        headers: { 'content-type': 'application/json', accept: 'application/json, */*', 'content-length': body.length },
        agent: agentFor(target),
      },
      (res) =>
        readReply(res, {
          tooLarge: () => {
            req.destroy();
            fail('response body too large');
          },
          fail,
          done: (code, text) => {
            if (settled) return;
            clearTimeout(timer);
            settled = true;
            try {
              resolve(parseReply(code, text));
            } catch (e) {
              reject(e);
            }
          },
        }),
    );
    const timer = setTimeout(() => {
      fail('context deadline exceeded');
      req.destroy();
    }, timeoutSeconds * 1000);
    req.on('error', (e) => {
      clearTimeout(timer);
      fail(e.message);
    });
    req.end(body);
  });
}

/** Reads a reply's body up to MAX_RESPONSE_BYTES. */
function readReply(
  res: IncomingMessage,
  on: { tooLarge: () => void; fail: (why: string) => void; done: (code: number, text: string) => void },
): void {
  const chunks: Buffer[] = [];
  let size = 0;
  res.on('data', (c: Buffer) => {
    size += c.length;
    if (size > MAX_RESPONSE_BYTES) on.tooLarge();
    else chunks.push(c);
  });
  res.on('end', () => on.done(res.statusCode ?? 0, Buffer.concat(chunks).toString('utf8')));
  res.on('error', (e) => on.fail(e.message));
}

/** A 2xx reply's parsed JSON; anything else is upstream's invalid-response error. */
function parseReply(code: number, text: string): unknown {
  if (code < 200 || code > 299)
    throw new Error(
      `received invalid webhook response: the server responded with the status code ${code} but did not return more information`,
    );
  try {
    return JSON.parse(text);
  } catch (e) {
    throw new Error(`received invalid webhook response: ${(e as Error).message}`);
  }
}
