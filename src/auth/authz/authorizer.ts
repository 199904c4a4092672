/**
 * The authorizer contract and the chain (upstream's union authorizer): tri-state decisions,
 * consulted in order, the first allow or deny decides, no opinion from all is a deny.
 * `system:masters` is allowed before any configured mode, as upstream's privileged-group
 * authorizer (so even `AlwaysDeny` lets the loopback/admin group through).
 */
import { MASTERS_GROUP, type Decision, type UserInfo } from '../types.js';
import type { Attributes } from './attributes.js';
import type { PolicyRule } from './rbac-rules.js';

export interface AuthorizerResult {
  decision: Decision;
  /** why; appended to the 403 message and returned in access reviews */
  reason: string;
  /** an evaluation error that did not stop the decision (access reviews' evaluationError) */
  error?: string;
}

/** What a user may do in a namespace (upstream RuleResolver), for SelfSubjectRulesReview and escalation checks. */
export interface RulesResult {
  resourceRules: PolicyRule[];
  nonResourceRules: PolicyRule[];
  incomplete: boolean;
  errors: string[];
}

/**
 * One authorization mode. `authorize` runs on the front thread for every request of an
 * authorizing listener and must not throw; it is synchronous because every mode so far answers
 * from memory (see docs/authorization.md for how it becomes asynchronous).
 */
export interface Authorizer {
  readonly name: string;
  authorize(a: Attributes): AuthorizerResult;
  /** the rules this mode grants the user in the namespace ('' = cluster scope) */
  rulesFor(user: UserInfo, namespace: string): RulesResult;
}

export const ALLOW: AuthorizerResult = Object.freeze({ decision: 'allow', reason: '' });
const NO_OPINION: AuthorizerResult = Object.freeze({ decision: 'noOpinion', reason: '' });
const NO_RULES = (): RulesResult => ({ resourceRules: [], nonResourceRules: [], incomplete: false, errors: [] });

export const alwaysAllow: Authorizer = {
  name: 'AlwaysAllow',
  authorize: () => ALLOW,
  rulesFor: () => ({
    resourceRules: [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'] }],
    nonResourceRules: [{ verbs: ['*'], nonResourceURLs: ['*'] }],
    incomplete: false, errors: [],
  }),
};

/** upstream: no opinion with a reason, so a later mode may still allow */
export const alwaysDeny: Authorizer = {
  name: 'AlwaysDeny',
  authorize: () => ({ decision: 'noOpinion', reason: 'Everything is forbidden.' }),
  rulesFor: NO_RULES,
};

/** Members of the privileged groups are allowed everything; it resolves no rules (RBAC shows theirs). */
export function privilegedGroups(...groups: string[]): Authorizer {
  return {
    name: 'PrivilegedGroups',
    authorize: (a) => (a.user.groups.some((g) => groups.includes(g)) ? ALLOW : NO_OPINION),
    rulesFor: NO_RULES,
  };
}

/** The chain: the first allow or deny decides; otherwise no opinion with every reason, one a line. */
export class AuthorizerChain implements Authorizer {
  readonly name = 'Chain';
  constructor(readonly authorizers: readonly Authorizer[]) {}

  authorize(a: Attributes): AuthorizerResult {
    let reasons: string[] | undefined, errors: string[] | undefined;
    for (const z of this.authorizers) {
      const r = z.authorize(a);
      if (r.decision !== 'noOpinion') return r;
      if (r.reason) (reasons ??= []).push(r.reason);
      if (r.error) (errors ??= []).push(r.error);
    }
    const out: AuthorizerResult = { decision: 'noOpinion', reason: reasons ? reasons.join('\n') : '' };
    if (errors) out.error = errors.join(', ');
    return out;
  }

  rulesFor(user: UserInfo, namespace: string): RulesResult {
    const out = NO_RULES();
    for (const z of this.authorizers) {
      const r = z.rulesFor(user, namespace);
      out.resourceRules.push(...r.resourceRules);
      out.nonResourceRules.push(...r.nonResourceRules);
      out.incomplete ||= r.incomplete;
      out.errors.push(...r.errors);
    }
    return out;
  }
}

export const MODES = ['AlwaysAllow', 'AlwaysDeny', 'RBAC'] as const;
export type Mode = (typeof MODES)[number];

/** The server's authorizer: system:masters first, then the configured modes in order. */
export function buildChain(modes: readonly Mode[], rbac: Authorizer): AuthorizerChain {
  const byName: Record<Mode, Authorizer> = { AlwaysAllow: alwaysAllow, AlwaysDeny: alwaysDeny, RBAC: rbac };
  return new AuthorizerChain([privilegedGroups(MASTERS_GROUP), ...modes.map((m) => byName[m])]);
}
