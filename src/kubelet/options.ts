/**
 * Kubelet client flags (upstream kube-apiserver's): the client certificate the server presents
 * to node agents, the CA that verifies their serving certificates, which Node address to dial,
 * the default port and the dial/response-header timeout.
 */
import { parseDuration } from '../api/duration.js';

export const NODE_ADDRESS_TYPES = ['Hostname', 'InternalDNS', 'InternalIP', 'ExternalDNS', 'ExternalIP'] as const;

export interface KubeletOptions {
  /** '' = the client certificate issued from the cluster CA at first start */
  kubeletClientCertificate: string;
  kubeletClientKey: string;
  /** '' = the node agent's serving certificate is not verified (upstream's default) */
  kubeletCertificateAuthority: string;
  /** the order in which a Node's status.addresses are tried */
  kubeletPreferredAddressTypes: string[];
  /** used when the Node does not advertise status.daemonEndpoints.kubeletEndpoint.Port */
  kubeletPort: number;
  /** dial and response-header timeout of a request to a node agent (ms) */
  kubeletTimeoutMs: number;
}

export const DEFAULT_KUBELET_OPTIONS: KubeletOptions = {
  kubeletClientCertificate: '',
  kubeletClientKey: '',
  kubeletCertificateAuthority: '',
  kubeletPreferredAddressTypes: [...NODE_ADDRESS_TYPES],
  kubeletPort: 10250,
  kubeletTimeoutMs: 5_000,
};

export const KUBELET_FLAGS: Record<string, (o: KubeletOptions, v: string) => void> = {
  'kubelet-client-certificate': (o, v) => {
    o.kubeletClientCertificate = v;
  },
  'kubelet-client-key': (o, v) => {
    o.kubeletClientKey = v;
  },
  'kubelet-certificate-authority': (o, v) => {
    o.kubeletCertificateAuthority = v;
  },
  'kubelet-preferred-address-types': (o, v) => {
    const types = v
      .split(',')
      .map((s) => s.trim())
      .filter((s) => s !== '');
    for (const t of types) {
      if (!(NODE_ADDRESS_TYPES as readonly string[]).includes(t))
        throw new Error(
          `--kubelet-preferred-address-types: unknown address type "${t}" (must be one of ${NODE_ADDRESS_TYPES.join(', ')})`,
        );
    }
    if (types.length === 0) throw new Error('--kubelet-preferred-address-types must name at least one address type');
    o.kubeletPreferredAddressTypes = types;
  },
  'kubelet-port': (o, v) => {
    if (!/^[0-9]+$/.test(v) || Number(v) < 1 || Number(v) > 65535)
      throw new Error(`--kubelet-port must be an integer between 1 and 65535, got "${v}"`);
    o.kubeletPort = Number(v);
  },
  'kubelet-timeout': (o, v) => {
    const ms = parseDuration(v);
    if (ms === undefined || ms <= 0)
      throw new Error(`--kubelet-timeout must be a positive duration such as 5s, got "${v}"`);
    o.kubeletTimeoutMs = ms;
  },
};

export function checkKubeletOptions(o: KubeletOptions): void {
  if (!o.kubeletClientCertificate !== !o.kubeletClientKey)
    throw new Error('--kubelet-client-certificate and --kubelet-client-key must be given together');
}
