import { fileURLToPath } from 'node:url';
/**
 * Discovery documents (/api, /apis, /apis/<g>, /api/v1, /apis/<g>/<v>, aggregated discovery) and
 * the OpenAPI documents (/openapi/v2, /openapi/v3), as plain JSON objects in the upstream shapes.
 * Every document is built once per registry generation (it changes only when custom resources
 * start or stop being served) and the same object is returned on later calls: callers must not mutate the results.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { groupFor, type Identity } from '../api/identity.js';
import type { Registry } from './registry.js';
import { customOpenAPI } from './openapi-custom.js';
import { storageHashOf } from './storage-version-hash.js';
import { describedDefinitions, describedParameters } from '../api/descriptions.js';
import { servedOpenAPI } from '../api/openapi-names.js';
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

type Json = Record<string, unknown>;
export interface OpenAPIV2Document extends Json {
  paths: Record<string, Json>;
  definitions: Record<string, Json>;
}
export interface OpenAPIV3Document extends Json {
  openapi: '3.0.0';
  paths: Record<string, Json>;
  components: Json;
}
export interface OpenAPIV3Index {
  paths: Record<string, { serverRelativeURL: string }>;
}

/** The reference schema directory: the repository's `reference/` copy (dist/src/api -> repo root). */
export const DEFAULT_REFERENCE_DIR = fileURLToPath(new URL('../../../reference', import.meta.url));

const cache = new WeakMap<Registry, Map<string, unknown>>();

/** Builds a document once per registry and key; later calls return the same object. */
function memo<T>(registry: Registry, key: string, build: () => T): T {
  let docs = cache.get(registry);
  // served custom resources change the registry: documents are rebuilt once per generation
  if (!docs || docs.get('\u0000generation') !== registry.generation) {
    cache.set(registry, (docs = new Map<string, unknown>([['\u0000generation', registry.generation]])));
  }
  if (!docs.has(key)) docs.set(key, build());
  return docs.get(key) as T;
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

interface ReferenceDocument extends OpenAPIV2Document {
  parameters: Record<string, Json>;
  securityDefinitions: Json;
}

const references = new Map<string, ReferenceDocument>();

/** The reference document, its definitions described (src/api/descriptions.ts) in the served domain's names. */
function reference(referenceDir: string, identity: Identity): ReferenceDocument {
  const key = `${referenceDir}\u0000${identity.domain}`;
  let doc = references.get(key);
  if (!doc) {
    doc = JSON.parse(readFileSync(resolve(referenceDir, 'openapi-v2.json'), 'utf8')) as ReferenceDocument;
    doc = {
      ...doc,
      definitions: describedDefinitions(doc.definitions, referenceDir, identity),
      parameters: describedParameters(doc.parameters, referenceDir, identity),
    };
    references.set(key, doc);
  }
  return doc;
}

interface ApiPath {
  group?: string;
  version?: string;
  resource?: string;
}

/** Splits `/api/v1/...` and `/apis/<g>/<v>/...` (legacy `/watch/` and namespace segments skipped). */
function apiPath(path: string): ApiPath | undefined {
  const segs = path.split('/').filter((s) => s !== '');
  const root = segs.shift();
  if (root !== 'api' && root !== 'apis') return undefined;
  const group = root === 'api' ? '' : segs.shift();
  const version = segs.shift();
  if (segs[0] === 'watch') segs.shift();
  if (segs[0] === 'namespaces' && segs[1] === '{namespace}' && segs.length > 2) segs.splice(0, 2);
  return { group, version, resource: segs[0] };
}

/** The reference path with its group renamed to the served domain, or undefined when not served. */
function servedPath(registry: Registry, path: string): string | undefined {
  const p = apiPath(path);
  if (p?.group === undefined) return path;
  const group = groupFor(registry.identity, p.group);
  const renamed = p.group === group ? path : path.replace(`/apis/${p.group}/`, `/apis/${group}/`);
  const served =
    p.version === undefined
      ? group === '' || registry.group(group) !== undefined
      : p.resource === undefined
        ? registry.isServed(group, p.version)
        : registry.lookup(group, p.version, p.resource) !== undefined;
  return served ? renamed : undefined;
}

/** Names of the definitions (and shared parameters) reachable from `roots`. */
function referenced(doc: ReferenceDocument, roots: unknown[]): { definitions: Set<string>; parameters: Set<string> } {
  const definitions = new Set<string>();
  const parameters = new Set<string>();
  const stack = [...roots];
  while (stack.length > 0) {
    const node = stack.pop();
    if (Array.isArray(node)) stack.push(...node);
    else if (typeof node === 'object' && node !== null) {
      const ref = (node as Json)['$ref'];
      if (typeof ref === 'string') followRef(ref, doc, definitions, parameters, stack);
      stack.push(...Object.values(node));
    }
  }
  return { definitions, parameters };
}

function followRef(
  ref: string,
  doc: ReferenceDocument,
  defs: Set<string>,
  params: Set<string>,
  stack: unknown[],
): void {
  const [, section, name] = ref.split('/');
  const seen = section === 'definitions' ? defs : section === 'parameters' ? params : undefined;
  if (!seen || name === undefined || seen.has(name)) return;
  seen.add(name);
  stack.push(section === 'definitions' ? doc.definitions[name] : doc.parameters[name]);
}

const pick = <T>(all: Record<string, T>, names: Set<string>): Record<string, T> =>
  Object.fromEntries([...names].sort().map((n) => [n, all[n]!]));

/** The reference document plus the paths and definitions of the served custom resources. */
function withCustom(registry: Registry, referenceDir: string): ReferenceDocument {
  const doc = reference(referenceDir, registry.identity);
  const types = registry.customTypes();
  if (!types.length) return doc;
  return memo(registry, `custom:${referenceDir}`, () => {
    const c = customOpenAPI(types);
    return { ...doc, paths: { ...doc.paths, ...c.paths }, definitions: { ...doc.definitions, ...c.definitions } };
  });
}

/** GET /openapi/v2: the reference document restricted to the served groups, versions and resources. */
export function openapiV2(registry: Registry, referenceDir = DEFAULT_REFERENCE_DIR): OpenAPIV2Document {
  return memo(registry, `v2:${referenceDir}`, () =>
    servedOpenAPI(referenceV2(registry, referenceDir), registry.identity),
  );
}

/** The v2 document in the reference's names (served paths only): what v2 and v3 are served from. */
function referenceV2(registry: Registry, referenceDir: string): OpenAPIV2Document {
  return memo(registry, `v2ref:${referenceDir}`, () => {
    const doc = withCustom(registry, referenceDir);
    const paths: Record<string, Json> = {};
    for (const [path, item] of Object.entries(doc.paths)) {
      const served = servedPath(registry, path);
      if (served !== undefined) paths[served] = item;
    }
    const { definitions, parameters } = referenced(doc, Object.values(paths));
    return {
      ...doc,
      paths,
      definitions: pick(doc.definitions, definitions),
      parameters: pick(doc.parameters, parameters),
    };
  });
}

/** The OpenAPI v3 document name of a path: `api/v1`, `apis/<g>/<v>`, `apis/<g>`, `version`, ... */
function v3Name(path: string): string {
  const segs = path.split('/').filter((s) => s !== '');
  if (segs[0] === 'api') return segs.slice(0, 2).join('/');
  if (segs[0] === 'apis') return segs.slice(0, 3).join('/');
  const param = segs.findIndex((s) => s.startsWith('{'));
  return (param < 0 ? segs : segs.slice(0, param)).join('/');
}

const STATUS_TEXT: Record<string, string> = {
  '200': 'OK',
  '201': 'Created',
  '202': 'Accepted',
  '401': 'Unauthorized',
};

/** Rewrites every `$ref` from `#/definitions/` to `#/components/schemas/`. */
function v3Refs(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(v3Refs);
  if (typeof node !== 'object' || node === null) return node;
  return Object.fromEntries(
    Object.entries(node).map(([k, v]) => [
      k,
      k === '$ref' && typeof v === 'string' ? v.replace('#/definitions/', '#/components/schemas/') : v3Refs(v),
    ]),
  );
}

const content = (types: unknown, schema: unknown): Json =>
  Object.fromEntries(((types as string[] | undefined) ?? ['application/json']).map((t) => [t, { schema }]));

/** A v2 non-body parameter as v3: type information moves under `schema`. */
function v3Parameter(p: Json): Json {
  const { name, in: where, description, required, ...schema } = p;
  return { name, in: where, ...(description ? { description } : {}), ...(required ? { required } : {}), schema };
}

function v3Operation(op: Json, doc: ReferenceDocument): Json {
  const { consumes, produces, parameters, responses, schemes: _schemes, ...rest } = op;
  const params = resolveParameters(parameters, doc);
  const body = params.find((p) => p['in'] === 'body');
  const others = params.filter((p) => p['in'] !== 'body').map(v3Parameter);
  const v3Responses = Object.fromEntries(
    Object.entries((responses ?? {}) as Record<string, Json>).map(([code, r]) => [
      code,
      { description: STATUS_TEXT[code] ?? '', ...(r['schema'] ? { content: content(produces, r['schema']) } : {}) },
    ]),
  );
  return {
    ...rest,
    ...(others.length > 0 ? { parameters: others } : {}),
    ...(body
      ? { requestBody: { content: content(consumes, body['schema']), ...(body['required'] ? { required: true } : {}) } }
      : {}),
    responses: v3Responses,
  };
}

function resolveParameters(parameters: unknown, doc: ReferenceDocument): Json[] {
  return ((parameters as Json[] | undefined) ?? []).map((p) => {
    const ref = p['$ref'];
    return typeof ref === 'string' ? doc.parameters[ref.split('/').pop()!]! : p;
  });
}

function v3PathItem(item: Json, doc: ReferenceDocument): Json {
  return Object.fromEntries(
    Object.entries(item).map(([method, op]) => [
      method,
      method === 'parameters' ? resolveParameters(op, doc).map(v3Parameter) : v3Operation(op as Json, doc),
    ]),
  );
}

function buildV3(registry: Registry, referenceDir: string): Map<string, OpenAPIV3Document> {
  const doc = withCustom(registry, referenceDir);
  const byName = new Map<string, Record<string, Json>>();
  for (const [path, item] of Object.entries(referenceV2(registry, referenceDir).paths)) {
    const name = v3Name(path);
    byName.set(name, { ...byName.get(name), [path]: v3PathItem(item, doc) });
  }
  const documents = new Map<string, OpenAPIV3Document>();
  for (const [name, paths] of [...byName.entries()].sort(([a], [b]) => (a < b ? -1 : 1))) {
    const { definitions } = referenced(doc, Object.values(paths));
    documents.set(
      name,
      servedOpenAPI(
        v3Refs({
          openapi: '3.0.0',
          info: doc['info'],
          paths,
          components: { schemas: pick(doc.definitions, definitions), securitySchemes: doc.securityDefinitions },
        }) as OpenAPIV3Document,
        registry.identity,
      ),
    );
  }
  return documents;
}

const v3Documents = (registry: Registry, referenceDir: string): Map<string, OpenAPIV3Document> =>
  memo(registry, `v3:${referenceDir}`, () => buildV3(registry, referenceDir));

/** GET /openapi/v3: one entry per document name, with the upstream hash (SHA-512, upper-case hex). */
export function openapiV3Index(registry: Registry, referenceDir = DEFAULT_REFERENCE_DIR): OpenAPIV3Index {
  return memo(registry, `v3index:${referenceDir}`, () => {
    const paths: OpenAPIV3Index['paths'] = {};
    for (const [name, doc] of v3Documents(registry, referenceDir)) {
      const hash = createHash('sha512').update(JSON.stringify(doc)).digest('hex').toUpperCase();
      paths[name] = { serverRelativeURL: `/openapi/v3/${name}?hash=${hash}` };
    }
    return { paths };
  });
}

/** GET /openapi/v3/<name> (e.g. `apis/apps/v1`), or undefined when nothing is served under that name. */
export function openapiV3Doc(
  registry: Registry,
  name: string,
  referenceDir = DEFAULT_REFERENCE_DIR,
): OpenAPIV3Document | undefined {
  return v3Documents(registry, referenceDir).get(name);
}
