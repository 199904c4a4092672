/**
 * The RBAC authorizer (upstream plugin/pkg/auth/authorizer/rbac): allows when a rule of a role
 * bound to the user allows the request; otherwise no opinion (RBAC never denies), with the
 * missing roles as the reason. It answers from the in-memory index on the calling thread.
 */
import type { UserInfo } from '../../api/user.js';
import type { Attributes } from './attributes.js';
import type { Authorizer, AuthorizerResult, RulesResult } from './authorizer.js';
import type { RbacIndex } from './rbac-index.js';
import { ruleAllows, type PolicyRule } from './rbac-rules.js';

/** The rules granted to one user in one namespace, with who grants each. */
interface Granted {
  generation: number;
  rules: PolicyRule[];
  /** the allow reason of each rule (`RBAC: allowed by <binding>`), built once */
  reasons: string[];
  errors: string[];
}

/** upstream utilerrors.NewAggregate(...).Error(): one message as is, several as `[a, b]`. */
export function aggregateMessage(errors: readonly string[]): string {
  const uniq = [...new Set(errors)];
  return uniq.length === 1 ? uniq[0]! : `[${uniq.join(', ')}]`;
}

export class RbacAuthorizer implements Authorizer {
  readonly name = 'RBAC';
  /**
   * Granted rules per user object and namespace. Authenticators hand out the same UserInfo
   * object for the same credential, so a repeated request costs a WeakMap and a Map lookup;
   * any RBAC change (a new index generation) recomputes on next use.
   */
  private readonly cache = new WeakMap<UserInfo, Map<string, Granted>>();

  constructor(private readonly index: RbacIndex) {}

  authorize(a: Attributes): AuthorizerResult {
    const g = this.granted(a.user, a.namespace ?? '');
    for (let i = 0; i < g.rules.length; i++) {
      if (ruleAllows(a, g.rules[i]!)) return { decision: 'allow', reason: g.reasons[i]! };
    }
    return { decision: 'noOpinion', reason: g.errors.length ? `RBAC: ${aggregateMessage(g.errors)}` : '' };
  }

  rulesFor(user: UserInfo, namespace: string): RulesResult {
    const g = this.granted(user, namespace);
    return {
      resourceRules: g.rules.filter((r) => (r.resources?.length ?? 0) > 0),
      nonResourceRules: g.rules.filter((r) => (r.nonResourceURLs?.length ?? 0) > 0),
      incomplete: false,
      errors: g.errors,
    };
  }

  /** Every rule the user holds in the namespace (cluster-wide ones included), for escalation checks. */
  allRules(user: UserInfo, namespace: string): { rules: PolicyRule[]; errors: string[] } {
    const g = this.granted(user, namespace);
    return { rules: g.rules, errors: g.errors };
  }

  private granted(user: UserInfo, namespace: string): Granted {
    let perUser = this.cache.get(user);
    const hit = perUser?.get(namespace);
    if (hit && hit.generation === this.index.generation) return hit;
    const g: Granted = { generation: this.index.generation, rules: [], reasons: [], errors: [] };
    let source = '',
      reason = '';
    this.index.visitRulesFor(
      user,
      namespace,
      (s, rule) => {
        if (s !== source) reason = `RBAC: allowed by ${(source = s)}`;
        g.rules.push(rule);
        g.reasons.push(reason);
        return true;
      },
      (m) => {
        // the informer listers' NotFound, as upstream's authorizer reports it
        g.errors.push(
          m.kind === 'Role' || m.kind === 'ClusterRole'
            ? `${m.kind.toLowerCase()}.${this.index.group} ${JSON.stringify(m.name)} not found`
            : `unsupported role reference kind: ${JSON.stringify(m.kind)}`,
        );
      },
    );
    if (!perUser) this.cache.set(user, (perUser = new Map()));
    perUser.set(namespace, g);
    return g;
  }
}
