/**
 * OpenAPI (v2 form) of the served custom resources: one definition per served version (the
 * CRD's schema with apiVersion, kind and metadata, `x-plat-group-version-kind`), its list,
 * and the paths of every verb and subresource, as upstream's CRD OpenAPI builder publishes.
 */
import type { CustomType } from './crd/types.js';

type Json = Record<string, unknown>;
const META = 'io.plat.apimachinery.pkg.apis.meta.v1';
const ref = (name: string): Json => ({ $ref: `#/definitions/${name}` });
const param = (name: string, where: 'path' | 'query', description: string): Json => ({
  name,
  in: where,
  type: 'string',
  uniqueItems: true,
  description,
  ...(where === 'path' ? { required: true } : {}),
});

export function definitionName(t: CustomType, version: string): string {
  return `${t.group.split('.').reverse().join('.')}.${version}.${t.kind}`;
}

function op(t: CustomType, version: string, action: string, id: string, response: Json, extra: Json = {}): Json {
  return {
    description: `${action} ${t.kind}`,
    operationId: id,
    consumes: ['application/json', 'application/yaml'],
    produces: ['application/json', 'application/yaml'],
    schemes: ['https'],
    tags: [`${t.group.replace(/\./g, '_')}_${version}`],
    responses: { '200': { description: 'OK', schema: response }, '401': { description: 'Unauthorized' } },
    'x-plat-action': action,
    'x-plat-group-version-kind': { group: t.group, version, kind: t.kind },
    ...extra,
  };
}

/** The definitions of one served version: the kind (its schema with the common fields) and its list. */
function versionDefinitions(t: CustomType, v: CustomType['versions'][number], name: string): Record<string, Json> {
  const definitions: Record<string, Json> = {};
  const gvk = [{ group: t.group, version: v.name, kind: t.kind }];
  const schema = v.schema && typeof v.schema === 'object' ? v.schema : { type: 'object' };
  definitions[name] = {
    ...schema,
    type: 'object',
    properties: {
      apiVersion: { type: 'string' },
      kind: { type: 'string' },
      metadata: ref(`${META}.ObjectMeta`),
      ...(schema.properties ?? {}),
    },
    'x-plat-group-version-kind': gvk,
    ...(v.selectableFields?.length
      ? { 'x-plat-selectable-fields': v.selectableFields.map((fieldPath) => ({ fieldPath })) }
      : {}),
  };
  definitions[`${name}List`] = {
    type: 'object',
    required: ['items'],
    properties: {
      apiVersion: { type: 'string' },
      items: { type: 'array', items: ref(name) },
      kind: { type: 'string' },
      metadata: ref(`${META}.ListMeta`),
    },
    'x-plat-group-version-kind': [{ group: t.group, version: v.name, kind: t.listKind }],
  };
  return definitions;
}

/** The paths of one served version: the collection, all namespaces, the item and its subresources. */
function versionPaths(t: CustomType, v: CustomType['versions'][number], name: string): Record<string, Json> {
  const paths: Record<string, Json> = {};
  const base = `/apis/${t.group}/${v.name}`;
  const scope = t.namespaced ? `${base}/namespaces/{namespace}/${t.plural}` : `${base}/${t.plural}`;
  const K = t.kind;
  const nsParam = t.namespaced
    ? [param('namespace', 'path', 'object name and auth scope, such as for teams and projects')]
    : [];
  const nameParam = param('name', 'path', `name of the ${K}`);
  // kubectl looks for fieldValidation among a write's parameters to use server-side field validation
  const writeParams = [
    param('dryRun', 'query', 'dry run'),
    param('fieldManager', 'query', 'field manager'),
    param('fieldValidation', 'query', 'field validation'),
  ];
  const body = (s: Json, extra: Json[] = []) => ({
    parameters: [{ name: 'body', in: 'body', required: true, schema: s }, ...writeParams, ...extra],
  });
  const item = ref(name);
  paths[scope] = {
    get: op(t, v.name, 'list', `list${K}`, ref(`${name}List`)),
    post: op(t, v.name, 'post', `create${K}`, item, body(item)),
    delete: op(t, v.name, 'deletecollection', `deletecollection${K}`, ref(`${META}.Status`)),
    parameters: nsParam,
  };
  if (t.namespaced)
    paths[`${base}/${t.plural}`] = {
      get: op(t, v.name, 'list', `list${K}ForAllNamespaces`, ref(`${name}List`)),
      parameters: [],
    };
  const itemOps = (suffix: string, s: Json, idSuffix: string) => ({
    get: op(t, v.name, 'get', `read${K}${idSuffix}`, s),
    put: op(t, v.name, 'put', `replace${K}${idSuffix}`, s, body(s)),
    patch: op(t, v.name, 'patch', `patch${K}${idSuffix}`, s, {
      consumes: ['application/json-patch+json', 'application/merge-patch+json', 'application/apply-patch+yaml'],
      ...body(ref(`${META}.Patch`), [
        { name: 'force', in: 'query', type: 'boolean', uniqueItems: true, description: 'force' },
      ]),
    }),
    ...(suffix === '' ? { delete: op(t, v.name, 'delete', `delete${K}`, ref(`${META}.Status`)) } : {}),
    parameters: [nameParam, ...nsParam],
  });
  paths[`${scope}/{name}`] = itemOps('', item, '');
  if (v.status) paths[`${scope}/{name}/status`] = itemOps('/status', item, 'Status');
  if (v.scale) paths[`${scope}/{name}/scale`] = itemOps('/scale', ref('io.plat.api.autoscaling.v1.Scale'), 'Scale');
  return paths;
}

/** Paths and definitions of every served version of the custom types. */
export function customOpenAPI(types: readonly CustomType[]): {
  paths: Record<string, Json>;
  definitions: Record<string, Json>;
} {
  const paths: Record<string, Json> = {};
  const definitions: Record<string, Json> = {};
  for (const t of types)
    for (const v of t.versions) {
      if (!v.served) continue;
      const name = definitionName(t, v.name);
      Object.assign(definitions, versionDefinitions(t, v, name));
      Object.assign(paths, versionPaths(t, v, name));
    }
  return { paths, definitions };
}
