/**
 * First-start objects, idempotent on every start: the namespaces every cluster has, the
 * \`platform\` Service in \`default\` (the first address of the service range, port 443), and
 * the default RBAC policy (created when missing, reconciled otherwise: src/auth/authz/reconcile.ts),
 * with the aggregated ClusterRoles' rules written before the listeners open.
 */
import type { ActorPool, OpInput } from '../actors/pool.js';
import type { Identity } from '../api/identity.js';
import { ensureDefaultPolicy } from '../auth/authz/reconcile.js';

/** What bootstrap reads of the server (the ApiServer, src/server/server.ts, is one). */
export interface BootstrapServer {
  readonly pool: ActorPool;
  readonly registry: { readonly identity: Identity };
  readonly services: { readonly namespaces: ReadonlyMap<string, unknown> };
  readonly options: { serviceClusterIPRange: string; securePort: number; port: number };
  /** the RBAC aggregation controller: its first pass writes the aggregated ClusterRoles' rules */
  readonly authz: { readonly aggregation: { start(): Promise<void> } };
}

const JSON_ENC = { format: 'json' as const, pretty: false };

async function ensure(server: BootstrapServer, op: OpInput, what: string): Promise<void> {
  const r = await server.pool.submit(op);
  if ('error' in r && r.error.code !== 409) throw new Error(`bootstrap ${what}: ${r.error.message}`);
}

function firstServiceIP(cidr: string): string {
  const [ip] = cidr.split('/');
  const parts = ip!.split('.').map(Number);
  parts[3] = parts[3]! + 1;
  return parts.join('.');
}

/** The service's target: the secure port as upstream, else the plain one, else 443 (ports chosen at bind time are unknown here). */
function servicePort(o: { securePort: number; port: number }): number {
  return o.securePort > 0 ? o.securePort : o.port > 0 ? o.port : 443;
}

export async function bootstrap(server: BootstrapServer): Promise<void> {
  const { identity } = server.registry;
  const wanted = ['default', identity.systemNamespace, identity.publicNamespace, identity.nodeLeaseNamespace];
  await Promise.all(
    wanted
      .filter((n) => !server.services.namespaces.has(n))
      .map((name) =>
        ensure(
          server,
          {
            op: 'create',
            type: { group: '', version: 'v1', resource: 'namespaces' },
            enc: JSON_ENC,
            dryRun: false,
            namespace: '',
            body: { text: JSON.stringify({ metadata: { name } }), contentType: 'json' },
          },
          `namespace ${name}`,
        ),
      ),
  );
  const service = {
    metadata: { name: identity.product, labels: { component: 'apiserver', provider: identity.product } },
    spec: {
      type: 'ClusterIP',
      clusterIP: firstServiceIP(server.options.serviceClusterIPRange),
      sessionAffinity: 'None',
      ports: [{ name: 'https', port: 443, protocol: 'TCP', targetPort: servicePort(server.options) }],
    },
  };
  await ensure(
    server,
    {
      op: 'create',
      type: { group: '', version: 'v1', resource: 'services' },
      enc: JSON_ENC,
      dryRun: false,
      namespace: 'default',
      body: { text: JSON.stringify(service), contentType: 'json' },
    },
    `service ${identity.product}`,
  );
  await ensureDefaultPolicy(server.pool, identity);
  await server.authz.aggregation.start();
}
