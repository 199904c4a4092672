/**
 * Which webhooks a request reaches (upstream webhook/predicates): rules (operations, apiGroups,
 * apiVersions, resources with `*`, `*` + `/*`, `pods/*`, `*` + `/scale`, scope), namespaceSelector (the
 * namespace's labels; a Namespace matches on its own), objectSelector (the object's or the
 * stored object's labels) and CEL matchConditions over object, oldObject and request.
 */
import { cel, standardCelEnv } from '../../cel/lazy.js';
import { labelSelectorFromObject, type LabelSelector } from '../../api/selectors.js';
import { labelsOf, type RequestAttributes } from '../attributes.js';

type Program = (ctx: Record<string, unknown>) => unknown;

/**
 * One webhook of a Validating/MutatingWebhookConfiguration as stored: validation has checked
 * it, but the matching code reads it defensively (every leaf narrowed before use).
 */
export interface WebhookSpec {
  name?: unknown;
  rules?: unknown;
  matchPolicy?: unknown;
  namespaceSelector?: unknown;
  objectSelector?: unknown;
  matchConditions?: unknown;
  reinvocationPolicy?: unknown;
  clientConfig?: unknown;
  failurePolicy?: unknown;
  sideEffects?: unknown;
  timeoutSeconds?: unknown;
  admissionReviewVersions?: unknown;
}

/** A condition of matchConditions, unchecked. */
interface RawCondition {
  name?: unknown;
  expression?: unknown;
}

/** A rule of rules, unchecked. */
export interface RawRule {
  operations?: unknown;
  apiGroups?: unknown;
  apiVersions?: unknown;
  resources?: unknown;
  scope?: unknown;
}

export interface Hook {
  configuration: string;
  index: number;
  name: string;
  spec: WebhookSpec;
  namespaceSelector: LabelSelector;
  objectSelector: LabelSelector;
  conditions: { name: string; expression: string; run: Program | undefined; error?: string }[];
}

export function compileHook(configuration: string, index: number, spec: WebhookSpec): Hook {
  const sel = (s: unknown) => {
    try {
      return labelSelectorFromObject((s ?? {}) as Parameters<typeof labelSelectorFromObject>[0]);
    } catch {
      return labelSelectorFromObject(undefined);
    }
  };
  const conditions = (Array.isArray(spec?.matchConditions) ? (spec.matchConditions as RawCondition[]) : []).map((c) => {
    try {
      return {
        name: String(c?.name ?? ''),
        expression: String(c?.expression ?? ''),
        run: cel().plan(standardCelEnv(), cel().parse(String(c?.expression ?? ''))) as unknown as Program,
      };
    } catch (e) {
      return {
        name: String(c?.name ?? ''),
        expression: String(c?.expression ?? ''),
        run: undefined,
        error: (e as Error).message,
      };
    }
  });
  return {
    configuration,
    index,
    name: String(spec?.name ?? ''),
    spec,
    namespaceSelector: sel(spec?.namespaceSelector),
    objectSelector: sel(spec?.objectSelector),
    conditions,
  };
}

const has = (list: unknown, v: string) => Array.isArray(list) && (list.includes('*') || list.includes(v));

function resourceMatches(patterns: unknown, resource: string, subresource: string): boolean {
  if (!Array.isArray(patterns)) return false;
  for (const p of patterns as string[]) {
    if (typeof p !== 'string') continue;
    const [pr, ps] = p.split('/', 2) as [string, string | undefined];
    if (ps === undefined) {
      if (!subresource && (pr === '*' || pr === resource)) return true;
      continue;
    }
    if ((pr === '*' || pr === resource) && (ps === '*' || ps === subresource)) return true;
  }
  return false;
}

/** One rule against the request: operation, group, version, resource/subresource and scope. */
export function ruleMatches(
  rule: RawRule | null | undefined,
  a: Pick<RequestAttributes, 'operation' | 'group' | 'version' | 'resource' | 'subresource' | 'namespaced'>,
): boolean {
  if (!rule || !has(rule.operations, a.operation) || !has(rule.apiGroups, a.group) || !has(rule.apiVersions, a.version))
    return false;
  if (!resourceMatches(rule.resources, a.resource, a.subresource)) return false;
  const scope = rule.scope ?? '*';
  // a Namespace is cluster-scoped for the scope check (upstream)
  if (scope === 'Cluster') return !a.namespaced;
  if (scope === 'Namespaced') return a.namespaced;
  return true;
}

/**
 * The rules alone (no object): the version a webhook matches the request in — the requested
 * one, or with matchPolicy Equivalent another served version of the same group and resource
 * (the review then carries the object converted to it) — or undefined.
 */
export function matchVersion(
  h: Hook,
  a: RequestAttributes,
  equivalents: (group: string, resource: string) => readonly string[],
): string | undefined {
  const rules: RawRule[] = Array.isArray(h.spec?.rules) ? h.spec.rules : [];
  if (rules.some((r) => ruleMatches(r, a))) return a.version;
  if ((h.spec?.matchPolicy ?? 'Equivalent') !== 'Equivalent') return undefined;
  return equivalents(a.group, a.resource).find(
    (version) => version !== a.version && rules.some((r) => ruleMatches(r, { ...a, version })),
  );
}

/** namespaceSelector and objectSelector; nsLabels are the namespace's labels (undefined: cluster-scoped). */
export function selectorsMatch(
  h: Hook,
  a: RequestAttributes & { object?: unknown; oldObject?: unknown },
  nsLabels: Record<string, string> | undefined,
): boolean {
  // a selector that did not compile selects nothing
  if (h.namespaceSelector.matchesNothing || h.objectSelector.matchesNothing) return false;
  if (!h.namespaceSelector.empty) {
    const labels = a.group === '' && a.resource === 'namespaces' ? (labelsOf(a.object ?? a.oldObject) ?? {}) : nsLabels;
    if (labels !== undefined && !h.namespaceSelector.matches(labels)) return false;
  }
  if (!h.objectSelector.empty) {
    const matches = (o: unknown) => o !== undefined && o !== null && h.objectSelector.matches(labelsOf(o) ?? {});
    if (!matches(a.object) && !matches(a.oldObject)) return false;
  }
  return true;
}

export type ConditionResult = { matches: true } | { matches: false } | { error: string };

/** upstream: any false skips the webhook; otherwise any error fails it (per failurePolicy). */
export function evaluateConditions(
  h: Hook,
  vars: { object: unknown; oldObject: unknown; request: unknown },
): ConditionResult {
  const errs: string[] = [];
  for (const c of h.conditions) {
    if (!c.run) {
      errs.push(`compilation failed for expression '${c.expression}': ${c.error}`);
      continue;
    }
    let v: unknown;
    try {
      v = c.run({ object: vars.object ?? null, oldObject: vars.oldObject ?? null, request: vars.request });
    } catch (e) {
      v = e;
    }
    if (v === false) return { matches: false };
    if (v === true) continue;
    const why = cel().isCelError(v) || v instanceof Error ? (v as Error).message : 'must evaluate to bool';
    errs.push(`failed to evaluate CEL expression for matchCondition ${JSON.stringify(c.name)}: ${why}`);
  }
  return errs.length ? { error: errs.join(', ') } : { matches: true };
}
