/**
 * Discovery documents (/api, /apis, /apis/<g>, /api/v1, /apis/<g>/<v>, aggregated discovery) as
 * plain JSON objects in the upstream shapes (the OpenAPI documents are in openapi-documents.ts).
 * Every document is built once per registry generation (it changes only when custom resources
 * start or stop being served) and the same object is returned on later calls: callers must not mutate the results.
 */
import { groupFor } from '../api/identity.js';
import { memo } from './document-memo.js';
import type { Registry } from './registry.js';
import { storageHashOf } from './storage-version-hash.js';
import type { ResourceDef, Verb } from './types.js';

export interface ServerAddressByClientCIDR {
  clientCIDR: string;
  serverAddress: string;
}
export interface APIVersions {
  kind: 'APIVersions';
  versions: string[];
  serverAddressByClientCIDRs: ServerAddressByClientCIDR[];
}
export interface GroupVersionForDiscovery {
  groupVersion: string;
  version: string;
}
export interface APIGroupEntry {
  name: string;
  versions: GroupVersionForDiscovery[];
  preferredVersion: GroupVersionForDiscovery;
}
export interface APIGroup extends APIGroupEntry {
  kind: 'APIGroup';
  apiVersion: 'v1';
}
export interface APIGroupList {
  kind: 'APIGroupList';
  apiVersion: 'v1';
  groups: APIGroupEntry[];
}
export interface APIResource {
  name: string;
  singularName: string;
  namespaced: boolean;
  group?: string;
  version?: string;
  kind: string;
  verbs: Verb[];
  shortNames?: string[];
  categories?: string[];
  storageVersionHash?: string;
}
export interface APIResourceList {
  kind: 'APIResourceList';
  apiVersion: 'v1';
  groupVersion: string;
  resources: APIResource[];
}

export interface GroupVersionKind {
  group: string;
  version: string;
  kind: string;
}
export interface APISubresourceDiscovery {
  subresource: string;
  responseKind: GroupVersionKind;
  verbs: Verb[];
}
export interface APIResourceDiscovery {
  resource: string;
  responseKind: GroupVersionKind;
  scope: 'Namespaced' | 'Cluster';
  singularResource: string;
  verbs: Verb[];
  shortNames?: string[];
  categories?: string[];
  subresources?: APISubresourceDiscovery[];
}
export interface APIVersionDiscovery {
  version: string;
  resources: APIResourceDiscovery[];
  freshness: 'Current';
}
export interface APIGroupDiscovery {
  metadata: { name?: string; creationTimestamp: null };
  versions: APIVersionDiscovery[];
}
export interface APIGroupDiscoveryList {
  kind: 'APIGroupDiscoveryList';
  apiVersion: string;
  metadata: Record<string, never>;
  items: APIGroupDiscovery[];
}

const groupVersion = (group: string, version: string): string => (group === '' ? version : `${group}/${version}`);
const gvFor = (group: string, version: string): GroupVersionForDiscovery => ({
  groupVersion: groupVersion(group, version),
  version,
});
const optional = <K extends string>(key: K, list: string[]): Partial<Record<K, string[]>> =>
  list.length > 0 ? ({ [key]: list } as Record<K, string[]>) : {};

/** GET /api */
export function apiVersions(serverAddress: string): APIVersions {
  return {
    kind: 'APIVersions',
    versions: ['v1'],
    serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress }],
  };
}

function groupEntry(registry: Registry, name: string): APIGroupEntry | undefined {
  const g = registry.group(name);
  if (!g) return undefined;
  return { name, versions: g.versions.map((v) => gvFor(name, v)), preferredVersion: gvFor(name, g.preferredVersion) };
}

/** GET /apis: every served named group (the core group is at /api). */
export function apiGroupList(registry: Registry): APIGroupList {
  return memo(registry, 'apis', () => ({
    kind: 'APIGroupList',
    apiVersion: 'v1',
    groups: registry
      .groups()
      .filter((g) => g.name !== '')
      .map((g) => groupEntry(registry, g.name)!),
  }));
}

/** GET /apis/<group>, or undefined when the group is not served. */
export function apiGroup(registry: Registry, group: string): APIGroup | undefined {
  if (group === '') return undefined;
  const entry = groupEntry(registry, group);
  return entry && { kind: 'APIGroup', apiVersion: 'v1', ...entry };
}

function apiResources(registry: Registry, r: ResourceDef): APIResource[] {
  const hash = storageHashOf(registry, r);
  const main: APIResource = {
    name: r.resource,
    singularName: r.singularName,
    namespaced: r.namespaced,
    kind: r.kind,
    verbs: r.verbs,
    ...optional('shortNames', r.shortNames),
    ...optional('categories', r.categories),
    ...(hash !== undefined ? { storageVersionHash: hash } : {}),
  };
  const subs = r.subresources.map(
    (s): APIResource => ({
      name: `${r.resource}/${s.name}`,
      singularName: '',
      namespaced: r.namespaced,
      ...(s.group !== r.group || s.version !== r.version ? { group: s.group, version: s.version } : {}),
      kind: s.kind,
      verbs: s.verbs,
    }),
  );
  return [main, ...subs];
}

/** GET /api/v1 or /apis/<group>/<version>, or undefined when the group-version is not served. */
export function apiResourceList(registry: Registry, group: string, version: string): APIResourceList | undefined {
  if (!registry.isServed(group, version)) return undefined;
  return memo(registry, `resources:${group}/${version}`, () => ({
    kind: 'APIResourceList',
    apiVersion: 'v1',
    groupVersion: groupVersion(group, version),
    resources: registry
      .resourcesFor(group, version)
      .flatMap((r) => apiResources(registry, r))
      .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)),
  }));
}

/** Upstream leaves group and version empty when the kind is in the resource's own group-version. */
function responseKind(r: ResourceDef, group: string, version: string, kind: string): GroupVersionKind {
  return r.group === group && r.version === version ? { group: '', version: '', kind } : { group, version, kind };
}

function resourceDiscovery(r: ResourceDef): APIResourceDiscovery {
  const subresources = r.subresources.map((s) => ({
    subresource: s.name,
    responseKind: responseKind(r, s.group, s.version, s.kind),
    verbs: s.verbs,
  }));
  return {
    resource: r.resource,
    responseKind: responseKind(r, r.group, r.version, r.kind),
    scope: r.namespaced ? 'Namespaced' : 'Cluster',
    singularResource: r.singularName,
    verbs: r.verbs,
    ...optional('shortNames', r.shortNames),
    ...optional('categories', r.categories),
    ...(subresources.length > 0 ? { subresources } : {}),
  };
}

/**
 * Aggregated discovery (`Accept: application/json;g=apidiscovery.<domain>;v=v2;as=APIGroupDiscoveryList`):
 * `core` true for /api (the core group only), false for /apis (every named group).
 */
export function aggregatedDiscovery(registry: Registry, core: boolean): APIGroupDiscoveryList {
  return memo(registry, `aggregated:${core}`, () => ({
    kind: 'APIGroupDiscoveryList',
    apiVersion: `${groupFor(registry.identity, 'apidiscovery.plat.io')}/v2`,
    metadata: {},
    items: registry
      .groups()
      .filter((g) => (g.name === '') === core)
      .map((g) => ({
        metadata: { ...(g.name === '' ? {} : { name: g.name }), creationTimestamp: null },
        versions: g.versions.map(
          (version): APIVersionDiscovery => ({
            version,
            resources: registry.resourcesFor(g.name, version).map(resourceDiscovery),
            freshness: 'Current',
          }),
        ),
      })),
  }));
}
