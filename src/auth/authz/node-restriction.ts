/**
 * The NodeRestriction admission plugin (upstream plugin/pkg/admission/noderestriction), enabled
 * with `--enable-admission-plugins=...,NodeRestriction`: a node agent (`system:node:<name>` in
 * `system:nodes`) may only create mirror pods bound to itself, delete, update the status of and
 * evict only pods bound to itself, create and modify only its own Node object (without changing
 * its taints or setting labels of the product's domains other than the kubelet's), create
 * only its own lease, and request service account tokens only bound to its own pods. Users that are not nodes are ignored. Runs on the front thread before the
 * write goes to its actor (the existing pod's node comes from the node graph).
 */
import { groupFor, type Identity } from '../../api/identity.js';
import { fieldAt, isRecord } from '../../api/object.js';
import type { UserInfo } from '../../api/user.js';
import { forbiddenError } from './attributes.js';
import type { NodeGraph } from './node-graph.js';
import { nodeIdentity } from './node.js';

/** What a checked write is about. */
export interface NodeWrite {
  user: UserInfo;
  verb: string;
  apiGroup: string;
  resource: string;
  subresource: string;
  namespace: string;
  /** the name in the path ('' for a create) */
  name: string;
}

/** upstream getModifiedLabels: keys added, removed or changed. */
function modifiedLabels(now: unknown, before: unknown): string[] {
  // labels as written (validation comes later): a non-object has no keys with a domain to refuse
  const a = isRecord(now) ? now : {},
    b = isRecord(before) ? before : {};
  const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
  return [...keys].filter((k) => a[k] !== b[k]);
}

/** A member of a JSON object, or undefined when v is not one. */
const field = (v: unknown, key: string): unknown =>
  v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>)[key] : undefined;

export class NodeRestriction {
  private readonly coordination: string;
  private readonly mirrorAnnotation: string;

  private readonly restrictionDomain: string;
  private readonly ownDomains: string[];
  private readonly kubeletDomains: string[];
  private readonly kubeletLabels: Set<string>;

  constructor(
    private readonly graph: NodeGraph,
    identity: Identity,
  ) {
    this.coordination = groupFor(identity, 'coordination.plat.io');
    const p = `${identity.product}.io`;
    this.mirrorAnnotation = `${p}/config.mirror`;
    this.restrictionDomain = `node-restriction.${p}`;
    this.ownDomains = [...new Set([p, identity.domain])];
    this.kubeletDomains = [`kubelet.${p}`, `node.${p}`];
    this.kubeletLabels = new Set([
      `${p}/hostname`,
      `topology.${p}/zone`,
      `topology.${p}/region`,
      `failure-domain.beta.${p}/zone`,
      `failure-domain.beta.${p}/region`,
      `beta.${p}/instance-type`,
      `node.${p}/instance-type`,
      `beta.${p}/os`,
      `beta.${p}/arch`,
      `${p}/os`,
      `${p}/arch`,
    ]);
  }

  /** Whether the write is one the plugin checks: writes of pods, nodes and leases by a node. */
  applies(w: Omit<NodeWrite, 'namespace' | 'name'>): boolean {
    if (!nodeIdentity(w.user)) return false;
    if (w.apiGroup === this.coordination) return w.resource === 'leases' && w.verb === 'create';
    if (w.apiGroup !== '') return false;
    if (w.resource === 'nodes') return w.verb === 'create' || w.verb === 'update' || w.verb === 'patch';
    if (w.resource !== 'pods') return false;
    if (!w.subresource) return w.verb === 'create' || w.verb === 'delete';
    return (
      (w.subresource === 'status' && (w.verb === 'update' || w.verb === 'patch')) ||
      (w.subresource === 'eviction' && w.verb === 'create')
    );
  }

  /** Whether the check needs the object written and the stored one (a node updating its own Node). */
  needsObjects(w: Omit<NodeWrite, 'namespace'>): boolean {
    return (
      w.resource === 'nodes' &&
      !w.subresource &&
      (w.verb === 'update' || w.verb === 'patch') &&
      w.name === nodeIdentity(w.user)
    );
  }

  /**
   * Throws upstream's admission 403 when the node oversteps; `obj` is the object a create or an
   * update of its Node would store, `old` the stored Node of an update.
   */
  check(w: NodeWrite, obj: unknown, old?: unknown): void {
    const node = nodeIdentity(w.user)!;
    const name = String(fieldAt(obj, 'metadata', 'name') ?? w.name);
    const refuse = (why: string) => {
      throw forbiddenError(w.resource, w.apiGroup, name, why);
    };
    if (w.resource === 'leases') {
      if (name !== node) refuse('can only access node lease with the same name as the requesting node');
      return;
    }
    if (w.resource === 'nodes') {
      if (name !== node) refuse(`node ${JSON.stringify(node)} is not allowed to modify node ${JSON.stringify(name)}`);
      if (w.subresource || !obj) return;
      if (w.verb === 'create') {
        const bad = this.forbiddenLabels(modifiedLabels(fieldAt(obj, 'metadata', 'labels'), undefined));
        if (bad.length)
          refuse(`node ${JSON.stringify(node)} is not allowed to set the following labels: ${bad.join(', ')}`);
        return;
      }
      if (!old) return;
      if (JSON.stringify(fieldAt(obj, 'spec', 'taints') ?? []) !== JSON.stringify(fieldAt(old, 'spec', 'taints') ?? []))
        refuse(`node ${JSON.stringify(node)} is not allowed to modify taints`);
      const bad = this.forbiddenLabels(
        modifiedLabels(fieldAt(obj, 'metadata', 'labels'), fieldAt(old, 'metadata', 'labels')),
      );
      if (bad.length) refuse(`is not allowed to modify labels: ${bad.join(', ')}`);
      return;
    }
    if (w.verb === 'create' && !w.subresource) return this.mirrorPod(node, obj, refuse);
    const bound = this.graph.podNode(w.namespace, w.name);
    // an unknown pod is left to the handler (404)
    if (!bound && !this.graph.podKnown(w.namespace, w.name)) return;
    if (bound === node) return;
    if (w.subresource === 'status')
      refuse(`node ${JSON.stringify(node)} can only update pod status for pods with spec.nodeName set to itself`);
    if (w.subresource === 'eviction')
      refuse(`node ${JSON.stringify(node)} can only evict pods with spec.nodeName set to itself`);
    refuse(`node ${JSON.stringify(node)} can only delete pods with spec.nodeName set to itself`);
  }

  /**
   * upstream getForbiddenLabels: the node-restriction domain, and labels of the product's own
   * domains (`<product>.io`, the API domain, and their subdomains) except the kubelet's labels.
   */
  private forbiddenLabels(keys: string[]): string[] {
    return keys
      .filter((k) => {
        const slash = k.indexOf('/');
        if (slash < 0) return false;
        const domain = k.slice(0, slash);
        const within = (d: string) => domain === d || domain.endsWith(`.${d}`);
        if (within(this.restrictionDomain)) return true;
        if (!this.ownDomains.some(within)) return false;
        return !this.kubeletLabels.has(k) && !this.kubeletDomains.some(within);
      })
      .sort();
  }

  /**
   * upstream admitServiceAccount: a TokenRequest by a node must be bound to a Pod (v1, with a
   * name and uid) that exists, has that uid and is scheduled on the node, so a node can never
   * mint an unbound token (which would outlive its pods). Non-node users pass. `getPod` answers
   * the stored pod or throws its StatusError (404 when absent, as upstream).
   */
  async checkTokenRequest(
    user: UserInfo,
    namespace: string,
    name: string,
    tr: unknown,
    getPod: (ns: string, name: string) => Promise<unknown>,
  ): Promise<void> {
    const node = nodeIdentity(user);
    if (node === undefined) return;
    const refuse = (why: string): never => {
      throw forbiddenError('serviceaccounts', '', name, why);
    };
    const ref = field(field(tr, 'spec'), 'boundObjectRef');
    const refName = field(ref, 'name'),
      uid = field(ref, 'uid');
    if (field(ref, 'apiVersion') !== 'v1' || field(ref, 'kind') !== 'Pod' || typeof refName !== 'string' || !refName)
      refuse('node requested token not bound to a pod');
    if (typeof uid !== 'string' || !uid) return refuse('node requested token with a pod binding without a uid');
    const pod = await getPod(namespace, refName as string);
    if (uid !== field(field(pod, 'metadata'), 'uid')) {
      refuse(
        `the UID in the bound object reference (${uid}) does not match the UID in record. The object might have been deleted and then recreated`,
      );
    }
    if (field(field(pod, 'spec'), 'nodeName') !== node)
      refuse('node requested token bound to a pod scheduled on a different node');
  }

  private mirrorPod(node: string, pod: unknown, refuse: (why: string) => never): void {
    const annotations = fieldAt(pod, 'metadata', 'annotations') ?? {};
    if (typeof annotations !== 'object' || annotations === null || !(this.mirrorAnnotation in annotations)) {
      refuse(
        `pod does not have ${JSON.stringify(this.mirrorAnnotation)} annotation, node ${JSON.stringify(node)} can only create mirror pods`,
      );
    }
    if (fieldAt(pod, 'spec', 'nodeName') !== node)
      refuse(`node ${JSON.stringify(node)} can only create pods with spec.nodeName set to itself`);
    const spec = fieldAt(pod, 'spec') ?? {};
    const account = fieldAt(spec, 'serviceAccountName');
    if (typeof account === 'string' && account)
      refuse(`node ${JSON.stringify(node)} can not create pods that reference a service account`);
    const refs = JSON.stringify(spec);
    const pullSecrets = fieldAt(spec, 'imagePullSecrets');
    if (
      /"(secretName|secretRef|secretKeyRef|nodePublishSecretRef)"/.test(refs) ||
      (Array.isArray(pullSecrets) && pullSecrets.length)
    ) {
      refuse(`node ${JSON.stringify(node)} can not create pods that reference secrets`);
    }
    if (/"(configMap|configMapRef|configMapKeyRef)"/.test(refs))
      refuse(`node ${JSON.stringify(node)} can not create pods that reference configmaps`);
    if (/"persistentVolumeClaim"/.test(refs))
      refuse(`node ${JSON.stringify(node)} can not create pods that reference persistentvolumeclaims`);
  }
}
