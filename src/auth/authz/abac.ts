/**
 * The ABAC authorizer (upstream pkg/auth/authorizer/abac): a policy file of one JSON Policy a
 * line, loaded once at start. A request is allowed when one policy matches its subject, verb
 * (readonly policies only allow get/list/watch) and either its resource or its non-resource
 * path; otherwise no opinion ("No policy matched."). ABAC never denies.
 */
import { readFileSync } from 'node:fs';
import type { UserInfo } from '../../api/user.js';
import { AUTHENTICATED_GROUP } from '../../api/user.js';
import type { Attributes } from './attributes.js';
import { ALLOW, type Authorizer, type AuthorizerResult, type RulesResult } from './authorizer.js';
import type { PolicyRule } from './rbac-rules.js';

/** Policy spec fields (abac.authorization.plat.io/v1beta1 PolicySpec); absent strings are ''. */
export interface PolicySpec {
  user: string;
  group: string;
  readonly: boolean;
  apiGroup: string;
  resource: string;
  namespace: string;
  nonResourcePath: string;
}

const STRING_FIELDS = ['user', 'group', 'apiGroup', 'resource', 'namespace', 'nonResourcePath'] as const;
/** v0 (unversioned) lines: user, group, readonly, resource, namespace at the top level */
const V0_FIELDS = ['user', 'group', 'resource', 'namespace'] as const;
const READ_ONLY = new Set(['get', 'list', 'watch']);
const NO_MATCH: AuthorizerResult = Object.freeze({ decision: 'noOpinion', reason: 'No policy matched.' });

/** upstream policyLoadError */
function loadError(path: string, line: number, data: string, why: string): Error {
  return new Error(`error reading policy file ${path}, line ${line}: ${data}: ${why}`);
}

function goType(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  return typeof v === 'object' ? 'object' : typeof v;
}

/** Decodes one line's fields as Go's json would (a wrong type is an error naming the field). */
function fields(
  src: Record<string, unknown>,
  names: readonly string[],
  struct: string,
  prefix: string,
): Partial<PolicySpec> {
  const out: Record<string, unknown> = {};
  for (const k of names) {
    const v = src[k];
    if (v === undefined || v === null) continue;
    if (typeof v !== 'string')
      throw new Error(
        `json: cannot unmarshal ${goType(v)} into Go struct field ${struct}.${prefix}${k} of type string`,
      );
    out[k] = v;
  }
  const ro = src.readonly;
  if (ro !== undefined && ro !== null) {
    if (typeof ro !== 'boolean')
      throw new Error(
        `json: cannot unmarshal ${goType(ro)} into Go struct field ${struct}.${prefix}readonly of type bool`,
      );
    out.readonly = ro;
  }
  return out as Partial<PolicySpec>;
}

const spec = (p: Partial<PolicySpec>): PolicySpec => ({
  user: '',
  group: '',
  readonly: false,
  apiGroup: '',
  resource: '',
  namespace: '',
  nonResourcePath: '',
  ...p,
});

/** One line to the internal policy, with upstream's v1beta1 and v0 conversions. */
export function parsePolicyLine(text: string, groups: readonly string[]): PolicySpec {
  let obj: unknown;
  try {
    obj = JSON.parse(text);
  } catch (e) {
    throw new Error(`couldn't decode policy: ${(e as Error).message}`);
  }
  if (goType(obj) !== 'object')
    throw new Error(
      `json: cannot unmarshal ${goType(obj)} into Go value of type struct { APIVersion string; Kind string }`,
    );
  const o = obj as Record<string, unknown>;
  const apiVersion = o.apiVersion ?? '',
    kind = o.kind ?? '';
  if (apiVersion === '' && kind === '') return fromV0(fields(o, V0_FIELDS, 'Policy', ''));
  const [group, version] = String(apiVersion).split('/');
  if (!groups.includes(group!) || version !== 'v1beta1')
    throw new Error(`no kind "${kind}" is registered for version "${apiVersion}"`);
  if (kind !== 'Policy') throw new Error(`no kind "${kind}" is registered for version "${apiVersion}"`);
  const s = o.spec;
  if (s !== undefined && s !== null && goType(s) !== 'object')
    throw new Error(`json: cannot unmarshal ${goType(s)} into Go struct field Policy.spec of type v1beta1.PolicySpec`);
  const p = spec(fields((s ?? {}) as Record<string, unknown>, STRING_FIELDS, 'Policy', 'spec.'));
  // upstream v1beta1 conversion: a `*` user or group means every authenticated subject
  if (p.user === '*' || p.group === '*') {
    p.group = AUTHENTICATED_GROUP;
    p.user = '';
  }
  return p;
}

/** upstream Convert_v0_Policy_To_abac_Policy: empty fields are wildcards. */
function fromV0(v0: Partial<PolicySpec>): PolicySpec {
  const p = spec({
    user: v0.user ?? '',
    group: v0.group ?? '',
    readonly: v0.readonly ?? false,
    resource: v0.resource ?? '',
    namespace: v0.namespace ?? '',
  });
  if (!p.user && !p.group) p.group = AUTHENTICATED_GROUP;
  if (p.user === '*' || p.group === '*') {
    p.group = AUTHENTICATED_GROUP;
    p.user = '';
  }
  if (!v0.namespace && !v0.resource) p.nonResourcePath = '*';
  if (!v0.namespace) p.namespace = '*';
  if (!v0.resource) p.resource = '*';
  p.apiGroup = '*';
  return p;
}

/** Parses a whole policy file: blank lines and `#` comments are skipped; a bad line names the file, its number and text. */
export function parsePolicyFile(path: string, text: string, groups: readonly string[]): PolicySpec[] {
  const out: PolicySpec[] = [];
  text.split('\n').forEach((raw, i) => {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) return;
    try {
      out.push(parsePolicyLine(line, groups));
    } catch (e) {
      throw loadError(path, i + 1, line, (e as Error).message);
    }
  });
  return out;
}

function subjectMatches(p: PolicySpec, user: UserInfo): boolean {
  let matched = false;
  if (p.user) {
    if (p.user === '*') matched = true;
    else if (p.user === user.username) matched = true;
    else return false;
  }
  if (p.group) {
    if (p.group === '*') matched = true;
    else if (user.groups.includes(p.group)) matched = true;
    else return false;
  }
  return matched;
}

function resourceMatches(p: PolicySpec, a: Attributes): boolean {
  return (
    a.resourceRequest &&
    (p.namespace === '*' || p.namespace === (a.namespace ?? '')) &&
    (p.resource === '*' || p.resource === a.resource) &&
    (p.apiGroup === '*' || p.apiGroup === a.apiGroup)
  );
}

function nonResourceMatches(p: PolicySpec, a: Attributes): boolean {
  if (a.resourceRequest || !p.nonResourcePath) return false;
  const np = p.nonResourcePath;
  return np === '*' || np === a.path || (np.endsWith('*') && a.path.startsWith(np.replace(/\*+$/, '')));
}

export function policyMatches(p: PolicySpec, a: Attributes): boolean {
  return (
    subjectMatches(p, a.user) &&
    (READ_ONLY.has(a.verb) || !p.readonly) &&
    (resourceMatches(p, a) || nonResourceMatches(p, a))
  );
}

const verbsOf = (readonly: boolean) => (readonly ? ['get', 'list', 'watch'] : ['*']);

export class AbacAuthorizer implements Authorizer {
  readonly name = 'ABAC';
  constructor(readonly policies: readonly PolicySpec[]) {}

  static fromFile(path: string, groups: readonly string[]): AbacAuthorizer {
    return new AbacAuthorizer(parsePolicyFile(path, readFileSync(path, 'utf8'), groups));
  }

  authorize(a: Attributes): AuthorizerResult {
    for (const p of this.policies) if (policyMatches(p, a)) return ALLOW;
    return NO_MATCH;
  }

  /** upstream PolicyList.RulesFor: the policies of the subject in the namespace, as rules. */
  rulesFor(user: UserInfo, namespace: string): RulesResult {
    const resourceRules: PolicyRule[] = [],
      nonResourceRules: PolicyRule[] = [];
    for (const p of this.policies) {
      if (!subjectMatches(p, user) || (p.namespace !== '*' && p.namespace !== namespace)) continue;
      if (p.resource)
        resourceRules.push({ verbs: verbsOf(p.readonly), apiGroups: [p.apiGroup], resources: [p.resource] });
      if (p.nonResourcePath)
        nonResourceRules.push({ verbs: verbsOf(p.readonly), nonResourceURLs: [p.nonResourcePath] });
    }
    return { resourceRules, nonResourceRules, incomplete: false, errors: [] };
  }
}
