/**
 * Discovery of the groups remote APIServices serve: entries for `/apis`, the APIGroup at
 * `/apis/<group>` (versions by versionPriority, as upstream's aggregator), and aggregated
 * discovery items built from each extension server's APIResourceList (fetched by the
 * availability check; `Stale` until one passed).
 */
import type { APIGroup, APIGroupEntry } from '../registry/discovery.js';
import type { ApiServices, RemoteService } from './apiservices.js';
import { fieldAt } from '../api/object.js';

function entry(group: string, list: RemoteService[]): APIGroupEntry {
  const versions = list.map((s) => ({ groupVersion: `${group}/${s.version}`, version: s.version }));
  return { name: group, versions, preferredVersion: versions[0]! };
}

export function remoteGroupEntries(apiServices: ApiServices): APIGroupEntry[] {
  const groups = [...apiServices.remoteGroups()];
  groups.sort(
    (a, b) =>
      Math.max(...b[1].map((s) => s.groupPriorityMinimum)) - Math.max(...a[1].map((s) => s.groupPriorityMinimum)) ||
      (a[0] < b[0] ? -1 : 1),
  );
  return groups.map(([g, list]) => entry(g, list));
}

export function remoteApiGroup(apiServices: ApiServices, group: string): APIGroup | undefined {
  const list = apiServices.remoteGroups().get(group);
  return list ? { kind: 'APIGroup', apiVersion: 'v1', ...entry(group, list) } : undefined;
}

/** An APIResourceList entry as an extension server listed it: copied as written, unchecked. */
interface ListedResource {
  name: string;
  kind?: unknown;
  group?: unknown;
  version?: unknown;
  namespaced?: unknown;
  singularName?: unknown;
  verbs?: unknown;
  shortNames?: unknown[];
  categories?: unknown[];
}

const isListed = (r: unknown): r is ListedResource => typeof fieldAt(r, 'name') === 'string';

/** APIResourceList entries → aggregated discovery (subresources folded into their resource). */
function resources(list: unknown): Record<string, unknown>[] {
  const listed = fieldAt(list, 'resources');
  const all = (Array.isArray(listed) ? listed : []).filter(isListed);
  const main = all.filter((r) => !r.name.includes('/'));
  return main.map((r) => {
    const subs = all
      .filter((s) => s.name.startsWith(`${r.name}/`))
      .map((s) => ({
        subresource: s.name.slice(r.name.length + 1),
        responseKind: { group: s.group ?? '', version: s.version ?? '', kind: s.kind ?? '' },
        verbs: s.verbs ?? [],
      }));
    return {
      resource: r.name,
      responseKind: { group: '', version: '', kind: r.kind ?? '' },
      scope: r.namespaced ? 'Namespaced' : 'Cluster',
      singularResource: r.singularName ?? '',
      verbs: r.verbs ?? [],
      ...(r.shortNames?.length ? { shortNames: r.shortNames } : {}),
      ...(r.categories?.length ? { categories: r.categories } : {}),
      ...(subs.length ? { subresources: subs } : {}),
    };
  });
}

/** The aggregated discovery items (APIGroupDiscovery) of the remote groups, resources as listed. */
export function remoteAggregatedItems(apiServices: ApiServices) {
  return remoteGroupEntries(apiServices).map((g) => {
    const list = apiServices.remoteGroups().get(g.name)!;
    return {
      metadata: { name: g.name, creationTimestamp: null },
      versions: list.map((s) => ({
        version: s.version,
        resources: resources(s.resources),
        freshness: s.resources && s.available ? 'Current' : 'Stale',
      })),
    };
  });
}
