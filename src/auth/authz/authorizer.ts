/**
 * The authorizer contract and the chain (upstream's union authorizer): tri-state decisions,
 * consulted in order, the first allow or deny decides, no opinion from all is a deny.
 * `system:masters` is allowed before any configured mode, as upstream's privileged-group
 * authorizer (so even `AlwaysDeny` lets the loopback/admin group through).
 */
import { MASTERS_GROUP, type Decision, type MaybeAsync, type UserInfo } from '../../api/user.js';
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
 * authorizing listener and must not throw or reject (failures are results). Modes answering
 * from memory (RBAC, ABAC, Node, a webhook cache hit) answer synchronously, so the hot path
 * allocates no promise; a webhook call answers with a promise.
 */
export interface Authorizer {
  readonly name: string;
  authorize(a: Attributes): MaybeAsync<AuthorizerResult>;
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
    incomplete: false,
    errors: [],
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

/**
 * The chain: the first allow or deny decides; otherwise no opinion with every reason, one a
 * line. Synchronous as long as every consulted mode is; the list can be replaced at run time
 * (a reloaded --authorization-config) without the holders of the chain noticing.
 */
export class AuthorizerChain implements Authorizer {
  readonly name = 'Chain';
  constructor(public authorizers: readonly Authorizer[]) {}

  authorize(a: Attributes): MaybeAsync<AuthorizerResult> {
    return this.from(this.authorizers, a, 0, undefined, undefined);
  }

  private from(
    list: readonly Authorizer[],
    a: Attributes,
    i: number,
    reasons: string[] | undefined,
    errors: string[] | undefined,
  ): MaybeAsync<AuthorizerResult> {
    for (; i < list.length; i++) {
      const r = list[i]!.authorize(a);
      if (r instanceof Promise) {
        const next = i + 1;
        return r.then((res) => {
          if (res.decision !== 'noOpinion') return res;
          if (res.reason) (reasons ??= []).push(res.reason);
          if (res.error) (errors ??= []).push(res.error);
          return this.from(list, a, next, reasons, errors);
        });
      }
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

export const MODES = ['AlwaysAllow', 'AlwaysDeny', 'ABAC', 'Node', 'RBAC', 'Webhook'] as const;
export type Mode = (typeof MODES)[number];

/** The built-in modes; the others are built by the caller from their configuration. */
export const BUILT_IN: Partial<Record<Mode, Authorizer>> = { AlwaysAllow: alwaysAllow, AlwaysDeny: alwaysDeny };

/** The server's authorizers: system:masters first, then the configured modes in order. */
export function chainOf(authorizers: readonly Authorizer[]): Authorizer[] {
  return [privilegedGroups(MASTERS_GROUP), ...authorizers];
}

/** The chain of `--authorization-mode`: system:masters first, then each mode's authorizer. */
export function buildChain(modes: readonly Mode[], byMode: Partial<Record<Mode, Authorizer>>): AuthorizerChain {
  return new AuthorizerChain(
    chainOf(
      modes.map((m) => {
        const z = byMode[m] ?? BUILT_IN[m];
        if (!z) throw new Error(`authorization mode ${m} is not configured`);
        return z;
      }),
    ),
  );
}

/** Settles a maybe-async result: `then` at once when synchronous (no promise on the hot path). */
export function settle<T, U>(r: MaybeAsync<T>, then: (t: T) => MaybeAsync<U>): MaybeAsync<U> {
  return r instanceof Promise ? r.then(then) : then(r);
}
