/**
 * `--controllers` (upstream kube-controller-manager): a list of controller names, `*` for every
 * controller on by default, `-name` to turn one off. The bootstrap token controllers are off
 * by default, as upstream: `--controllers=*,tokencleaner,bootstrapsigner` turns them on.
 */

/** Controllers this server runs only when named. */
export const OFF_BY_DEFAULT = ['tokencleaner', 'bootstrapsigner'];

/** upstream's controller names (v1.32), accepted so a copied flag value is not refused */
const KNOWN = [
  'attachdetach',
  'bootstrapsigner',
  'certificatesigningrequest-approving',
  'certificatesigningrequest-cleaner',
  'certificatesigningrequest-signing',
  'cloud-node-lifecycle',
  'clusterrole-aggregation',
  'cronjob',
  'daemonset',
  'deployment',
  'disruption',
  'endpoint',
  'endpointslice',
  'endpointslicemirroring',
  'ephemeral-volume',
  'garbagecollector',
  'horizontalpodautoscaling',
  'job',
  'legacy-serviceaccount-token-cleaner',
  'namespace',
  'nodeipam',
  'nodelifecycle',
  'persistentvolume-binder',
  'persistentvolume-expander',
  'podgc',
  'pv-protection',
  'pvc-protection',
  'replicaset',
  'replicationcontroller',
  'resourceclaim',
  'resourcequota',
  'root-ca-cert-publisher',
  'route',
  'service',
  'serviceaccount',
  'serviceaccount-token',
  'statefulset',
  'storageversion-gc',
  'taint-eviction-controller',
  'tokencleaner',
  'ttl',
  'ttl-after-finished',
  'validatingadmissionpolicy-status',
];

export function parseControllers(v: string): string[] {
  const names = v
    .split(',')
    .map((x) => x.trim())
    .filter(Boolean);
  for (const n of names) {
    const bare = n.startsWith('-') ? n.slice(1) : n;
    if (n !== '*' && !KNOWN.includes(bare))
      throw new Error(`--controllers: "${bare}" is not in the list of known controllers`);
  }
  return names;
}

/** upstream IsControllerEnabled: an explicit name or `-name` wins, then `*` for the default ones. */
export function controllerEnabled(selection: readonly string[], name: string): boolean {
  if (selection.includes(name)) return true;
  if (selection.includes(`-${name}`)) return false;
  return selection.includes('*') && !OFF_BY_DEFAULT.includes(name);
}
