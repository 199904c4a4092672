/**
 * The `etcd` check of /livez and /readyz (upstream's etcd health check): a linearizable read
 * of one key under the prefix with a short deadline, from the front thread's own client, so
 * the check answers within the deadline whether or not the cluster has quorum.
 */
import { classify, createClient, type EtcdConfig } from './etcd-client.js';

const PROBE_TIMEOUT_MS = 2_000;

export function etcdProbe(cfg: EtcdConfig): { run: () => Promise<string | undefined>; close: () => void } {
  const client = createClient(cfg);
  const key = Buffer.from(`${cfg.prefix}/`);
  const servers = cfg.servers.join(',');
  return {
    run: async () => {
      try {
        await client.kv.range({ key, keys_only: true, limit: 1 }, { deadline: Date.now() + PROBE_TIMEOUT_MS });
        return undefined;
      } catch (e) {
        return classify(e, servers).message;
      }
    },
    close: () => client.close(),
  };
}
