/**
 * The OpenAPI documents (/openapi/v2, /openapi/v3 index and per group-version), built from the
 * reference schemas plus the served custom resources, as plain JSON objects in the upstream shapes.
 * Built once per registry generation (document-memo.ts): callers must not mutate the results.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describedDefinitions, describedParameters } from '../api/descriptions.js';
import { groupFor, type Identity } from '../api/identity.js';
import { servedOpenAPI } from '../api/openapi-names.js';
import { memo } from './document-memo.js';
import { customOpenAPI } from './openapi-custom.js';
import type { Registry } from './registry.js';

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
