/**
 * The Node authorizer (upstream plugin/pkg/auth/authorizer/node): requests of a node agent
 * (`system:node:<name>` in `system:nodes`) are subdivided by resource. Secrets, config maps,
 * claims, volumes and service account tokens are allowed only when related to a pod bound to
 * the node (NodeGraph); with AuthorizeNodeWithSelectors (on by default, as upstream 1.32) Node
 * objects and pods are limited to the node's own Node and its pods (list/watch of pods only
 * with `spec.nodeName=<node>`); leases only the node's own in the node-lease namespace; the rest
 * by upstream's static node rules. Never denies: anything else is no opinion for RBAC to see.
 */
import { groupFor, type Identity } from '../../api/identity.js';
import type { UserInfo } from '../../api/user.js';
import type { Attributes } from './attributes.js';
import { ALLOW, type Authorizer, type AuthorizerResult, type RulesResult } from './authorizer.js';
import type { NodeGraph, RefKind } from './node-graph.js';
import { ruleAllows, type PolicyRule } from './rbac-rules.js';
import type { SelectorRequirement } from './selectors.js';

export const NODES_GROUP = 'system:nodes';
export const NODE_USER_PREFIX = 'system:node:';

/** upstream NodeIdentifier: the node name, '' for a node user without one, undefined for others. */
export function nodeIdentity(u: UserInfo): string | undefined {
  if (!u.groups.includes(NODES_GROUP)) return undefined;
  return u.username.startsWith(NODE_USER_PREFIX) ? u.username.slice(NODE_USER_PREFIX.length) : '';
}

const NO_OPINION: AuthorizerResult = Object.freeze({ decision: 'noOpinion', reason: '' });
const no = (reason: string): AuthorizerResult => ({ decision: 'noOpinion', reason });
const rule = (verbs: string[], apiGroups: string[], resources: string[]): PolicyRule => ({
  verbs,
  apiGroups,
  resources,
});

/** upstream bootstrappolicy.NodeRules (what is not subdivided by the graph). */
export function nodeRules(identity: Identity, selectors: boolean): PolicyRule[] {
  const g = (ref: string) => groupFor(identity, ref);
  const read = ['get', 'list', 'watch'];
  const rules = [
    rule(['create'], [g('authentication.plat.io')], ['tokenreviews']),
    rule(['create'], [g('authorization.plat.io')], ['subjectaccessreviews', 'localsubjectaccessreviews']),
    rule(read, [''], ['services']),
    rule(['create', 'update', 'patch'], ['', g('events.plat.io')], ['events']),
    rule(['get'], [''], ['endpoints']),
    rule(['create', 'get', 'list', 'watch'], [g('certificates.plat.io')], ['certificatesigningrequests']),
    rule(['get'], [g('storage.plat.io')], ['volumeattachments']),
    rule(['get', 'create', 'update', 'patch', 'delete'], [g('storage.plat.io')], ['csinodes']),
    rule(read, [g('node.plat.io')], ['runtimeclasses']),
  ];
  // without the selector features, Node objects and pods fall back to the static rules
  if (!selectors) {
    rules.push(
      rule(['create', 'get', 'list', 'watch', 'update', 'patch'], [''], ['nodes']),
      rule(['update', 'patch'], [''], ['nodes/status']),
      rule([...read, 'create', 'delete'], [''], ['pods']),
      rule(['update', 'patch'], [''], ['pods/status']),
      rule(['create'], [''], ['pods/eviction']),
    );
  }
  return rules;
}

export class NodeAuthorizer implements Authorizer {
  readonly name = 'Node';
  private readonly rules: PolicyRule[];
  private readonly coordination: string;

  constructor(
    private readonly graph: NodeGraph,
    private readonly identity: Identity,
    private readonly selectors = true,
  ) {
    this.rules = nodeRules(identity, selectors);
    this.coordination = groupFor(identity, 'coordination.plat.io');
  }

  authorize(a: Attributes): AuthorizerResult {
    const node = nodeIdentity(a.user);
    if (node === undefined) return NO_OPINION;
    if (!node) return no(`unknown node for user ${JSON.stringify(a.user.username)}`);
    if (a.resourceRequest) {
      const r = this.subdivided(node, a);
      if (r) return r;
    }
    return this.rules.some((x) => ruleAllows(a, x)) ? ALLOW : NO_OPINION;
  }

  /** The resources the node authorizer decides itself; undefined for the static rules. */
  private subdivided(node: string, a: Attributes): AuthorizerResult | undefined {
    if (a.apiGroup === this.coordination && a.resource === 'leases') return this.lease(node, a);
    if (a.apiGroup !== '') return undefined;
    switch (a.resource) {
      case 'secrets':
        return this.readNamespaced(node, 'secrets', a);
      case 'configmaps':
        return this.readNamespaced(node, 'configmaps', a);
      case 'persistentvolumeclaims':
        if (a.subresource === 'status') return this.statusUpdate(node, a);
        return this.get(node, a, () => this.related(node, 'persistentvolumeclaims', a));
      case 'persistentvolumes':
        return this.get(node, a, () => (this.graph.reachesVolume(node, a.name!) ? ALLOW : this.unrelated(node)));
      case 'serviceaccounts':
        return this.token(node, a);
      case 'nodes':
        return this.selectors ? this.nodeObject(node, a) : undefined;
      case 'pods':
        return this.selectors ? this.pod(node, a) : undefined;
      default:
        return undefined;
    }
  }

  private unrelated(node: string): AuthorizerResult {
    return no(`no relationship found between node '${node}' and this object`);
  }

  private related(node: string, kind: RefKind, a: Attributes): AuthorizerResult {
    if (!a.name) return no('No Object name found');
    return this.graph.reaches(node, kind, `${a.namespace ?? ''}/${a.name}`) ? ALLOW : this.unrelated(node);
  }

  private readNamespaced(node: string, kind: RefKind, a: Attributes): AuthorizerResult {
    if (a.verb !== 'get' && a.verb !== 'list' && a.verb !== 'watch') return no('can only read resources of this type');
    if (a.subresource) return no('cannot read subresource');
    if (!a.namespace) return no('can only read namespaced object of this type');
    return this.related(node, kind, a);
  }

  private get(_node: string, a: Attributes, decide: () => AuthorizerResult): AuthorizerResult {
    if (a.verb !== 'get') return no('can only get individual resources of this type');
    if (a.subresource) return no('cannot get subresource');
    if (!a.name) return no('No Object name found');
    return decide();
  }

  private statusUpdate(node: string, a: Attributes): AuthorizerResult {
    if (a.verb !== 'update' && a.verb !== 'patch' && a.verb !== 'get') return no('can only get/update/patch this type');
    return this.related(node, 'persistentvolumeclaims', a);
  }

  private token(node: string, a: Attributes): AuthorizerResult {
    if (a.verb !== 'create' || !a.name) return no('can only create tokens for individual service accounts');
    if (a.subresource !== 'token') return no('can only create token subresource of serviceaccount');
    return this.related(node, 'serviceaccounts', a);
  }

  private lease(node: string, a: Attributes): AuthorizerResult {
    if (!['get', 'create', 'update', 'patch', 'delete'].includes(a.verb))
      return no('can only get, create, update, patch, or delete a node lease');
    if (a.namespace !== this.identity.nodeLeaseNamespace)
      return no(`can only access leases in the ${JSON.stringify(this.identity.nodeLeaseNamespace)} system namespace`);
    // a create has no name yet; NodeRestriction checks the object's
    if (a.verb !== 'create' && a.name !== node)
      return no('can only access node lease with the same name as the requesting node');
    return ALLOW;
  }

  /** Its own Node object (and status); create is left to NodeRestriction, as upstream. */
  private nodeObject(node: string, a: Attributes): AuthorizerResult {
    if (a.subresource === 'status') {
      return (a.verb === 'get' || a.verb === 'update' || a.verb === 'patch') && a.name === node
        ? ALLOW
        : no(`node '${node}' cannot modify status of node '${a.name ?? ''}'`);
    }
    if (a.subresource) return NO_OPINION;
    if (a.verb === 'create') return ALLOW;
    if (['get', 'list', 'watch', 'update', 'patch', 'delete'].includes(a.verb) && a.name === node) return ALLOW;
    return no(`node '${node}' cannot ${a.verb} ${a.name ? `node '${a.name}'` : 'all nodes'}, only its own Node object`);
  }

  /** Its pods: get by the graph, list/watch with spec.nodeName=<node>, status and evictions of its pods, create/delete left to NodeRestriction. */
  private pod(node: string, a: Attributes): AuthorizerResult {
    const sub = a.subresource ?? '';
    if (sub === '') {
      if (a.verb === 'get') return this.related(node, 'pods', a);
      if (a.verb === 'list' || a.verb === 'watch') {
        return selectsNode(a.fieldSelector, node)
          ? ALLOW
          : no(`can only list/watch pods with spec.nodeName=${node} field selector`);
      }
      if (a.verb === 'create' || a.verb === 'delete') return ALLOW;
      return no(`node '${node}' cannot ${a.verb} pods`);
    }
    if (sub === 'status' && (a.verb === 'update' || a.verb === 'patch' || a.verb === 'get'))
      return this.related(node, 'pods', a);
    if (sub === 'eviction' && a.verb === 'create') return this.related(node, 'pods', a);
    return NO_OPINION;
  }

  /** upstream: nodes' permissions are not enumerable (incomplete, with the error); others get nothing here. */
  rulesFor(user: UserInfo): RulesResult {
    if (nodeIdentity(user) === undefined)
      return { resourceRules: [], nonResourceRules: [], incomplete: false, errors: [] };
    return {
      resourceRules: [],
      nonResourceRules: [],
      incomplete: true,
      errors: ['node authorizer does not support user rule resolution'],
    };
  }
}

/** upstream: a requirement `spec.nodeName=<node>` among the field selector's. */
function selectsNode(reqs: readonly SelectorRequirement[] | undefined, node: string): boolean {
  return !!reqs?.some(
    (r) => r.key === 'spec.nodeName' && r.operator === 'In' && r.values?.length === 1 && r.values[0] === node,
  );
}
