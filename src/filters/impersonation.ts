/**
 * Impersonation filter: `Impersonate-User`, `Impersonate-Group` (repeatable), `Impersonate-Uid`
 * and `Impersonate-Extra-<key>` (key lower-cased and percent-decoded) replace the user after
 * each is allowed by the authorizer with the `impersonate` verb (upstream order: user, groups,
 * extras, uid). The authorizer is the server's chain (src/auth/authz), as for any request.
 */
import { errors, toStatus } from '../api/status.js';
import { sendStatus } from '../http/exchange.js';
import {
  ANONYMOUS_USER,
  AUTHENTICATED_GROUP,
  SA_PREFIX,
  UNAUTHENTICATED_GROUP,
  type Attributes,
  type Authorizer,
  type MaybeAsync,
  type UserInfo,
} from '../api/user.js';
import { forbiddenError, forbiddenMessage, resourceAttributes } from '../auth/authz/attributes.js';
import { mayHaveBody, preReadBody } from './body.js';
import type { FilterHandler, ImpersonationRequest } from '../http/filter-request.js';

export type { ImpersonationRequest };

export interface ImpersonationDeps {
  authorize: Authorizer;
  /** `authentication.<domain>`: API group of the uids and userextras checks */
  authenticationGroup: string;
  /** the body limit, for pre-reading while an asynchronous authorizer (a webhook) answers */
  maxRequestBodyBytes?: number;
}

const EXTRA_PREFIX = 'impersonate-extra-';

/** Header access the reader needs (uWS HttpRequest); header names arrive lower-cased. */
interface HeaderSource {
  getHeader(name: string): string;
  forEach(cb: (key: string, value: string) => void): void;
}

function unescapeKey(k: string): string {
  try {
    return decodeURIComponent(k);
  } catch {
    return k;
  }
}

/**
 * The impersonation headers, or undefined when the request carries none. The cheap probe of
 * the three fixed headers keeps the common request from walking every header.
 */
export function readImpersonation(req: HeaderSource): ImpersonationRequest | undefined {
  if (!req.getHeader('impersonate-user') && !req.getHeader('impersonate-group') && !req.getHeader('impersonate-uid'))
    return undefined;
  const r: ImpersonationRequest = { user: '', uid: '', groups: [], extra: {} };
  // a repeated user or uid header: the first value, as Go's Header.Get (every check and the
  // resulting identity use that same one)
  let user: string | undefined, uid: string | undefined;
  req.forEach((k, v) => {
    if (k === 'impersonate-user') user ??= v;
    else if (k === 'impersonate-uid') uid ??= v;
    else if (k === 'impersonate-group') r.groups.push(v);
    else if (k.startsWith(EXTRA_PREFIX)) (r.extra[unescapeKey(k.slice(EXTRA_PREFIX.length))] ??= []).push(v);
  });
  r.user = user ?? '';
  r.uid = uid ?? '';
  return r;
}

/**
 * Checks every requested value, then builds the impersonated user (throws, or rejects with,
 * 403/500 StatusErrors). Synchronous while the authorizer answers synchronously.
 */
export function impersonate(
  requester: UserInfo,
  imp: ImpersonationRequest,
  deps: ImpersonationDeps,
): MaybeAsync<UserInfo> {
  const extraKeys = Object.keys(imp.extra);
  if (!imp.user) {
    throw errors.internal(
      `requested impersonation of ${imp.groups.length ? 'groups' : imp.uid ? 'a uid' : 'extra'} without impersonating a user`,
    );
  }
  const checks: Omit<Attributes, 'user' | 'verb'>[] = [];
  if (imp.user.startsWith(SA_PREFIX) && imp.user.split(':').length === 4) {
    const [, , namespace, name] = imp.user.split(':');
    checks.push({ apiGroup: '', resource: 'serviceaccounts', namespace, name });
  } else checks.push({ apiGroup: '', resource: 'users', name: imp.user });
  for (const g of imp.groups) checks.push({ apiGroup: '', resource: 'groups', name: g });
  for (const k of extraKeys)
    for (const v of imp.extra[k]!)
      checks.push({ apiGroup: deps.authenticationGroup, resource: 'userextras', subresource: k, name: v });
  if (imp.uid) checks.push({ apiGroup: deps.authenticationGroup, resource: 'uids', name: imp.uid });
  return checkFrom(requester, imp, checks, 0, deps);
}

function checkFrom(
  requester: UserInfo,
  imp: ImpersonationRequest,
  checks: Omit<Attributes, 'user' | 'verb'>[],
  from: number,
  deps: ImpersonationDeps,
): MaybeAsync<UserInfo> {
  for (let i = from; i < checks.length; i++) {
    const a: Attributes = { ...checks[i]!, user: requester, verb: 'impersonate' };
    const d = deps.authorize(a);
    const decide = (res: { decision: string; reason?: string }) => {
      if (res.decision === 'allow') return;
      throw forbiddenError(
        a.resource,
        a.apiGroup,
        a.name!,
        forbiddenMessage(resourceAttributes(a)) + (res.reason ? `: ${res.reason}` : ''),
      );
    };
    if (d instanceof Promise)
      return d.then((res) => {
        decide(res);
        return checkFrom(requester, imp, checks, i + 1, deps);
      });
    decide(d);
  }
  return impersonatedUser(imp);
}

function impersonatedUser(imp: ImpersonationRequest): UserInfo {
  const groups = [...imp.groups];
  const sa = imp.user.startsWith(SA_PREFIX) ? imp.user.split(':') : undefined;
  if (groups.length === 0 && sa?.length === 4) groups.push('system:serviceaccounts', `system:serviceaccounts:${sa[2]}`);
  if (imp.user !== ANONYMOUS_USER) {
    if (!groups.includes(AUTHENTICATED_GROUP) && !groups.includes(UNAUTHENTICATED_GROUP))
      groups.push(AUTHENTICATED_GROUP);
  } else if (!groups.includes(UNAUTHENTICATED_GROUP)) groups.push(UNAUTHENTICATED_GROUP);
  const u: UserInfo = { username: imp.user, groups };
  if (imp.uid) u.uid = imp.uid;
  if (Object.keys(imp.extra).length) u.extra = imp.extra;
  return u;
}

export function withImpersonation(next: FilterHandler, deps: ImpersonationDeps): FilterHandler {
  return (r) => {
    if (!r.impersonation) return next(r);
    let u: MaybeAsync<UserInfo>;
    try {
      u = impersonate(r.user!, r.impersonation, deps);
    } catch (e) {
      return sendStatus(r.x, toStatus(e));
    }
    if (!(u instanceof Promise)) {
      r.user = u;
      r.x.audit?.impersonatedUser(u);
      return next(r);
    }
    if (mayHaveBody(r.method))
      r.body ??= preReadBody(r.x, deps.maxRequestBodyBytes ?? 3 * 1024 * 1024, r.headers.contentLength);
    u.then(
      (user) => {
        if (r.x.aborted) return;
        r.user = user;
        r.x.audit?.impersonatedUser(user);
        next(r);
      },
      (e) => {
        if (!r.x.aborted) sendStatus(r.x, toStatus(e));
      },
    );
  };
}
