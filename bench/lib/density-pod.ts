/**
 * The density scenario's Pod (bench/load/scenarios/density.ts) as the server's admission leaves
 * it, as a create op for a Shard run in process (bench/density-memory.ts,
 * bench/protobuf-first-list.ts: the in-process shard runs no admission).
 */
import type { Op } from '../../src/actors/protocol.js';

export const PODS = { group: '', version: 'v1', resource: 'pods' };
const BENCH_USER = { username: 'bench', groups: ['system:masters', 'system:authenticated'] };

/** The service account volume admission adds to every Pod. */
const SA_VOLUME = 'plat-api-access-gqxfg';
const SA_MOUNT = { name: SA_VOLUME, readOnly: true, mountPath: '/var/run/secrets/platform.io/serviceaccount' };
const SA_SOURCES = [
  { serviceAccountToken: { expirationSeconds: 3607, path: 'token' } },
  { configMap: { name: 'plat-root-ca.crt', items: [{ key: 'ca.crt', path: 'ca.crt' }] } },
  { downwardAPI: { items: [{ path: 'namespace', fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.namespace' } }] } },
];

/** A create op of the density Pod `name` in `namespace`. */
export function densityPodCreate(id: number, namespace: string, name: string): Op {
  const text = JSON.stringify({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, labels: { bench: 'density' } },
    spec: {
      containers: [{ name: 'c', image: 'registry.example/pause:3.10', volumeMounts: [SA_MOUNT] }],
      serviceAccountName: 'default',
      volumes: [{ name: SA_VOLUME, projected: { defaultMode: 420, sources: SA_SOURCES } }],
    },
  });
  return {
    id,
    op: 'create',
    type: PODS,
    enc: { format: 'json', pretty: false },
    dryRun: false,
    namespace,
    fieldManager: 'kubectl-create',
    user: BENCH_USER,
    body: { text, contentType: 'json' },
  };
}
