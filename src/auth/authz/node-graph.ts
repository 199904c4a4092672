/**
 * The node authorizer's graph (upstream plugin/pkg/auth/authorizer/node/graph): which objects
 * each node may reach through the pods bound to it. A pod with `spec.nodeName` contributes
 * itself, the secrets, config maps, persistent volume claims and service account it references;
 * a claim reaches its bound volume (`spec.volumeName`). Loaded from the objects the actors
 * report at start and kept current from the committed change events; only pods and claims are
 * parsed, and only when the node mode is on.
 */
import { typeKeyOf } from '../../actors/routing.js';
import type { CachedObject, ChangeEvent } from '../../actors/protocol.js';
import { fieldAt } from '../../api/object.js';

export type RefKind = 'pods' | 'secrets' | 'configmaps' | 'persistentvolumeclaims' | 'serviceaccounts';

interface PodRefs {
  node: string;
  refs: [RefKind, string][];
}

const POD_KEY = typeKeyOf('', 'pods');
const PVC_KEY = typeKeyOf('', 'persistentvolumeclaims');

/** The non-empty strings at `path` in each member of xs (xs?.[i]?.[path...]), [] when xs is no array. */
const names = (xs: unknown, ...path: string[]): string[] =>
  Array.isArray(xs)
    ? xs.map((x) => fieldAt(x, ...path)).filter((n): n is string => typeof n === 'string' && n !== '')
    : [];

type AddRefs = (kind: RefKind, list: string[]) => void;

/** A pod as stored, the fields the graph reads: unchecked, each is checked where read. */
type RawPod =
  | {
      metadata?: { namespace?: unknown; name?: unknown };
      spec?: {
        imagePullSecrets?: unknown;
        initContainers?: unknown;
        containers?: unknown;
        ephemeralContainers?: unknown;
        volumes?: unknown;
        serviceAccountName?: unknown;
      };
    }
  | null
  | undefined;

/** upstream podutil.VisitPodSecretNames / VisitPodConfigmapNames and the claim and account edges. */
export function podReferences(pod: RawPod): [RefKind, string][] {
  const ns = String(pod?.metadata?.namespace ?? ''),
    spec = pod?.spec ?? {};
  const out: [RefKind, string][] = [['pods', `${ns}/${pod?.metadata?.name ?? ''}`]];
  const add: AddRefs = (kind, list) => {
    for (const n of list) out.push([kind, `${ns}/${n}`]);
  };
  add('secrets', names(spec.imagePullSecrets, 'name'));
  for (const group of [spec.initContainers, spec.containers, spec.ephemeralContainers]) {
    if (!Array.isArray(group)) continue;
    for (const c of group) containerReferences(c, add);
  }
  for (const v of Array.isArray(spec.volumes) ? spec.volumes : []) {
    if (!v || typeof v !== 'object') continue;
    volumeReferences(v, pod?.metadata?.name, add);
  }
  if (typeof spec.serviceAccountName === 'string' && spec.serviceAccountName)
    add('serviceaccounts', [spec.serviceAccountName]);
  return out;
}

/** A container's secrets and config maps (env values and envFrom). */
function containerReferences(c: { env?: unknown; envFrom?: unknown } | null | undefined, add: AddRefs): void {
  add('secrets', names(c?.env, 'valueFrom', 'secretKeyRef', 'name'));
  add('secrets', names(c?.envFrom, 'secretRef', 'name'));
  add('configmaps', names(c?.env, 'valueFrom', 'configMapKeyRef', 'name'));
  add('configmaps', names(c?.envFrom, 'configMapRef', 'name'));
}

/** A volume's secrets, config maps and claims (an ephemeral volume's claim is `<pod>-<volume>`). */
function volumeReferences(
  v: Record<string, unknown> & { projected?: { sources?: unknown }; name?: unknown },
  podName: unknown,
  add: AddRefs,
): void {
  add('secrets', names([v.secret], 'secretName'));
  for (const src of ['azureFile'] as const) add('secrets', names([v[src]], 'secretName'));
  for (const src of ['cephfs', 'cinder', 'flexVolume', 'rbd', 'scaleIO', 'iscsi', 'storageos'] as const)
    add('secrets', names([v[src]], 'secretRef', 'name'));
  add('secrets', names([v.csi], 'nodePublishSecretRef', 'name'));
  add('configmaps', names([v.configMap], 'name'));
  const sources = Array.isArray(v.projected?.sources) ? v.projected.sources : [];
  add('secrets', names(sources, 'secret', 'name'));
  add('configmaps', names(sources, 'configMap', 'name'));
  add('persistentvolumeclaims', names([v.persistentVolumeClaim], 'claimName'));
  if (v.ephemeral && typeof v.name === 'string') add('persistentvolumeclaims', [`${podName}-${v.name}`]);
}

export class NodeGraph {
  /** per pod (`ns/name`): its node and references */
  private readonly pods = new Map<string, PodRefs>();
  /** per node: per kind, referenced keys with the number of pods referencing them */
  private readonly reach = new Map<string, Map<RefKind, Map<string, number>>>();
  /** every pod (`ns/name`) and its node ('' when unbound), for NodeRestriction */
  private readonly podNodes = new Map<string, string>();
  /** per claim (`ns/name`): the bound volume */
  private readonly volumes = new Map<string, string>();

  load(objects: readonly CachedObject[]): void {
    for (const o of objects) this.put(o.typeKey, o.namespace, o.name, o.json);
  }

  apply(events: readonly ChangeEvent[]): void {
    for (const ev of events) {
      if (ev.typeKey !== POD_KEY && ev.typeKey !== PVC_KEY) continue;
      if (ev.type === 'DELETED') this.remove(ev.typeKey, `${ev.namespace}/${ev.name}`);
      else this.put(ev.typeKey, ev.namespace, ev.name, ev.json);
    }
  }

  /** Whether the node reaches `ns/name` of the kind through one of its pods. */
  reaches(node: string, kind: RefKind, key: string): boolean {
    return (this.reach.get(node)?.get(kind)?.get(key) ?? 0) > 0;
  }

  /** Whether a persistent volume is bound to a claim the node reaches. */
  reachesVolume(node: string, pv: string): boolean {
    const claims = this.reach.get(node)?.get('persistentvolumeclaims');
    if (!claims) return false;
    for (const claim of claims.keys()) if (this.volumes.get(claim) === pv) return true;
    return false;
  }

  /** The node a pod is bound to ('' when unknown or unbound). */
  podNode(namespace: string, name: string): string {
    return this.podNodes.get(`${namespace}/${name}`) ?? '';
  }

  podKnown(namespace: string, name: string): boolean {
    return this.podNodes.has(`${namespace}/${name}`);
  }

  private put(typeKey: string, namespace: string, name: string, json: string): void {
    if (typeKey === PVC_KEY) {
      const volume = JSON.parse(json)?.spec?.volumeName;
      if (typeof volume === 'string' && volume) this.volumes.set(`${namespace}/${name}`, volume);
      else this.volumes.delete(`${namespace}/${name}`);
      return;
    }
    if (typeKey !== POD_KEY) return;
    const key = `${namespace}/${name}`;
    this.remove(POD_KEY, key);
    const pod = JSON.parse(json);
    const node = pod?.spec?.nodeName;
    this.podNodes.set(key, typeof node === 'string' ? node : '');
    if (typeof node !== 'string' || !node) return;
    const refs = podReferences(pod);
    this.pods.set(key, { node, refs });
    this.count(node, refs, 1);
  }

  private remove(typeKey: string, key: string): void {
    if (typeKey === PVC_KEY) {
      this.volumes.delete(key);
      return;
    }
    this.podNodes.delete(key);
    const old = this.pods.get(key);
    if (!old) return;
    this.pods.delete(key);
    this.count(old.node, old.refs, -1);
  }

  private count(node: string, refs: readonly [RefKind, string][], delta: number): void {
    let byKind = this.reach.get(node);
    if (!byKind) this.reach.set(node, (byKind = new Map()));
    for (const [kind, key] of refs) {
      let m = byKind.get(kind);
      if (!m) byKind.set(kind, (m = new Map()));
      const n = (m.get(key) ?? 0) + delta;
      if (n > 0) m.set(key, n);
      else m.delete(key);
    }
  }
}
