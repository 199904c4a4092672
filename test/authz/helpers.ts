/** Shared fixtures of the authorization tests: RBAC objects and the change events that carry them. */
import type { ChangeEvent } from '../../src/actors/protocol.js';
import type { PolicyRule } from '../../src/auth/authz/rbac-rules.js';
import { makeIdentity } from '../../src/api/identity.js';
import { RbacIndex } from '../../src/auth/authz/rbac-index.js';
import { RbacAuthorizer } from '../../src/auth/authz/rbac.js';
import { buildChain } from '../../src/auth/authz/authorizer.js';
import { EscalationCheck } from '../../src/auth/authz/escalation.js';

const G = 'rbac.authorization.plat.io';
let rv = 1;

/** A committed change of an RBAC object, as the actors report it. */
export function event(type: ChangeEvent['type'], resource: string, obj: any): ChangeEvent {
  const ns = obj.metadata.namespace ?? '';
  return {
    typeKey: `${G}/${resource}`,
    type,
    rv: rv++,
    namespace: ns,
    name: obj.metadata.name,
    json: JSON.stringify(obj),
    labels: obj.metadata.labels,
    fields: {},
    apiVersion: `${G}/v1`,
    uid: `u-${obj.metadata.name}`,
  };
}
export const role = (name: string, rules: PolicyRule[], namespace?: string, extra: object = {}) => ({
  metadata: { name, namespace },
  rules,
  ...extra,
});
export const bindingTo = (name: string, kind: string, roleName: string, subjects: object[], namespace?: string) => ({
  metadata: { name, namespace },
  roleRef: { apiGroup: G, kind, name: roleName },
  subjects,
});

/**
 * Grants `rules` to `groups` across the cluster through the plain port (which skips
 * authorization): for suites about something else that run on the authorizing secure port.
 */
export async function grant(plainUrl: string, name: string, rules: PolicyRule[], groups: string[]): Promise<void> {
  const { request } = await import('../helpers/server.js');
  const subjects = groups.map((g) => ({ kind: 'Group', apiGroup: G, name: g }));
  for (const [path, body] of [
    [`/apis/${G}/v1/clusterroles`, { metadata: { name }, rules }],
    [
      `/apis/${G}/v1/clusterrolebindings`,
      { metadata: { name }, roleRef: { apiGroup: G, kind: 'ClusterRole', name }, subjects },
    ],
  ] as const) {
    const r = await request(plainUrl, 'POST', path, body);
    if (r.status !== 201) throw new Error(`grant ${name}: ${r.status} ${r.text}`);
  }
}

/** An escalation check over an empty RBAC index, and `put` to add RBAC objects to that index. */
export function escalationFixture(): { check: EscalationCheck; put: (resource: string, obj: object) => void } {
  const index = new RbacIndex(makeIdentity());
  index.load([]);
  const rbac = new RbacAuthorizer(index);
  const check = new EscalationCheck({ authorizer: buildChain(['RBAC'], { RBAC: rbac }), rbac, index });
  const put = (resource: string, obj: object) => {
    index.apply([event('ADDED', resource, obj)]);
  };
  return { check, put };
}
