/**
 * The audit policy (`--audit-policy-file`, audit.plat.io/v1 Policy): ordered rules, the first
 * matching rule sets the level, omitted stages and whether managed fields are dropped.
 * Matching follows upstream's policy checker exactly (users, userGroups, verbs, then either
 * resources/namespaces for resource requests or nonResourceURLs for the others).
 */
import { readFileSync } from 'node:fs';
import { parse as parseYaml } from 'yaml';

export type Level = 'None' | 'Metadata' | 'Request' | 'RequestResponse';
export type Stage = 'RequestReceived' | 'ResponseStarted' | 'ResponseComplete' | 'Panic';

export const LEVELS: readonly Level[] = ['None', 'Metadata', 'Request', 'RequestResponse'];
export const STAGES: readonly Stage[] = ['RequestReceived', 'ResponseStarted', 'ResponseComplete', 'Panic'];

export interface GroupResources {
  group: string;
  resources: string[];
  resourceNames: string[];
}

export interface PolicyRule {
  level: Level;
  users: string[];
  userGroups: string[];
  verbs: string[];
  resources: GroupResources[];
  namespaces: string[];
  nonResourceURLs: string[];
  omitStages: Stage[];
  omitManagedFields?: boolean;
}

export interface Policy {
  rules: PolicyRule[];
  omitStages: Stage[];
  omitManagedFields: boolean;
}

/** What the checker needs to know about a request (upstream authorizer.Attributes). */
export interface AuditAttributes {
  user: { username: string; groups: readonly string[] };
  verb: string;
  isResourceRequest: boolean;
  path: string;
  apiGroup: string;
  namespace: string;
  resource: string;
  subresource: string;
  name: string;
}

/** The outcome for one request. */
export interface RequestAuditConfig {
  level: Level;
  omitStages: ReadonlySet<Stage>;
  omitManagedFields: boolean;
}

const NONE: RequestAuditConfig = Object.freeze({
  level: 'None',
  omitStages: new Set<Stage>(),
  omitManagedFields: false,
});

export function evaluate(policy: Policy, a: AuditAttributes): RequestAuditConfig {
  for (const r of policy.rules) {
    if (!ruleMatches(r, a)) continue;
    return {
      level: r.level,
      omitStages: new Set([...policy.omitStages, ...r.omitStages]),
      omitManagedFields: r.omitManagedFields ?? policy.omitManagedFields,
    };
  }
  return NONE;
}

function ruleMatches(r: PolicyRule, a: AuditAttributes): boolean {
  if (r.users.length > 0 && !r.users.includes(a.user.username)) return false;
  if (r.userGroups.length > 0 && !a.user.groups.some((g) => r.userGroups.includes(g))) return false;
  if (r.verbs.length > 0 && !r.verbs.includes(a.verb)) return false;
  if (r.namespaces.length > 0 || r.resources.length > 0) return matchesResource(r, a);
  if (r.nonResourceURLs.length > 0)
    return !a.isResourceRequest && r.nonResourceURLs.some((spec) => pathMatches(a.path, spec));
  return true;
}

function pathMatches(path: string, spec: string): boolean {
  if (spec === '*' || spec === path) return true;
  return spec.endsWith('*') && path.startsWith(spec.replace(/\*+$/, ''));
}

function matchesResource(r: PolicyRule, a: AuditAttributes): boolean {
  if (!a.isResourceRequest) return false;
  // non-namespaced resources use the empty string
  if (r.namespaces.length > 0 && !r.namespaces.includes(a.namespace)) return false;
  if (r.resources.length === 0) return true;
  const combined = a.subresource ? `${a.resource}/${a.subresource}` : a.resource;
  for (const gr of r.resources) {
    if (gr.group !== a.apiGroup) continue;
    if (gr.resources.length === 0) return true;
    if (gr.resourceNames.length > 0 && !gr.resourceNames.includes(a.name)) continue;
    for (const res of gr.resources) {
      if (res === combined || res === '*') return true;
      if (a.subresource && res.startsWith('*/') && a.subresource === res.slice(2)) return true;
      if (res.endsWith('/*') && a.resource === res.slice(0, -2)) return true;
    }
  }
  return false;
}

/** Reads and validates the policy file; throws `loading audit policy file "<path>": <problem>`. */
export function loadPolicy(path: string, domain: string): Policy {
  const fail = (problem: string): never => {
    throw new Error(`loading audit policy file "${path}": ${problem}`);
  };
  let doc: unknown;
  try {
    doc = parseYaml(readFileSync(path, 'utf8'));
  } catch (e) {
    return fail((e as Error).message);
  }
  return parsePolicy(doc, domain, fail);
}

const strings = (v: unknown, field: string, errs: string[]): string[] => {
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v) || v.some((s) => typeof s !== 'string')) {
    errs.push(`${field}: Invalid value: must be a list of strings`);
    return [];
  }
  return v as string[];
};

function stagesOf(v: unknown, field: string, errs: string[]): Stage[] {
  const list = strings(v, field, errs);
  list.forEach((s, i) => {
    if (!STAGES.includes(s as Stage))
      errs.push(
        `${field}[${i}]: Unsupported value: ${JSON.stringify(s)}: supported values: ${STAGES.map((x) => `"${x}"`).join(', ')}`,
      );
  });
  return list as Stage[];
}

export function parsePolicy(doc: unknown, domain: string, fail: (problem: string) => never): Policy {
  if (!doc || typeof doc !== 'object' || Array.isArray(doc)) return fail('not a Policy object');
  const d = doc as Record<string, unknown>;
  const apiVersion = `audit.${domain}/v1`;
  if (d.apiVersion !== apiVersion || d.kind !== 'Policy')
    return fail(
      `apiVersion must be ${apiVersion} and kind Policy, got ${JSON.stringify(d.apiVersion)}, ${JSON.stringify(d.kind)}`,
    );
  const errs: string[] = [];
  const rulesIn = d.rules ?? [];
  if (!Array.isArray(rulesIn)) return fail('rules: Invalid value: must be a list');
  const rules = rulesIn.map((raw, i) => parseRule(raw, `rules[${i}]`, errs));
  const policy: Policy = {
    rules,
    omitStages: stagesOf(d.omitStages, 'omitStages', errs),
    omitManagedFields: d.omitManagedFields === true,
  };
  if (errs.length) fail(errs.join(', '));
  return policy;
}

function parseRule(raw: unknown, f: string, errs: string[]): PolicyRule {
  const r = (raw && typeof raw === 'object' ? raw : {}) as Record<string, unknown>;
  if (r.level === undefined || r.level === '') errs.push(`${f}.level: Required value`);
  else if (!LEVELS.includes(r.level as Level))
    errs.push(
      `${f}.level: Unsupported value: ${JSON.stringify(r.level)}: supported values: ${LEVELS.map((x) => `"${x}"`).join(', ')}`,
    );
  const rule: PolicyRule = {
    level: r.level as Level,
    users: strings(r.users, `${f}.users`, errs),
    userGroups: strings(r.userGroups, `${f}.userGroups`, errs),
    verbs: strings(r.verbs, `${f}.verbs`, errs),
    namespaces: strings(r.namespaces, `${f}.namespaces`, errs),
    nonResourceURLs: strings(r.nonResourceURLs, `${f}.nonResourceURLs`, errs),
    omitStages: stagesOf(r.omitStages, `${f}.omitStages`, errs),
    resources: [],
  };
  if (typeof r.omitManagedFields === 'boolean') rule.omitManagedFields = r.omitManagedFields;
  const res = r.resources ?? [];
  if (!Array.isArray(res)) errs.push(`${f}.resources: Invalid value: must be a list`);
  else {
    rule.resources = res.map((g: Record<string, unknown>, i: number) => ({
      group: typeof g?.group === 'string' ? g.group : '',
      resources: strings(g?.resources, `${f}.resources[${i}].resources`, errs),
      resourceNames: strings(g?.resourceNames, `${f}.resources[${i}].resourceNames`, errs),
    }));
  }
  if ((rule.resources.length > 0 || rule.namespaces.length > 0) && rule.nonResourceURLs.length > 0) {
    errs.push(
      `${f}.nonResourceURLs: Invalid value: rules cannot apply to both regular resources and non-resource URLs`,
    );
  }
  rule.nonResourceURLs.forEach((u, i) => {
    if (u !== '*' && !u.startsWith('/'))
      errs.push(
        `${f}.nonResourceURLs[${i}]: Invalid value: ${JSON.stringify(u)}: non-resource URL rules must begin with a '/' character`,
      );
    if (u.slice(0, -1).includes('*'))
      errs.push(
        `${f}.nonResourceURLs[${i}]: Invalid value: ${JSON.stringify(u)}: non-resource URL wildcards ('*') must be the final character of the rule`,
      );
  });
  return rule;
}
