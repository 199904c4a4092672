/**
 * RBAC policy rules as pure functions, upstream's rbac/v1 helpers: whether a rule allows a
 * request (RuleAllows), whether some rules cover others (Covers, for escalation prevention),
 * and the compact form of uncovered rules used in escalation messages.
 */
import type { Attributes } from './attributes.js';

/** rbac/v1 PolicyRule as stored; every list may be missing. */
export interface PolicyRule {
  verbs?: string[];
  apiGroups?: string[];
  resources?: string[];
  resourceNames?: string[];
  nonResourceURLs?: string[];
}

const ALL = '*';
const list = (l: string[] | undefined): string[] => (Array.isArray(l) ? l : []);

export function verbMatches(rule: PolicyRule, verb: string): boolean {
  for (const v of list(rule.verbs)) if (v === ALL || v === verb) return true;
  return false;
}

export function apiGroupMatches(rule: PolicyRule, group: string): boolean {
  for (const g of list(rule.apiGroups)) if (g === ALL || g === group) return true;
  return false;
}

/** `*`, the exact `resource[/subresource]`, or `*\/subresource`. */
export function resourceMatches(rule: PolicyRule, combined: string, subresource: string): boolean {
  for (const r of list(rule.resources)) {
    if (r === ALL || r === combined) return true;
    if (subresource && r.length === subresource.length + 2 && r.startsWith('*/') && r.endsWith(subresource))
      return true;
  }
  return false;
}

/** No resourceNames means any name (including none). */
export function resourceNameMatches(rule: PolicyRule, name: string): boolean {
  const names = list(rule.resourceNames);
  return names.length === 0 || names.includes(name);
}

/** `*`, the exact path, or a prefix when the rule URL ends with `*`. */
export function nonResourceURLMatches(rule: PolicyRule, path: string): boolean {
  for (const u of list(rule.nonResourceURLs)) {
    if (u === ALL || u === path) return true;
    if (u.endsWith('*') && path.startsWith(u.replace(/\*+$/, ''))) return true;
  }
  return false;
}

/** upstream RuleAllows */
export function ruleAllows(a: Attributes, rule: PolicyRule): boolean {
  if (!a.resourceRequest) return verbMatches(rule, a.verb) && nonResourceURLMatches(rule, a.path);
  const sub = a.subresource ?? '';
  const combined = sub ? `${a.resource}/${sub}` : a.resource;
  return (
    verbMatches(rule, a.verb) &&
    apiGroupMatches(rule, a.apiGroup) &&
    resourceMatches(rule, combined, sub) &&
    resourceNameMatches(rule, a.name ?? '')
  );
}

/** Splits a rule into rules of one group, resource, verb and name (or one URL and verb). */
export function breakdownRule(rule: PolicyRule): PolicyRule[] {
  const out: PolicyRule[] = [];
  const names = list(rule.resourceNames);
  for (const group of list(rule.apiGroups)) {
    for (const resource of list(rule.resources)) {
      for (const verb of list(rule.verbs)) {
        if (names.length)
          for (const n of names)
            out.push({ apiGroups: [group], resources: [resource], verbs: [verb], resourceNames: [n] });
        else out.push({ apiGroups: [group], resources: [resource], verbs: [verb] });
      }
    }
  }
  for (const url of list(rule.nonResourceURLs))
    for (const verb of list(rule.verbs)) out.push({ nonResourceURLs: [url], verbs: [verb] });
  return out;
}

const hasAll = (set: string[], wanted: string[]): boolean => wanted.every((w) => set.includes(w));

function resourceCoversAll(owner: string[], wanted: string[]): boolean {
  if (owner.includes(ALL) || hasAll(owner, wanted)) return true;
  for (const path of wanted) {
    if (owner.includes(path)) continue;
    const slash = path.indexOf('/');
    if (slash < 0 || !owner.includes(`*/${path.slice(slash + 1)}`)) return false;
  }
  return true;
}

function nonResourceURLCovers(owner: string, sub: string): boolean {
  return owner === sub || (owner.endsWith('*') && sub.startsWith(owner.replace(/\*+$/, '')));
}

/** upstream ruleCovers: owner (any shape) covers sub (at most one verb, resource, name). */
export function ruleCovers(owner: PolicyRule, sub: PolicyRule): boolean {
  const ov = list(owner.verbs),
    og = list(owner.apiGroups),
    on = list(owner.resourceNames);
  const verbs = ov.includes(ALL) || hasAll(ov, list(sub.verbs));
  const groups = og.includes(ALL) || hasAll(og, list(sub.apiGroups));
  const resources = resourceCoversAll(list(owner.resources), list(sub.resources));
  const urls = list(sub.nonResourceURLs).every((p) =>
    list(owner.nonResourceURLs).some((o) => nonResourceURLCovers(o, p)),
  );
  const sn = list(sub.resourceNames);
  const names = sn.length === 0 ? on.length === 0 : on.length === 0 || hasAll(on, sn);
  return verbs && groups && resources && names && urls;
}

/** upstream Covers: the uncovered atomic rules (empty when owner covers every servant rule). */
export function uncovered(owner: readonly PolicyRule[], servant: readonly PolicyRule[]): PolicyRule[] {
  const out: PolicyRule[] = [];
  for (const rule of servant)
    for (const sub of breakdownRule(rule)) if (!owner.some((o) => ruleCovers(o, sub))) out.push(sub);
  return out;
}

/** upstream CompactRules: merges the verbs of rules with one group, one resource and at most one name. */
export function compactRules(rules: readonly PolicyRule[]): PolicyRule[] {
  const out: PolicyRule[] = [];
  const simple = new Map<string, PolicyRule>();
  for (const r of rules) {
    const g = list(r.apiGroups),
      res = list(r.resources),
      n = list(r.resourceNames);
    if (n.length > 1 || list(r.nonResourceURLs).length > 0 || g.length !== 1 || res.length !== 1) {
      out.push(r);
      continue;
    }
    const key = JSON.stringify([g[0], res[0], n[0] ?? null]);
    const prev = simple.get(key);
    if (!prev) {
      simple.set(key, { ...r, verbs: [...list(r.verbs)] });
      continue;
    }
    for (const v of list(r.verbs)) if (!prev.verbs!.includes(v)) prev.verbs!.push(v);
  }
  return [...out, ...simple.values()];
}

/** Go's %q of a []string: `["a" "b"]`. */
export const goStrings = (l: readonly string[]): string => `[${l.map((s) => JSON.stringify(s)).join(' ')}]`;

/** upstream CompactString: `{APIGroups:[""], Resources:["pods"], Verbs:["get"]}` */
export function compactString(r: PolicyRule): string {
  const parts: string[] = [];
  const add = (name: string, l: string[] | undefined) => {
    if (list(l).length) parts.push(`${name}:${goStrings(l!)}`);
  };
  add('APIGroups', r.apiGroups);
  add('Resources', r.resources);
  add('NonResourceURLs', r.nonResourceURLs);
  add('ResourceNames', r.resourceNames);
  add('Verbs', r.verbs);
  return `{${parts.join(', ')}}`;
}
