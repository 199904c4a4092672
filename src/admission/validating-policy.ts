/**
 * The ValidatingAdmissionPolicy plugin (upstream plugin/pkg/admission/validatingadmissionpolicy),
 * without parameters: ValidatingAdmissionPolicies and their Bindings are kept current from the
 * change events and compiled once (CEL via @bufbuild/cel). A request matching a binding's policy
 * (matchConstraints resourceRules minus excludeResourceRules, selectors, the binding's own
 * matchResources, matchConditions) has every validation evaluated over `object`, `oldObject`,
 * `request`, `namespaceObject` and `variables`; a false one is, per the binding's
 * validationActions, a denial (`ValidatingAdmissionPolicy 'p' with binding 'b' denied request:
 * <message>`, code from its reason, 422 Invalid by default), a warning, or an audit annotation.
 * An evaluation error follows the policy's failurePolicy (default Fail).
 */
import { cel, standardCelEnv } from '../cel/lazy.js';
import { StatusError, type Status } from '../api/status.js';
import { groupFor, type Identity } from '../api/identity.js';
import { labelSelectorFromObject, type LabelSelector } from '../api/selectors.js';
import type { CachedObject, ChangeEvent } from '../actors/protocol.js';
import type { Informer } from '../actors/informer.js';
import { typeKeyOf } from '../actors/routing.js';
import type { ReadCache } from '../actors/read-cache.js';
import {
  labelsOf,
  nameOf,
  type AdmissionAttributes,
  type AdmissionPlugin,
  type RequestAttributes,
} from './attributes.js';
import { ruleMatches, type RawRule } from './webhook/matching.js';
import { fieldAt } from '../api/object.js';

type Program = (ctx: Record<string, unknown>) => unknown;
interface Expr {
  expression: string;
  run?: Program;
  error?: string;
}
/** A resource rule of a policy, unchecked (null: a malformed list item). */
type PolicyRule = (RawRule & { resourceNames?: unknown }) | null;
interface Resources {
  rules: PolicyRule[];
  exclude: PolicyRule[];
  ns: LabelSelector;
  obj: LabelSelector;
  given: boolean;
}
interface Policy {
  name: string;
  failurePolicy: string;
  match: Resources;
  conditions: (Expr & { name: string })[];
  variables: (Expr & { name: string })[];
  validations: (Expr & { message?: string; messageExpression?: Expr; reason: string })[];
}
interface Binding {
  name: string;
  policyName: string;
  actions: string[];
  match: Resources;
  params: boolean;
}

const CODES: Record<string, number> = { Unauthorized: 401, Forbidden: 403, Invalid: 422, RequestEntityTooLarge: 413 };

function compile(expression: unknown): Expr {
  const e = String(expression ?? '');
  try {
    return { expression: e, run: cel().plan(standardCelEnv(), cel().parse(e)) as unknown as Program };
  } catch (err) {
    return { expression: e, error: (err as Error).message };
  }
}

function selector(s: unknown): LabelSelector {
  try {
    return labelSelectorFromObject((s ?? {}) as never);
  } catch {
    return labelSelectorFromObject(undefined);
  }
}

/** A match condition, variable or validation of a policy as written (each field read with a default). */
type PolicyEntry = {
  name?: unknown;
  expression?: unknown;
  message?: unknown;
  messageExpression?: unknown;
  reason?: unknown;
} | null;

function resources(m: unknown): Resources {
  const rules = fieldAt(m, 'resourceRules'),
    exclude = fieldAt(m, 'excludeResourceRules');
  return {
    rules: Array.isArray(rules) ? rules : [],
    exclude: Array.isArray(exclude) ? exclude : [],
    ns: selector(fieldAt(m, 'namespaceSelector')),
    obj: selector(fieldAt(m, 'objectSelector')),
    given: !!m,
  };
}

/** A resource rule of a policy: resourceNames restrict by name too. */
function matchesRule(rule: PolicyRule, a: RequestAttributes & { name: string }): boolean {
  if (!ruleMatches(rule, a)) return false;
  const names = rule?.resourceNames;
  return !Array.isArray(names) || names.length === 0 || names.includes(a.name);
}

export class ValidatingPolicyPlugin implements Informer, AdmissionPlugin {
  readonly name = 'ValidatingAdmissionPolicy';
  private readonly keys: { policy: string; binding: string };
  private readonly policies = new Map<string, Policy>();
  private readonly bindings = new Map<string, Binding>();
  private readonly auditKey: string;

  constructor(
    private readonly identity: Identity,
    private readonly readCache: ReadCache,
  ) {
    const g = groupFor(identity, 'admissionregistration.plat.io');
    this.keys = {
      policy: typeKeyOf(g, 'validatingadmissionpolicies'),
      binding: typeKeyOf(g, 'validatingadmissionpolicybindings'),
    };
    this.auditKey = `validation.policy.admission.${identity.domain}/validation_failure`;
  }

  load(objects: readonly CachedObject[]): void {
    for (const o of objects) this.set(o.typeKey, o.name, o.json);
  }
  observe(evs: readonly ChangeEvent[]): void {
    for (const ev of evs) this.set(ev.typeKey, ev.name, ev.type === 'DELETED' ? undefined : ev.json);
  }

  private set(typeKey: string, name: string, json: string | undefined): void {
    if (typeKey !== this.keys.policy && typeKey !== this.keys.binding) return;
    const obj = json === undefined ? undefined : JSON.parse(json);
    if (typeKey === this.keys.policy) {
      if (!obj) {
        this.policies.delete(name);
        return;
      }
      const spec = obj.spec ?? {};
      this.policies.set(name, {
        name,
        failurePolicy: spec.failurePolicy ?? 'Fail',
        match: resources(spec.matchConstraints),
        conditions: (spec.matchConditions ?? []).map((c: PolicyEntry) => ({
          name: String(c?.name ?? ''),
          ...compile(c?.expression),
        })),
        variables: (spec.variables ?? []).map((v: PolicyEntry) => ({
          name: String(v?.name ?? ''),
          ...compile(v?.expression),
        })),
        validations: (spec.validations ?? []).map((v: PolicyEntry) => ({
          ...compile(v?.expression),
          ...(v?.message ? { message: String(v.message) } : {}),
          ...(v?.messageExpression ? { messageExpression: compile(v.messageExpression) } : {}),
          reason: String(v?.reason ?? 'Invalid'),
        })),
      });
    } else {
      if (!obj) {
        this.bindings.delete(name);
        return;
      }
      const spec = obj.spec ?? {};
      this.bindings.set(name, {
        name,
        policyName: String(spec.policyName ?? ''),
        actions: Array.isArray(spec.validationActions) ? spec.validationActions : [],
        match: resources(spec.matchResources),
        params: !!spec.paramRef,
      });
    }
  }

  private exempt(a: RequestAttributes): boolean {
    return (
      a.group === groupFor(this.identity, 'admissionregistration.plat.io') &&
      /^(validating|mutating)(admissionpolic(y|ies)|admissionpolicybindings|webhookconfigurations)$/.test(a.resource)
    );
  }

  private rulesMatch(m: Resources, a: RequestAttributes, required: boolean): boolean {
    if (!m.given || m.rules.length === 0) return !required;
    return m.rules.some((r) => matchesRule(r, a)) && !m.exclude.some((r) => matchesRule(r, a));
  }

  private pairs(a: RequestAttributes): { b: Binding; p: Policy }[] {
    if (this.bindings.size === 0 || this.exempt(a)) return [];
    const out: { b: Binding; p: Policy }[] = [];
    for (const b of [...this.bindings.values()].sort((x, y) => (x.name < y.name ? -1 : 1))) {
      const p = this.policies.get(b.policyName);
      if (p && this.rulesMatch(p.match, a, true) && this.rulesMatch(b.match, a, false)) out.push({ b, p });
    }
    return out;
  }

  handles(a: RequestAttributes): boolean {
    // every write asks: without bindings, nothing is allocated
    return this.bindings.size > 0 && this.pairs(a).length > 0;
  }

  validate(a: AdmissionAttributes): void {
    const nsJson = a.namespaced && a.namespace ? this.readCache.get('/namespaces', '', a.namespace, 'v1') : undefined;
    const nsLabels = nsJson ? (JSON.parse(nsJson).metadata?.labels ?? {}) : undefined;
    const request = {
      operation: a.operation,
      name: a.name || nameOf(a.object) || '',
      namespace: a.namespace,
      kind: a.kind,
      resource: { group: a.group, version: a.version, resource: a.resource },
      subResource: a.subresource,
      dryRun: a.dryRun,
      userInfo: { username: a.user.username, groups: a.user.groups, ...(a.user.uid ? { uid: a.user.uid } : {}) },
    };
    const vars: Record<string, unknown> = {
      object: a.object ?? null,
      oldObject: a.oldObject ?? null,
      request,
      namespaceObject: nsJson ? JSON.parse(nsJson) : null,
      params: null,
    };
    const audits: unknown[] = [];
    for (const { b, p } of this.pairs(a)) {
      if (!this.selectorsMatch(p.match, a, nsLabels) || !this.selectorsMatch(b.match, a, nsLabels)) continue;
      this.evaluate(b, p, a, vars, audits);
    }
    if (audits.length) a.annotations[this.auditKey] = JSON.stringify(audits);
  }

  /**
   * One matching binding of a policy: its match conditions, variables and validations over the
   * CEL variables; a failed validation denies (throws), warns or is recorded in audits by the
   * binding's validationActions.
   */
  private evaluate(
    b: Binding,
    p: Policy,
    a: AdmissionAttributes,
    vars: Record<string, unknown>,
    audits: unknown[],
  ): void {
    const deny = (message: string, reason = 'Invalid') => this.deny(b, p, a, audits, message, reason);
    const failed = (message: string) => {
      if (p.failurePolicy !== 'Ignore') deny(message);
    };
    if (b.params) {
      failed('failed to configure binding: params are not supported by this server');
      return;
    }
    const cond = this.conditions(p, vars);
    if (cond === false) return;
    if (typeof cond === 'string') {
      failed(cond);
      return;
    }
    const variables: Record<string, unknown> = {};
    for (const v of p.variables) variables[v.name] = v.run ? safe(v.run, { ...vars, variables }) : undefined;
    for (const v of p.validations) {
      if (!v.run) {
        failed(`compilation error: ${v.error}`);
        continue;
      }
      const r = safe(v.run, { ...vars, variables });
      if (r === true) continue;
      if (r !== false) {
        failed(
          `expression '${v.expression}' resulted in error: ${r instanceof Error || cel().isCelError(r) ? (r as Error).message : 'must evaluate to bool'}`,
        );
        continue;
      }
      let message = v.message ?? `failed expression: ${v.expression}`;
      if (v.messageExpression?.run) {
        const m = safe(v.messageExpression.run, { ...vars, variables });
        if (typeof m === 'string' && m.trim() && !m.includes('\n')) message = m;
      }
      deny(message, v.reason);
    }
  }

  /** A failed validation, by the binding's validationActions: Deny throws, Warn adds a warning, Audit records. */
  private deny(
    b: Binding,
    p: Policy,
    a: AdmissionAttributes,
    audits: unknown[],
    message: string,
    reason: string,
  ): void {
    const full = `ValidatingAdmissionPolicy '${p.name}' with binding '${b.name}' denied request: ${message}`;
    if (b.actions.includes('Deny')) {
      const status: Status = {
        kind: 'Status',
        apiVersion: 'v1',
        metadata: {},
        status: 'Failure',
        message: full,
        reason,
        code: CODES[reason] ?? 422,
      };
      throw new StatusError(status);
    }
    if (b.actions.includes('Warn'))
      a.warnings.push(
        `Validation failed for ValidatingAdmissionPolicy '${p.name}' with binding '${b.name}': ${message}`,
      );
    if (b.actions.includes('Audit'))
      audits.push({ message, policy: p.name, binding: b.name, expressionIndex: 0, validationActions: b.actions });
  }

  private selectorsMatch(m: Resources, a: AdmissionAttributes, nsLabels: Record<string, string> | undefined): boolean {
    if (m.ns.matchesNothing || m.obj.matchesNothing) return false;
    if (!m.ns.empty) {
      const labels =
        a.group === '' && a.resource === 'namespaces' ? (labelsOf(a.object ?? a.oldObject) ?? {}) : nsLabels;
      if (labels !== undefined && !m.ns.matches(labels)) return false;
    }
    if (!m.obj.empty) {
      const ok = (o: unknown) => o != null && m.obj.matches(labelsOf(o) ?? {});
      if (!ok(a.object) && !ok(a.oldObject)) return false;
    }
    return true;
  }

  /** false: skip; a string: an error for the failurePolicy; true: evaluate. */
  private conditions(p: Policy, vars: Record<string, unknown>): boolean | string {
    const errs: string[] = [];
    for (const c of p.conditions) {
      const r = c.run ? safe(c.run, vars) : new Error(c.error);
      if (r === false) return false;
      if (r !== true)
        errs.push(
          `failed to evaluate CEL expression for matchCondition ${JSON.stringify(c.name)}: ${(r as Error)?.message ?? 'must evaluate to bool'}`,
        );
    }
    return errs.length ? errs.join(', ') : true;
  }
}

function safe(run: Program, ctx: Record<string, unknown>): unknown {
  try {
    return run(ctx);
  } catch (e) {
    return e;
  }
}
