/**
 * Service networking and storage kinds as upstream's printers show them: Service, Endpoints,
 * EndpointSlice, Ingress, IngressClass, NetworkPolicy, ServiceCIDR, IPAddress, the volume
 * kinds (PersistentVolume, PersistentVolumeClaim, StorageClass, VolumeAttributesClass, CSI*,
 * VolumeAttachment) and the resource.<domain> (DRA) kinds.
 */
import type { KubeObject } from '../../api/object.js';
import type {
  CSIDriver,
  CSINode,
  CSIStorageCapacity,
  EndpointSlice,
  Endpoints,
  IngressClass,
  LoadBalancerStatus,
  NetworkPolicy,
  PersistentVolume,
  PrintedClaim,
  PrintedIngress,
  PrintedService,
  ResourceSlice,
  ServiceCIDR,
  StorageClass,
  VolumeAttachment,
  VolumeAttributesClass,
} from '../../api/printable.js';
import {
  AGE,
  NAME,
  asList,
  col,
  domainValue,
  formatLabels,
  formatLabelSelector,
  listWithMore,
  quantity,
  storageClassOf,
  type CellOf,
  type Column,
} from './common.js';

/** Load-balancer ingress points: IPs, else hostnames, de-duplicated and sorted (upstream prints the wide, unclipped form). */
const ingressPoints = (lb: LoadBalancerStatus | undefined): string =>
  [
    ...new Set(
      asList(lb?.ingress)
        .map((i) => i?.ip || i?.hostname)
        .filter(Boolean),
    ),
  ]
    .sort()
    .join(',');

/** upstream getServiceExternalIP (wide): external IPs, load-balancer ingress, `<pending>`, the external name. */
export function serviceExternalIP(o: PrintedService): string {
  const external = asList(o.spec?.externalIPs);
  switch (o.spec?.type) {
    case 'ClusterIP':
    case 'NodePort':
      return external.length ? external.join(',') : '<none>';
    case 'LoadBalancer': {
      const lb = ingressPoints(o.status?.loadBalancer);
      if (external.length) return [...(lb ? lb.split(',') : []), ...external].join(',');
      return lb || '<pending>';
    }
    case 'ExternalName':
      return o.spec?.externalName ?? '';
    default:
      return '<unknown>';
  }
}

const servicePorts = (o: PrintedService): string =>
  asList(o.spec?.ports)
    .map((p) => `${p.port}${(p.nodePort ?? 0) > 0 ? `:${p.nodePort}` : ''}/${p.protocol ?? 'TCP'}`)
    .join(',') || '<none>';

const joinHostPort = (ip: string, port: unknown): string => (ip.includes(':') ? `[${ip}]:${port}` : `${ip}:${port}`);

/** upstream formatEndpoints: up to three `ip:port` (or bare IPs for port-less subsets), then ` + N more...`. */
export function formatEndpoints(o: Endpoints): string {
  const subsets = asList(o.subsets);
  if (!subsets.length) return '<none>';
  const list: string[] = [];
  let total = 0;
  for (const ss of subsets) {
    const addresses = asList(ss?.addresses),
      ports = asList(ss?.ports);
    if (!ports.length) {
      total += addresses.length;
      for (const a of addresses) if (list.length < 3) list.push(a?.ip ?? '');
      continue;
    }
    for (const p of ports) {
      total += addresses.length;
      for (const a of addresses) if (list.length < 3) list.push(joinHostPort(a?.ip ?? '', p?.port));
    }
  }
  return total > 3 ? `${list.join(',')} + ${total - 3} more...` : list.join(',');
}

/** upstream formatHosts: up to three rule hosts, then ` + N more...` over the rules; `*` without hosts. */
export function ingressHosts(o: PrintedIngress): string {
  const rules = asList(o.spec?.rules);
  const hosts: string[] = [];
  let more = false;
  for (const r of rules) {
    if (hosts.length === 3) more = true;
    if (!more && r?.host) hosts.push(r.host);
  }
  if (!hosts.length) return '*';
  return more ? `${hosts.join(',')} + ${rules.length - 3} more...` : hosts.join(',');
}

/** GetAccessModesAsString: RWO, ROX, RWX, RWOP in this order, each once. */
export function accessModes(modes: unknown): string {
  const set = new Set(asList(modes));
  return [
    ['ReadWriteOnce', 'RWO'],
    ['ReadOnlyMany', 'ROX'],
    ['ReadWriteMany', 'RWX'],
    ['ReadWriteOncePod', 'RWOP'],
  ]
    .filter(([m]) => set.has(m))
    .map(([, short]) => short)
    .join(',');
}

const phaseOf = (o: KubeObject<unknown, { phase?: string }>): string =>
  o.metadata?.deletionTimestamp ? 'Terminating' : (o.status?.phase ?? '');
const unset = (v: unknown): string => (typeof v === 'string' ? v : '<unset>');

/** A PVC's capacity and access modes show once it is bound to a volume. */
const claimBound = (o: KubeObject<{ volumeName?: string }>): boolean => Boolean(o.spec?.volumeName);

const isDefaultClass = (o: KubeObject): boolean =>
  domainValue(o.metadata?.annotations, 'storageclass.', '/is-default-class') === 'true' ||
  domainValue(o.metadata?.annotations, 'storageclass.beta.', '/is-default-class') === 'true';

/** upstream resourceClaimState: deleted, pending, allocated, reserved. */
function claimState(o: KubeObject<unknown, { allocation?: unknown; reservedFor?: unknown }>): string {
  const states: string[] = [];
  if (o.metadata?.deletionTimestamp) states.push('deleted');
  if (!o.status?.allocation) {
    if (!o.metadata?.deletionTimestamp) states.push('pending');
  } else {
    states.push('allocated');
    if (asList(o.status?.reservedFor).length) states.push('reserved');
  }
  return states.join(',');
}

function ipParent(
  o: KubeObject<{ parentRef?: { group?: string; resource?: string; namespace?: string; name?: string } }>,
): string {
  const ref = o.spec?.parentRef;
  if (!ref) return '<none>';
  const groupResource = ref.group ? `${ref.resource}.${ref.group}` : String(ref.resource ?? '');
  return `${groupResource.toLowerCase()}${ref.namespace ? `/${ref.namespace}` : ''}/${ref.name}`;
}

const lit = <T extends KubeObject>(
  name: string,
  type: Column['type'],
  cell: CellOf<T>,
  description: string,
  priority = 0,
) => col(name, type, cell, priority, '', description);

export const STORAGE_NETWORKING_COLUMNS: Record<string, Column[]> = {
  Service: [
    NAME,
    col('Type', 'string', (o) => o.spec?.type ?? ''),
    col('Cluster-IP', 'string', (o) => o.spec?.clusterIPs?.[0] || o.spec?.clusterIP || '<none>'),
    col('External-IP', 'string', serviceExternalIP),
    col('Port(s)', 'string', servicePorts),
    AGE,
    col('Selector', 'string', (o) => formatLabels(o.spec?.selector), 1),
  ] satisfies Column<PrintedService>[],
  Endpoints: [NAME, col('Endpoints', 'string', formatEndpoints), AGE] satisfies Column<Endpoints>[],
  EndpointSlice: [
    NAME,
    col('AddressType', 'string', (o) => o.addressType ?? ''),
    col('Ports', 'string', (o) =>
      listWithMore(asList(o.ports).map((p) => (typeof p?.port === 'number' ? String(p.port) : (p?.name ?? '*')))),
    ),
    col('Endpoints', 'string', (o) =>
      listWithMore(asList(o.endpoints).flatMap((e) => asList(e?.addresses).map(String))),
    ),
    AGE,
  ] satisfies Column<EndpointSlice>[],
  Ingress: [
    NAME,
    lit(
      'Class',
      'string',
      (o) => o.spec?.ingressClassName ?? '<none>',
      'The name of the IngressClass resource that should be used for additional configuration',
    ),
    lit('Hosts', 'string', ingressHosts, 'Hosts that incoming requests are matched against before the ingress rule'),
    lit(
      'Address',
      'string',
      (o) => ingressPoints(o.status?.loadBalancer),
      'Address is a list containing ingress points for the load-balancer',
    ),
    lit(
      'Ports',
      'string',
      (o) => (asList(o.spec?.tls).length ? '80, 443' : '80'),
      'Ports of TLS configurations that open',
    ),
    AGE,
  ] satisfies Column<PrintedIngress>[],
  IngressClass: [
    NAME,
    lit(
      'Controller',
      'string',
      (o) => o.spec?.controller ?? '',
      'Controller that is responsible for handling this class',
    ),
    lit(
      'Parameters',
      'string',
      (o) => {
        const p = o.spec?.parameters;
        return p
          ? `${p.kind ?? ''}${typeof p.apiGroup === 'string' ? `.${p.apiGroup}` : ''}/${p.name ?? ''}`
          : '<none>';
      },
      'A reference to a resource with additional parameters',
    ),
    AGE,
  ] satisfies Column<IngressClass>[],
  NetworkPolicy: [
    NAME,
    col('Pod-Selector', 'string', (o) => formatLabelSelector(o.spec?.podSelector ?? {})),
    AGE,
  ] satisfies Column<NetworkPolicy>[],
  ServiceCIDR: [
    NAME,
    col('CIDRs', 'string', (o) => asList(o.spec?.cidrs).join(',')),
    AGE,
  ] satisfies Column<ServiceCIDR>[],
  // upstream defines two columns but appends an age cell too; the server keeps rows as wide as the columns
  IPAddress: [NAME, col('ParentRef', 'string', ipParent)],
  PersistentVolume: [
    NAME,
    col('Capacity', 'string', (o) => quantity(o.spec?.capacity?.storage)),
    col('Access Modes', 'string', (o) => accessModes(o.spec?.accessModes)),
    col('Reclaim Policy', 'string', (o) => o.spec?.persistentVolumeReclaimPolicy ?? ''),
    col('Status', 'string', phaseOf),
    col('Claim', 'string', (o) =>
      o.spec?.claimRef ? `${o.spec.claimRef.namespace ?? ''}/${o.spec.claimRef.name ?? ''}` : '',
    ),
    lit('StorageClass', 'string', storageClassOf, 'StorageClass of the pv'),
    lit(
      'VolumeAttributesClass',
      'string',
      (o) => unset(o.spec?.volumeAttributesClassName),
      'VolumeAttributesClass of the pv',
    ),
    col('Reason', 'string', (o) => o.status?.reason ?? ''),
    AGE,
    col('VolumeMode', 'string', (o) => unset(o.spec?.volumeMode), 1),
  ] satisfies Column<PersistentVolume>[],
  PersistentVolumeClaim: [
    NAME,
    col('Status', 'string', phaseOf),
    col('Volume', 'string', (o) => o.spec?.volumeName ?? ''),
    col('Capacity', 'string', (o) => (claimBound(o) ? quantity(o.status?.capacity?.storage) : '')),
    col('Access Modes', 'string', (o) => (claimBound(o) ? accessModes(o.status?.accessModes) : '')),
    lit('StorageClass', 'string', storageClassOf, 'StorageClass of the pvc'),
    lit(
      'VolumeAttributesClass',
      'string',
      (o) => unset(o.spec?.volumeAttributesClassName),
      'VolumeAttributesClass of the pvc',
    ),
    AGE,
    col('VolumeMode', 'string', (o) => unset(o.spec?.volumeMode), 1),
  ] satisfies Column<PrintedClaim>[],
  StorageClass: [
    nameWithDefault(isDefaultClass),
    col('Provisioner', 'string', (o) => o.provisioner ?? ''),
    col('ReclaimPolicy', 'string', (o) => o.reclaimPolicy ?? 'Delete'),
    col('VolumeBindingMode', 'string', (o) => o.volumeBindingMode ?? 'Immediate'),
    col('AllowVolumeExpansion', 'string', (o) => o.allowVolumeExpansion === true),
    AGE,
  ] satisfies Column<StorageClass>[],
  VolumeAttributesClass: [
    nameWithDefault(
      (o) => domainValue(o.metadata?.annotations, 'volumeattributesclass.alpha.', '/is-default-class') === 'true',
    ),
    col('DriverName', 'string', (o) => o.driverName ?? ''),
    AGE,
  ] satisfies Column<VolumeAttributesClass>[],
  CSIDriver: [
    NAME,
    col('AttachRequired', 'boolean', (o) => o.spec?.attachRequired ?? true),
    col('PodInfoOnMount', 'boolean', (o) => o.spec?.podInfoOnMount ?? false),
    col('StorageCapacity', 'boolean', (o) => o.spec?.storageCapacity ?? false),
    col('TokenRequests', 'string', (o) =>
      Array.isArray(o.spec?.tokenRequests)
        ? o.spec.tokenRequests.map((t: { audience?: string } | null) => t?.audience ?? '').join(',')
        : '<unset>',
    ),
    col('RequiresRepublish', 'boolean', (o) => o.spec?.requiresRepublish ?? false),
    col('Modes', 'string', (o) => asList(o.spec?.volumeLifecycleModes).join(',') || '<none>'),
    AGE,
  ] satisfies Column<CSIDriver>[],
  CSINode: [
    NAME,
    lit(
      'Drivers',
      'integer',
      (o) => asList(o.spec?.drivers).length,
      'Drivers indicates the number of CSI drivers registered on the node',
    ),
    AGE,
  ] satisfies Column<CSINode>[],
  CSIStorageCapacity: [
    NAME,
    col('StorageClassName', 'string', (o) => o.storageClassName ?? ''),
    col('Capacity', 'string', (o) =>
      o.capacity === undefined || o.capacity === null ? '<unset>' : String(o.capacity),
    ),
  ] satisfies Column<CSIStorageCapacity>[],
  VolumeAttachment: [
    NAME,
    col('Attacher', 'string', (o) => o.spec?.attacher ?? '', 0, 'name'),
    col('PV', 'string', (o) => o.spec?.source?.persistentVolumeName ?? ''),
    col('Node', 'string', (o) => o.spec?.nodeName ?? ''),
    col('Attached', 'boolean', (o) => o.status?.attached === true),
    AGE,
  ] satisfies Column<VolumeAttachment>[],
  DeviceClass: [NAME, AGE],
  ResourceClaim: [
    NAME,
    lit('State', 'string', claimState, 'A summary of the current state (allocated, pending, reserved, etc.).'),
    AGE,
  ],
  ResourceClaimTemplate: [NAME, AGE],
  ResourceSlice: [
    NAME,
    col('Node', 'string', (o) => o.spec?.nodeName ?? ''),
    col('Driver', 'string', (o) => o.spec?.driver ?? ''),
    col('Pool', 'string', (o) => o.spec?.pool?.name ?? ''),
    AGE,
  ] satisfies Column<ResourceSlice>[],
};

/** The Name column with ` (default)` after the default class's name. */
function nameWithDefault<T extends KubeObject>(isDefault: (o: T) => boolean): Column<T> {
  return { ...NAME, cell: (o) => `${o.metadata?.name ?? ''}${isDefault(o) ? ' (default)' : ''}` };
}
