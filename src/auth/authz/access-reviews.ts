/**
 * The access review kinds of `authorization.<domain>` (virtual, create-only, never stored),
 * answered on the front thread from the server's authorizer chain, as upstream's
 * pkg/registry/authorization: SubjectAccessReview (any user), SelfSubjectAccessReview (the
 * caller), LocalSubjectAccessReview (a SubjectAccessReview pinned to the path's namespace) and
 * SelfSubjectRulesReview (the caller's rules in a namespace).
 */
import { errors } from '../../api/status.js';
import { groupFor, type Identity } from '../../api/identity.js';
import type { VirtualContext, VirtualKind } from '../../registry/strategies/reviews.js';
import { forbidden, invalid, required, type Cause } from '../../registry/strategies/field-errors.js';
import { qualifiedNameErrors } from '../../api/selectors.js';
import type { UserInfo } from '../../api/user.js';
import type { Attributes } from './attributes.js';
import { settle, type Authorizer } from './authorizer.js';
import { reviewRequirements } from './selectors.js';
import type { PolicyRule } from './rbac-rules.js';
import { aggregateMessage } from './rbac.js';

type ReviewKind = 'SubjectAccessReview' | 'SelfSubjectAccessReview' | 'LocalSubjectAccessReview';

/** An access review's body as decoded: each leaf is checked before use (validate). */
interface RawSelector {
  rawSelector?: unknown;
  requirements?: unknown;
}
interface RawRequirement {
  key?: unknown;
  operator?: unknown;
  values?: unknown;
}
interface RawNonResourceAttributes {
  path?: unknown;
  verb?: unknown;
}
interface RawResourceAttributes {
  verb?: unknown;
  group?: unknown;
  version?: unknown;
  resource?: unknown;
  subresource?: unknown;
  namespace?: unknown;
  name?: unknown;
  fieldSelector?: RawSelector | null;
  labelSelector?: RawSelector | null;
}
interface RawReviewSpec {
  resourceAttributes?: RawResourceAttributes | null;
  nonResourceAttributes?: RawNonResourceAttributes | null;
  user?: unknown;
  groups?: unknown;
  uid?: unknown;
  extra?: unknown;
}
interface RawReview {
  kind?: unknown;
  metadata?: { namespace?: unknown } | null;
  spec?: RawReviewSpec;
}

function expectKind(obj: { kind?: unknown }, kind: string): void {
  if (obj.kind !== undefined && obj.kind !== kind)
    throw errors.badRequest(`the kind of the body must be ${kind}, got ${JSON.stringify(obj.kind)}`);
}

/** Go's zero value: null, '', 0, false, an empty list or map (what a decoded unset field holds). */
const isZero = (v: unknown): boolean =>
  v == null || v === '' || v === 0 || v === false || (typeof v === 'object' && Object.keys(v as object).length === 0);

/** ObjectMeta with nothing set (kubectl sends `creationTimestamp: null`, Protobuf zero values), ignoring `except`. */
function metadataEmpty(meta: unknown, except: string[]): boolean {
  if (meta == null) return true;
  if (typeof meta !== 'object') return false;
  return Object.entries(meta).every(([k, v]) => except.includes(k) || k === 'managedFields' || isZero(v));
}

/** An invalid non-resource attributes value, printed as Go's %#v as upstream does. */
const invalidNonResource = (field: string, n: RawNonResourceAttributes | null | undefined, detail: string): Cause => ({
  reason: 'FieldValueInvalid',
  field,
  message: `Invalid value: authorization.NonResourceAttributes{Path:${JSON.stringify(n?.path ?? '')}, Verb:${JSON.stringify(n?.verb ?? '')}}: ${detail}`,
});

/**
 * upstream validateFieldSelectorAttributes / validateLabelSelectorAttributes: rawSelector or
 * requirements (not both, not neither); keys required (label keys qualified names); values
 * exactly for In/NotIn; unknown operators allowed (newer clients).
 */
function selectorCauses(sel: RawSelector | null | undefined, path: string, label: boolean): Cause[] {
  if (sel == null) return [];
  const out: Cause[] = [];
  const raw = typeof sel.rawSelector === 'string' ? sel.rawSelector : '';
  const reqs: (RawRequirement | null)[] = Array.isArray(sel.requirements) ? sel.requirements : [];
  if (raw && reqs.length)
    out.push(invalid(`${path}.rawSelector`, raw, 'may not specified at the same time as requirements'));
  if (!raw && !reqs.length)
    out.push(required(`${path}.requirements`, `when ${path} is specified, requirements or rawSelector is required`));
  reqs.forEach((r, i) => {
    const p = `${path}.requirements[${i}]`;
    const key = typeof r?.key === 'string' ? r.key : '';
    if (label) for (const m of qualifiedNameErrors(key)) out.push(invalid(`${p}.key`, key, m));
    else if (!key) out.push(required(`${p}.key`, 'must be specified'));
    const n = Array.isArray(r?.values) ? r.values.length : 0;
    if ((r?.operator === 'In' || r?.operator === 'NotIn') && n === 0)
      out.push(required(`${p}.values`, "must be specified when `operator` is 'In' or 'NotIn'"));
    if ((r?.operator === 'Exists' || r?.operator === 'DoesNotExist') && n > 0)
      out.push(forbidden(`${p}.values`, "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"));
  });
  return out;
}

/** upstream ValidateSubjectAccessReviewSpec and the per-kind metadata rules. */
function validate(kind: ReviewKind, obj: RawReview): Cause[] {
  const spec = obj.spec ?? {};
  const out: Cause[] = [];
  const ra = spec.resourceAttributes,
    na = spec.nonResourceAttributes;
  if (ra && na)
    out.push(
      invalidNonResource(
        'spec.nonResourceAttributes',
        na,
        'cannot be specified in combination with resourceAttributes',
      ),
    );
  if (!ra && !na)
    out.push(
      invalid(
        'spec.resourceAttributes',
        'null',
        'exactly one of nonResourceAttributes or resourceAttributes must be specified',
      ),
    );
  if (ra) {
    out.push(...selectorCauses(ra.fieldSelector, 'spec.resourceAttributes.fieldSelector', false));
    out.push(...selectorCauses(ra.labelSelector, 'spec.resourceAttributes.labelSelector', true));
  }
  if (kind !== 'SelfSubjectAccessReview' && !spec.user && !(Array.isArray(spec.groups) && spec.groups.length)) {
    out.push(invalid('spec.user', spec.user ?? '', 'at least one of user or group must be specified'));
  }
  if (kind === 'LocalSubjectAccessReview') {
    if (!metadataEmpty(obj.metadata, ['namespace']))
      out.push(invalid('metadata', obj.metadata, 'must be empty except for namespace'));
    if (ra && (ra.namespace ?? '') !== (obj.metadata?.namespace ?? ''))
      out.push(invalid('spec.resourceAttributes.namespace', ra.namespace ?? '', 'must match metadata.namespace'));
    if (na) out.push(invalidNonResource('spec.nonResourceAttributes', na, 'disallowed on this kind of request'));
  } else if (!metadataEmpty(obj.metadata, [])) out.push(invalid('metadata', obj.metadata, 'must be empty'));
  return out;
}

/** upstream ResourceAttributesFrom / NonResourceAttributesFrom */
export function reviewAttributes(spec: RawReviewSpec, user: UserInfo): Attributes {
  const ra = spec.resourceAttributes;
  if (ra) {
    const a: Attributes = {
      user,
      verb: String(ra.verb ?? ''),
      resourceRequest: true,
      path: '',
      apiGroup: String(ra.group ?? ''),
      apiVersion: (ra.version || '*') as string,
      resource: String(ra.resource ?? ''),
    };
    if (ra.subresource) a.subresource = String(ra.subresource);
    if (ra.namespace) a.namespace = String(ra.namespace);
    if (ra.name) a.name = String(ra.name);
    const fs = reviewRequirements(ra.fieldSelector, 'field'),
      ls = reviewRequirements(ra.labelSelector, 'label');
    if (fs.length) a.fieldSelector = fs;
    if (ls.length) a.labelSelector = ls;
    return a;
  }
  const na = spec.nonResourceAttributes ?? {};
  return {
    user,
    verb: String(na.verb ?? ''),
    resourceRequest: false,
    path: String(na.path ?? ''),
    apiGroup: '',
    resource: '',
  };
}

/** The user a SubjectAccessReview names (taken as given: no groups are added). */
function specUser(spec: RawReviewSpec): UserInfo {
  const u: UserInfo = {
    username: String(spec.user ?? ''),
    groups: Array.isArray(spec.groups) ? spec.groups.map(String) : [],
  };
  if (spec.uid) u.uid = String(spec.uid);
  if (spec.extra && typeof spec.extra === 'object') u.extra = spec.extra as Record<string, string[]>;
  return u;
}

function accessReview(kind: ReviewKind, group: string, authorizer: Authorizer): VirtualKind {
  return {
    create(body, ctx: VirtualContext) {
      const obj = body as RawReview;
      expectKind(obj, kind);
      const metadata: Record<string, unknown> = Object.fromEntries(
        Object.entries(obj.metadata ?? {}).filter(([, v]) => !isZero(v)),
      );
      if (kind === 'LocalSubjectAccessReview') {
        if (metadata.namespace && metadata.namespace !== ctx.namespace) {
          throw errors.badRequest(
            'the namespace of the provided object does not match the namespace sent on the request',
          );
        }
        metadata.namespace = ctx.namespace;
      }
      const causes = validate(kind, { ...obj, metadata });
      if (causes.length) throw errors.invalid({ group, kind, name: '' }, causes);
      const spec = obj.spec as RawReviewSpec;
      const user = kind === 'SelfSubjectAccessReview' ? ctx.user : specUser(spec);
      return settle(authorizer.authorize(reviewAttributes(spec, user)), (d) => {
        const status: Record<string, unknown> = { allowed: d.decision === 'allow' };
        if (d.decision === 'deny') status.denied = true;
        if (d.reason) status.reason = d.reason;
        if (d.error) status.evaluationError = d.error;
        return { kind, apiVersion: ctx.apiVersion, metadata: { ...metadata, creationTimestamp: null }, spec, status };
      });
    },
  };
}

const resourceRule = (r: PolicyRule) => {
  const out: Record<string, string[]> = { verbs: r.verbs ?? [] };
  if (r.apiGroups?.length) out.apiGroups = r.apiGroups;
  if (r.resources?.length) out.resources = r.resources;
  if (r.resourceNames?.length) out.resourceNames = r.resourceNames;
  return out;
};
const nonResourceRule = (r: PolicyRule) => ({
  verbs: r.verbs ?? [],
  ...(r.nonResourceURLs?.length ? { nonResourceURLs: r.nonResourceURLs } : {}),
});

function selfSubjectRulesReview(authorizer: Authorizer): VirtualKind {
  return {
    create(obj, ctx) {
      expectKind(obj, 'SelfSubjectRulesReview');
      const namespace = obj.spec?.namespace;
      if (!namespace) throw errors.badRequest('no namespace on request');
      const r = authorizer.rulesFor(ctx.user, String(namespace));
      const status: Record<string, unknown> = {
        resourceRules: r.resourceRules.map(resourceRule),
        nonResourceRules: r.nonResourceRules.map(nonResourceRule),
        incomplete: r.incomplete,
      };
      if (r.errors.length) status.evaluationError = aggregateMessage(r.errors);
      return {
        kind: 'SelfSubjectRulesReview',
        apiVersion: ctx.apiVersion,
        metadata: { creationTimestamp: null },
        spec: obj.spec,
        status,
      };
    },
  };
}

/** The review kinds keyed `<group>/<resource>` in the served domain (merged with the authentication ones). */
export function accessReviewKinds(identity: Identity, authorizer: Authorizer): Map<string, VirtualKind> {
  const g = groupFor(identity, 'authorization.plat.io');
  return new Map<string, VirtualKind>([
    [`${g}/subjectaccessreviews`, accessReview('SubjectAccessReview', g, authorizer)],
    [`${g}/selfsubjectaccessreviews`, accessReview('SelfSubjectAccessReview', g, authorizer)],
    [`${g}/localsubjectaccessreviews`, accessReview('LocalSubjectAccessReview', g, authorizer)],
    [`${g}/selfsubjectrulesreviews`, selfSubjectRulesReview(authorizer)],
  ]);
}
