/**
 * The admin kubeconfig written at start when the server generated its cluster CA:
 * `<data-dir>/admin.kubeconfig` (mode 0600) with the secure port's URL, the CA, and the admin
 * client certificate (in `system:masters`), so `kubectl --kubeconfig <it> get ns` works at once.
 * Rewritten on every start (the port may differ); the certificate is reused.
 */
import { readFileSync, writeFileSync, chmodSync } from 'node:fs';
import { isIP } from 'node:net';

/** The address clients use for a bind address (a wildcard means this host's loopback). */
export function clientHost(bindAddress: string): string {
  const host =
    bindAddress === '0.0.0.0' || bindAddress === '' ? '127.0.0.1' : bindAddress === '::' ? '::1' : bindAddress;
  return isIP(host) === 6 ? `[${host}]` : host;
}

export function writeAdminKubeconfig(
  path: string,
  o: { server: string; caFile: string; certFile: string; keyFile: string; name: string },
): void {
  const b64 = (f: string) => readFileSync(f).toString('base64');
  const text = [
    'apiVersion: v1',
    'kind: Config',
    'clusters:',
    `- name: ${o.name}`,
    '  cluster:',
    `    server: ${o.server}`,
    `    certificate-authority-data: ${b64(o.caFile)}`,
    'users:',
    `- name: ${o.name}-admin`,
    '  user:',
    `    client-certificate-data: ${b64(o.certFile)}`,
    `    client-key-data: ${b64(o.keyFile)}`,
    'contexts:',
    `- name: ${o.name}-admin@${o.name}`,
    '  context:',
    `    cluster: ${o.name}`,
    `    user: ${o.name}-admin`,
    `current-context: ${o.name}-admin@${o.name}`,
    '',
  ].join('\n');
  writeFileSync(path, text, { mode: 0o600 });
  chmodSync(path, 0o600);
}
