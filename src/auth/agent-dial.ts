/**
 * The TLS front's connection to a node agent (upgrades and pods/log streams): TLS with the
 * kubelet client certificate; the agent's serving certificate verified against
 * `--kubelet-certificate-authority` unless the target is insecure (no authority given, or
 * `insecureSkipTLSVerifyBackend`).
 */
import { connect as tlsConnect, type TLSSocket } from 'node:tls';
import { isIP } from 'node:net';
import type { KubeletDialMaterial } from '../kubelet/client.js';
import type { UpgradeTarget } from '../kubelet/upgrade-directive.js';

export function dialAgent(t: UpgradeTarget, k: KubeletDialMaterial | undefined): TLSSocket {
  return tlsConnect({
    host: t.host,
    port: t.port,
    ...(isIP(t.host) ? {} : { servername: t.host }),
    ALPNProtocols: ['http/1.1'],
    ...(k?.cert ? { cert: Buffer.from(k.cert), key: Buffer.from(k.key!) } : {}),
    ...(k?.ca && !t.insecure ? { ca: Buffer.from(k.ca), rejectUnauthorized: true } : { rejectUnauthorized: false }),
  });
}
