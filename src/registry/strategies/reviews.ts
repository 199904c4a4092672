/**
 * Virtual create-only kinds: SelfSubjectReview, TokenReview and the TokenRequest subresource of
 * service accounts. They are never stored: the front thread answers them from the request's
 * user and the authenticators (which live there), so they bypass the shard actors.
 */
import type { KubeObject, Stored } from '../../api/object.js';
import { errors } from '../../api/status.js';
import { groupFor, type Identity } from '../../api/identity.js';
import {
  addAuthenticatedGroup,
  type BoundObject,
  type TokenAuthenticator,
  type TokenIssuer,
  type UserInfo,
} from '../../api/user.js';

export interface VirtualContext {
  user: UserInfo;
  namespace: string;
  name: string;
  /** apiVersion of the reply kind (group/version as served) */
  apiVersion: string;
}

/**
 * A decoded review or TokenRequest body: field types were checked against the kind's schema,
 * but any field may be absent.
 */
export interface ReviewRequest extends KubeObject {
  spec?: {
    token?: unknown;
    audiences?: unknown;
    expirationSeconds?: number;
    boundObjectRef?: BoundObjectRef;
    [field: string]: unknown;
  };
}

/** One create-only kind: the reply object (201) for a decoded request object. */
export interface VirtualKind {
  create(obj: ReviewRequest, ctx: VirtualContext): unknown;
}

export interface ReviewDeps {
  /** the bearer token authenticators, as the request path uses them */
  tokens: TokenAuthenticator;
  apiAudiences: readonly string[];
  serviceAccounts?: TokenIssuer;
  /** a stored core/v1 object (serviceaccounts, pods, secrets), or its StatusError (404 when absent) */
  getCore(resource: string, namespace: string, name: string): Promise<StoredCore>;
  now(): number;
}

/** What the reviews read of a stored core object (a ServiceAccount, Pod or Secret). */
type StoredCore = Stored<KubeObject<{ serviceAccountName?: string }>> & { metadata: { uid: string } };
/** spec.boundObjectRef as written (checked here) */
interface BoundObjectRef {
  apiVersion?: unknown;
  kind?: unknown;
  name?: unknown;
  uid?: unknown;
}

const rfc3339 = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');

function expectKind(obj: KubeObject, kind: string): void {
  if (obj.kind !== undefined && obj.kind !== kind)
    throw errors.badRequest(`the kind of the body must be ${kind}, got ${JSON.stringify(obj.kind)}`);
}

/** The wire form of a user (empty optional fields omitted). */
export function userInfoJSON(u: UserInfo): Record<string, unknown> {
  const out: Record<string, unknown> = { username: u.username };
  if (u.uid) out.uid = u.uid;
  out.groups = u.groups;
  if (u.extra && Object.keys(u.extra).length) out.extra = u.extra;
  return out;
}

const selfSubjectReview: VirtualKind = {
  create(obj, ctx) {
    expectKind(obj, 'SelfSubjectReview');
    return {
      kind: 'SelfSubjectReview',
      apiVersion: ctx.apiVersion,
      metadata: { creationTimestamp: null },
      status: { userInfo: userInfoJSON(ctx.user) },
    };
  },
};

function tokenReview(deps: ReviewDeps): VirtualKind {
  return {
    async create(obj, ctx) {
      expectKind(obj, 'TokenReview');
      const spec = obj.spec ?? {};
      if (typeof spec.token !== 'string' || spec.token === '')
        throw errors.badRequest('token is required for TokenReview in authentication');
      const wanted =
        Array.isArray(spec.audiences) && spec.audiences.length > 0 ? spec.audiences.map(String) : deps.apiAudiences;
      const res = await deps.tokens.authenticateToken(spec.token, wanted);
      const status: Record<string, unknown> = { authenticated: res.kind === 'user' };
      if (res.kind === 'user') {
        status.user = userInfoJSON(addAuthenticatedGroup(res.user));
        // an audience-agnostic answer for the API audiences themselves carries none: they are the intersection
        const auds = res.audiences ?? wanted;
        if (auds.length) status.audiences = auds;
      } else {
        status.user = {};
        status.error = res.kind === 'error' ? res.reason : 'invalid bearer token';
      }
      return { kind: 'TokenReview', apiVersion: ctx.apiVersion, metadata: { creationTimestamp: null }, spec, status };
    },
  };
}

const MIN_EXPIRATION = 600;
const MAX_EXPIRATION = 2 ** 32;

function tokenRequest(deps: ReviewDeps): VirtualKind {
  return {
    async create(obj, ctx) {
      const sa = deps.serviceAccounts;
      if (!sa?.canIssue) throw errors.notFoundMessage('the server could not find the requested resource');
      expectKind(obj, 'TokenRequest');
      const spec = obj.spec ?? {};
      const exp = spec.expirationSeconds ?? 3600;
      const target = { kind: 'TokenRequest', group: ctx.apiVersion.split('/')[0], name: ctx.name };
      const invalid = (field: string, message: string) =>
        errors.invalid(target, [{ reason: 'FieldValueInvalid', field, message }]);
      if (!Number.isInteger(exp))
        throw invalid('spec.expirationSeconds', `Invalid value: ${JSON.stringify(exp)}: must be an integer`);
      if (exp < MIN_EXPIRATION)
        throw invalid(
          'spec.expirationSeconds',
          `Invalid value: ${exp}: may not specify a duration less than 10 minutes`,
        );
      if (exp > MAX_EXPIRATION)
        throw invalid(
          'spec.expirationSeconds',
          `Invalid value: ${exp}: may not specify a duration larger than 2^32 seconds`,
        );
      const audiences: string[] =
        Array.isArray(spec.audiences) && spec.audiences.length > 0
          ? spec.audiences.map(String)
          : [...deps.apiAudiences];
      const stored = await deps.getCore('serviceaccounts', ctx.namespace, ctx.name);
      const bound = spec.boundObjectRef ? await boundObject(deps, spec.boundObjectRef, ctx) : undefined;
      const { token, expiresAt } = await sa.issue(
        { namespace: ctx.namespace, name: ctx.name, uid: stored.metadata.uid, bound },
        audiences,
        exp,
      );
      return {
        kind: 'TokenRequest',
        apiVersion: ctx.apiVersion,
        metadata: { name: ctx.name, namespace: ctx.namespace, creationTimestamp: rfc3339(deps.now()) },
        spec: {
          audiences,
          expirationSeconds: exp,
          boundObjectRef: bound ? { ...spec.boundObjectRef, uid: bound.uid } : null,
        },
        status: { token, expirationTimestamp: rfc3339(expiresAt.getTime()) },
      };
    },
  };
}

/**
 * Upstream's checks of spec.boundObjectRef: a core/v1 Pod (running as this service account) or
 * Secret in the namespace, whose uid matches when one is given (409 otherwise).
 */
async function boundObject(deps: ReviewDeps, ref: BoundObjectRef, ctx: VirtualContext): Promise<BoundObject> {
  const apiVersion = String(ref.apiVersion ?? ''),
    kind = String(ref.kind ?? ''),
    name = String(ref.name ?? '');
  if (apiVersion !== 'v1' || (kind !== 'Pod' && kind !== 'Secret')) {
    const group = apiVersion.includes('/') ? apiVersion.slice(0, apiVersion.indexOf('/')) : '';
    const version = apiVersion.includes('/') ? apiVersion.slice(apiVersion.indexOf('/') + 1) : apiVersion;
    throw errors.badRequest(`cannot bind token to object of type ${group}/${version}, Kind=${kind}`);
  }
  const obj = await deps.getCore(kind === 'Pod' ? 'pods' : 'secrets', ctx.namespace, name);
  if (kind === 'Pod' && (obj.spec?.serviceAccountName ?? '') !== ctx.name) {
    throw errors.badRequest(
      `cannot bind token for serviceaccount ${JSON.stringify(ctx.name)} to pod running with different serviceaccount name.`,
    );
  }
  const uid = String(obj.metadata.uid);
  if (ref.uid && ref.uid !== uid) {
    throw errors.conflict(
      { kind, resource: kind, name },
      `the UID in the bound object reference (${ref.uid}) does not match the UID in record. The object might have been deleted and then recreated`,
    );
  }
  return { kind, name, uid };
}

/** The virtual kinds keyed `<group>/<resource>[/<subresource>]` in the served domain. */
export function virtualKinds(identity: Identity, deps: ReviewDeps): Map<string, VirtualKind> {
  const authn = groupFor(identity, 'authentication.plat.io');
  return new Map<string, VirtualKind>([
    [`${authn}/selfsubjectreviews`, selfSubjectReview],
    [`${authn}/tokenreviews`, tokenReview(deps)],
    ['/serviceaccounts/token', tokenRequest(deps)],
  ]);
}
