/** First-start objects: the namespaces every cluster has. Idempotent on every start. */
import type { ApiServer } from './server.js';

export async function bootstrap(server: ApiServer): Promise<void> {
  const { identity } = server.registry;
  const wanted = ['default', identity.systemNamespace, identity.publicNamespace, identity.nodeLeaseNamespace];
  await Promise.all(wanted.filter((n) => !server.services.namespaces.has(n)).map(async (name) => {
    const r = await server.pool.submit({
      op: 'create', type: { group: '', version: 'v1', resource: 'namespaces' }, enc: { format: 'json', pretty: false },
      dryRun: false, namespace: '', body: { text: JSON.stringify({ metadata: { name } }), contentType: 'json' },
    });
    if ('error' in r && r.error.code !== 409) throw new Error(`bootstrap namespace ${name}: ${r.error.message}`);
  }));
}
