/**
 * Authorization request attributes (upstream authorizer.Attributes) built from RequestInfo and
 * the authenticated user, and the upstream 403 Status for a denied request.
 */
import { errors, type Status } from '../../api/status.js';
import { parseFieldSelector } from '../../api/field-selectors.js';
import type { RequestInfo } from '../../http/request-info.js';
import { fieldRequirements, labelRequirements, type SelectorRequirement } from './selectors.js';
import type { Attributes as BaseAttributes, UserInfo } from '../../api/user.js';

export interface Attributes extends BaseAttributes {
  /** false for a non-resource request: then only `path` and `verb` (the lower-cased method) count */
  resourceRequest: boolean;
  /** the request path (non-resource requests are authorized by it) */
  path: string;
  apiVersion?: string;
  /** a list's or watch's selectors as requirements (AuthorizeWithSelectors: the node authorizer, webhooks) */
  fieldSelector?: SelectorRequirement[];
  labelSelector?: SelectorRequirement[];
}

/** A path segment name upstream accepts as a resource name (path.IsValidPathSegmentName). */
const validSegment = (s: string): boolean => s !== '.' && s !== '..' && !/[/%]/.test(s);

/**
 * Upstream's attributes of a request. Verbs follow RequestInfo (GET single = get, collection =
 * list, `?watch` on a collection = watch, POST = create, PUT = update, PATCH = patch, DELETE =
 * delete / deletecollection; non-resource = the lower-cased method) with upstream's details:
 * - a named GET with `?watch` is `get` (only the `/watch/` path form makes a named `watch`);
 * - list and watch take their name from a `metadata.name=<x>` field selector, so
 *   resourceNames can allow watching one object;
 * - a Namespace object is in its own namespace (`namespaces/foo` is in namespace `foo`).
 */
export function attributesFor(info: RequestInfo, user: UserInfo, query: URLSearchParams): Attributes {
  if (!info.isResourceRequest)
    return { user, verb: info.verb, resourceRequest: false, path: info.path, apiGroup: '', resource: '' };
  let verb = info.verb,
    name = info.name;
  if (verb === 'watch' && name && !isWatchPath(info)) verb = 'get';
  if ((verb === 'list' || verb === 'watch') && !name) name = nameFromFieldSelector(query.get('fieldSelector'));
  const namespace = info.resource === 'namespaces' && info.name ? info.name : info.namespace;
  const a: Attributes = {
    user,
    verb,
    resourceRequest: true,
    path: info.path,
    apiGroup: info.apiGroup,
    apiVersion: info.apiVersion,
    resource: info.resource,
  };
  if (info.subresource) a.subresource = info.subresource;
  if (namespace) a.namespace = namespace;
  if (name) a.name = name;
  if (verb === 'list' || verb === 'watch' || verb === 'deletecollection') {
    const fs = query.get('fieldSelector'),
      ls = query.get('labelSelector');
    if (fs) a.fieldSelector = fieldRequirements(fs);
    if (ls) a.labelSelector = labelRequirements(ls);
  }
  return a;
}

function isWatchPath(info: RequestInfo): boolean {
  const segs = info.path.split('/').filter(Boolean);
  return segs[info.apiPrefix === 'api' ? 2 : 3] === 'watch';
}

function nameFromFieldSelector(s: string | null): string {
  if (!s) return '';
  try {
    const name = parseFieldSelector(s).requiresExactMatch('metadata.name');
    return name !== undefined && validSegment(name) ? name : '';
  } catch {
    return '';
  }
}

/** Attributes of a resource check made by the server itself (impersonation, bind, escalate, reviews). */
export function resourceAttributes(a: BaseAttributes): Attributes {
  return { ...a, resourceRequest: true, path: '' };
}

/** upstream forbiddenMessage */
export function forbiddenMessage(a: Attributes): string {
  const who = `User ${JSON.stringify(a.user.username)}`;
  if (!a.resourceRequest) return `${who} cannot ${a.verb} path ${JSON.stringify(a.path)}`;
  const resource = a.subresource ? `${a.resource}/${a.subresource}` : a.resource;
  const where = a.namespace ? `in the namespace ${JSON.stringify(a.namespace)}` : 'at the cluster scope';
  return `${who} cannot ${a.verb} resource ${JSON.stringify(resource)} in API group ${JSON.stringify(a.apiGroup)} ${where}`;
}

/** upstream NewForbidden(groupResource, name, err): `<resource>[.<group>] ["<name>"] is forbidden: <why>`. */
export function forbiddenError(resource: string, group: string, name: string, why: string) {
  const qualified = group ? `${resource}.${group}` : resource;
  const message = name
    ? `${qualified} ${JSON.stringify(name)} is forbidden: ${why}`
    : `${qualified} is forbidden: ${why}`;
  return errors.forbidden(message, { group, kind: resource, ...(name ? { name } : {}) });
}

/**
 * The 403 of a denied request, as upstream's responsewriters.Forbidden: the message, then
 * `: <reason>` when the authorizers gave one. Non-resource requests carry empty details.
 */
export function forbiddenStatus(a: Attributes, reason: string | undefined): Status {
  const why = forbiddenMessage(a) + (reason ? `: ${reason}` : '');
  if (a.resourceRequest && a.resource) return forbiddenError(a.resource, a.apiGroup, a.name ?? '', why).status;
  return {
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message: `forbidden: ${why}`,
    reason: 'Forbidden',
    details: {},
    code: 403,
  };
}
