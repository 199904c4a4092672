/**
 * How the front thread hands a streaming upgrade (exec, attach, portforward), or a pods/log
 * stream, to the TLS front.
 * uWebSockets.js cannot give a raw socket to JavaScript, so the request passes the filter chain
 * and the handler as any other; the handler then answers, instead of a response for the
 * client, one head carrying this header: the node agent to dial and the path to ask for,
 * prefixed by the per-process secret (a client cannot forge it: the TLS front only believes
 * it on its own internal connection and never forwards it). The TLS front dials the agent and
 * pipes bytes both ways (src/auth/upgrade-proxy.ts).
 */

export const UPGRADE_DIRECTIVE_HEADER = 'x-plat-upgrade-directive';

/**
 * Set by the TLS front (with the per-process secret; client copies dropped as every
 * `x-plat-tls-` header) on a request whose connection it took over: only such a request may
 * be answered with the directive, which the front then reads instead of relaying it.
 */
export const TAKEN_OVER_HEADER = 'x-plat-tls-taken-over';

export interface UpgradeTarget {
  host: string;
  port: number;
  /** path and query on the node agent */
  path: string;
  /** do not verify the agent's serving certificate (no --kubelet-certificate-authority) */
  insecure: boolean;
  /**
   * not an upgrade but a pods/log GET: the TLS front asks the agent itself and streams the
   * log to the client (src/auth/log-stream.ts); the pod's name is for the agent's errors
   */
  log?: { pod: string };
}

export function encodeUpgradeDirective(secretHex: string, t: UpgradeTarget): string {
  return `${secretHex} ${Buffer.from(JSON.stringify(t)).toString('base64url')}`;
}

/** The target when the value carries this process's secret; undefined otherwise. */
export function decodeUpgradeDirective(secretHex: string, value: string): UpgradeTarget | undefined {
  const sp = value.indexOf(' ');
  if (sp < 0 || value.slice(0, sp) !== secretHex) return undefined;
  try {
    const t = JSON.parse(Buffer.from(value.slice(sp + 1), 'base64url').toString('utf8')) as Partial<UpgradeTarget>;
    if (typeof t.host !== 'string' || typeof t.port !== 'number' || typeof t.path !== 'string') return undefined;
    const log = typeof t.log?.pod === 'string' ? { log: { pod: t.log.pod } } : {};
    return { host: t.host, port: t.port, path: t.path, insecure: t.insecure === true, ...log };
  } catch {
    return undefined;
  }
}
