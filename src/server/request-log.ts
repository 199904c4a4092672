/**
 * The `-v=3` request log: one line per response as upstream's httplog (verb, URI, user,
 * status, latency, bytes, source address), queued on the logger (src/server/log.ts) so the
 * front thread never blocks on the write. A watch is logged when it ends.
 */
import { performance } from 'node:perf_hooks';
import type { Exchange } from '../http/exchange.js';
import type { Logger } from './log.js';
import { parseRequestInfo } from '../http/request-info.js';

export const REQUEST_LOG_LEVEL = 3;

export function requestLogger(log: Logger): ((x: Exchange, code: number, bytes: number) => void) | undefined {
  if (!log.enabled(REQUEST_LOG_LEVEL)) return undefined;
  return (x, code, bytes) => {
    const r = x.request;
    const qs = r?.query.toString();
    const latencyMs = x.start === undefined ? 0 : performance.now() - x.start;
    log.queued(REQUEST_LOG_LEVEL, 'HTTP', {
      // upstream logs the API verb (LIST, WATCH, CREATE, ...), as the request info names it
      verb: r ? (r.info?.verb ?? parseRequestInfo(r.method, r.path, r.query).verb).toUpperCase() : '',
      URI: r ? (qs ? `${r.path}?${qs}` : r.path) : '',
      user: r?.user?.username,
      status: code,
      latency: `${latencyMs.toFixed(3)}ms`,
      bytes,
      srcIP: r?.remoteAddress,
    });
  };
}
