/**
 * The NodeRestriction admission plugin (upstream plugin/pkg/admission/noderestriction), enabled
 * with `--enable-admission-plugins=...,NodeRestriction`: a node agent (`system:node:<name>` in
 * `system:nodes`) may only create mirror pods bound to itself, delete, update the status of and
 * evict only pods bound to itself, create and modify only its own Node object, and create only
 * its own lease. Users that are not nodes are ignored. Runs on the front thread before the
 * write goes to its actor (the existing pod's node comes from the node graph).
 */
import { groupFor, type Identity } from '../../api/identity.js';
import type { UserInfo } from '../types.js';
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

export class NodeRestriction {
  private readonly coordination: string;
  private readonly mirrorAnnotation: string;

  constructor(private readonly graph: NodeGraph, identity: Identity) {
    this.coordination = groupFor(identity, 'coordination.plat.io');
    this.mirrorAnnotation = `${identity.product}.io/config.mirror`;
  }

  /** Whether the write is one the plugin checks: writes of pods, nodes and leases by a node. */
  applies(w: Omit<NodeWrite, 'namespace' | 'name'>): boolean {
    if (!nodeIdentity(w.user)) return false;
    if (w.apiGroup === this.coordination) return w.resource === 'leases' && w.verb === 'create';
    if (w.apiGroup !== '') return false;
    if (w.resource === 'nodes') return w.verb === 'create' || w.verb === 'update' || w.verb === 'patch';
    if (w.resource !== 'pods') return false;
    if (!w.subresource) return w.verb === 'create' || w.verb === 'delete';
    return (w.subresource === 'status' && (w.verb === 'update' || w.verb === 'patch')) || (w.subresource === 'eviction' && w.verb === 'create');
  }

  /** Throws upstream's admission 403 when the node oversteps; `obj` is the decoded body of a create. */
  check(w: NodeWrite, obj: any): void {
    const node = nodeIdentity(w.user)!;
    const name = String(obj?.metadata?.name ?? w.name);
    const refuse = (why: string) => { throw forbiddenError(w.resource, w.apiGroup, name, why); };
    if (w.resource === 'leases') {
      if (name !== node) refuse('can only access node lease with the same name as the requesting node');
      return;
    }
    if (w.resource === 'nodes') {
      if (name !== node) refuse(`node ${JSON.stringify(node)} is not allowed to modify node ${JSON.stringify(name)}`);
      return;
    }
    if (w.verb === 'create' && !w.subresource) return this.mirrorPod(node, obj, refuse);
    const bound = this.graph.podNode(w.namespace, w.name);
    // an unknown pod is left to the handler (404)
    if (!bound && !this.graph.podKnown(w.namespace, w.name)) return;
    if (bound === node) return;
    if (w.subresource === 'status') refuse(`node ${JSON.stringify(node)} can only update pod status for pods with spec.nodeName set to itself`);
    if (w.subresource === 'eviction') refuse(`node ${JSON.stringify(node)} can only evict pods with spec.nodeName set to itself`);
    refuse(`node ${JSON.stringify(node)} can only delete pods with spec.nodeName set to itself`);
  }

  private mirrorPod(node: string, pod: any, refuse: (why: string) => never): void {
    const annotations = pod?.metadata?.annotations ?? {};
    if (typeof annotations !== 'object' || !(this.mirrorAnnotation in annotations)) {
      refuse(`pod does not have ${JSON.stringify(this.mirrorAnnotation)} annotation, node ${JSON.stringify(node)} can only create mirror pods`);
    }
    if (pod?.spec?.nodeName !== node) refuse(`node ${JSON.stringify(node)} can only create pods with spec.nodeName set to itself`);
    const spec = pod?.spec ?? {};
    if (typeof spec.serviceAccountName === 'string' && spec.serviceAccountName) refuse(`node ${JSON.stringify(node)} can not create pods that reference a service account`);
    const refs = JSON.stringify(spec);
    if (/"(secretName|secretRef|secretKeyRef|nodePublishSecretRef)"/.test(refs) || (Array.isArray(spec.imagePullSecrets) && spec.imagePullSecrets.length)) {
      refuse(`node ${JSON.stringify(node)} can not create pods that reference secrets`);
    }
    if (/"(configMap|configMapRef|configMapKeyRef)"/.test(refs)) refuse(`node ${JSON.stringify(node)} can not create pods that reference configmaps`);
    if (/"persistentVolumeClaim"/.test(refs)) refuse(`node ${JSON.stringify(node)} can not create pods that reference persistentvolumeclaims`);
  }
}
