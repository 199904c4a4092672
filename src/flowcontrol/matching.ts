/**
 * FlowSchema matching (upstream semantics): a schema matches when one of its rules has a
 * matching subject and a matching resource or non-resource rule; schemas are tried in
 * matchingPrecedence order (ties by name). Compiled once per configuration change.
 */
import type { FlowSchema, NonResourcePolicyRule, ResourcePolicyRule, Subject } from '../api/kinds.js';
import type { Stored } from '../api/object.js';
import type { UserInfo } from '../api/user.js';
import type { RequestInfo } from '../http/request-info.js';

export interface CompiledSchema {
  name: string;
  uid: string;
  precedence: number;
  level: string;
  distinguisher: 'ByUser' | 'ByNamespace' | undefined;
  matches(user: UserInfo, info: RequestInfo): boolean;
}

type Pred = (user: UserInfo, info: RequestInfo) => boolean;

const has = (list: unknown, v: string): boolean => Array.isArray(list) && (list.includes('*') || list.includes(v));

function subjectPred(s: Subject | undefined): Pred {
  switch (s?.kind) {
    case 'User': {
      const name = s.user?.name;
      return (u) => name === '*' || u.username === name;
    }
    case 'Group': {
      const name = s.group?.name;
      return (u) => name === '*' || (name !== undefined && u.groups.includes(name));
    }
    case 'ServiceAccount': {
      const { namespace, name } = s.serviceAccount ?? {};
      const prefix = `system:serviceaccount:${namespace}:`;
      return (u) =>
        name === '*'
          ? u.username.startsWith(prefix) && u.username.indexOf(':', prefix.length) < 0
          : u.username === prefix + name;
    }
    default:
      return () => false;
  }
}

function resourcePred(r: ResourcePolicyRule): Pred {
  return (_u, info) => {
    if (!info.isResourceRequest || !has(r.verbs, info.verb) || !has(r.apiGroups, info.apiGroup)) return false;
    const resource = info.subresource ? `${info.resource}/${info.subresource}` : info.resource;
    if (!has(r.resources, resource)) return false;
    return info.namespace === '' ? r.clusterScope === true : has(r.namespaces, info.namespace);
  };
}

function urlMatches(pattern: string, path: string): boolean {
  if (pattern === '*' || pattern === path) return true;
  if (pattern.endsWith('/*')) {
    const base = pattern.slice(0, -2);
    return path === base || path.startsWith(base + '/');
  }
  return false;
}

function nonResourcePred(r: NonResourcePolicyRule): Pred {
  const urls: string[] = Array.isArray(r.nonResourceURLs) ? r.nonResourceURLs : [];
  return (_u, info) => !info.isResourceRequest && has(r.verbs, info.verb) && urls.some((p) => urlMatches(p, info.path));
}

/** Any of the predicates (a loop: no closure made per request, as `some` with an arrow would). */
const anyOf =
  (preds: Pred[]): Pred =>
  (u, i) => {
    for (const p of preds) if (p(u, i)) return true;
    return false;
  };

export function compileSchema(obj: Stored<FlowSchema>): CompiledSchema {
  const spec = obj.spec ?? {};
  const rules: Pred[] = (spec.rules ?? []).map((rule) => {
    const subject = anyOf((rule.subjects ?? []).map(subjectPred));
    const target = anyOf([
      ...(rule.resourceRules ?? []).map(resourcePred),
      ...(rule.nonResourceRules ?? []).map(nonResourcePred),
    ]);
    return (u: UserInfo, i: RequestInfo) => subject(u, i) && target(u, i);
  });
  const type = spec.distinguisherMethod?.type;
  return {
    name: obj.metadata.name,
    uid: obj.metadata.uid ?? '',
    precedence: spec.matchingPrecedence ?? 1000,
    level: spec.priorityLevelConfiguration?.name ?? '',
    distinguisher: type === 'ByUser' || type === 'ByNamespace' ? type : undefined,
    matches: anyOf(rules),
  };
}

/** Sorted for matching: lower precedence first, then name. */
export function orderSchemas(schemas: CompiledSchema[]): CompiledSchema[] {
  return [...schemas].sort((a, b) => a.precedence - b.precedence || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

/** The flow a request belongs to within its schema. */
export function flowKey(schema: CompiledSchema, user: UserInfo, info: RequestInfo): string {
  return `${schema.name}\u0000${flowDistinguisher(schema, user, info)}`;
}

/** What tells a schema's flows apart: the user name, the namespace, or nothing (one flow). */
export function flowDistinguisher(schema: CompiledSchema, user: UserInfo, info: RequestInfo): string {
  return schema.distinguisher === 'ByUser'
    ? user.username
    : schema.distinguisher === 'ByNamespace'
      ? info.namespace
      : '';
}
