/**
 * Aggregation-layer flags (upstream kube-apiserver's): the client certificate the server
 * presents to extension API servers, and `--enable-aggregator-routing` (accepted; requests
 * always go to the service's endpoints here, there is no cluster network for a ClusterIP).
 */
export interface AggregatorOptions {
  proxyClientCertFile: string;
  proxyClientKeyFile: string;
  /** how often every APIService's availability is checked again (ms) */
  apiServiceCheckIntervalMs: number;
}

export const DEFAULT_AGGREGATOR_OPTIONS: AggregatorOptions = {
  proxyClientCertFile: '',
  proxyClientKeyFile: '',
  apiServiceCheckIntervalMs: 30_000,
};

export const AGGREGATOR_FLAGS: Record<string, (o: AggregatorOptions, v: string) => void> = {
  'proxy-client-cert-file': (o, v) => {
    o.proxyClientCertFile = v;
  },
  'proxy-client-key-file': (o, v) => {
    o.proxyClientKeyFile = v;
  },
  'enable-aggregator-routing': (_o, v) => {
    if (v !== 'true' && v !== 'false') throw new Error(`--enable-aggregator-routing must be true or false, got "${v}"`);
  },
};

export function checkAggregatorOptions(o: AggregatorOptions): void {
  if (!o.proxyClientCertFile !== !o.proxyClientKeyFile)
    throw new Error('--proxy-client-cert-file and --proxy-client-key-file must be given together');
}
