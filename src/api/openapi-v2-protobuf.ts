/**
 * `/openapi/v2` as Protobuf: the JSON document mapped the way gnostic's compiler reads it
 * (openapi_v2.NewDocument, which kube-openapi's ToProtoBinary runs), then encoded as
 * `openapi.v2.Document` (gnostic-v2.ts). Keys keep their JSON order; `x-*` keys become vendor
 * extensions whose values are YAML text (JSON is YAML); proto3 zero values are left out.
 */
import { gnosticDocumentType } from './gnostic-v2.js';

export const OPENAPI_V2_PROTOBUF = 'application/com.github.proto-openapi.spec.v2@v1.0+protobuf';

type Json = Record<string, unknown>;
type Msg = Record<string, unknown>;

const isObj = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const anyOf = (v: unknown): Msg => ({ yaml: JSON.stringify(v) + '\n' });

/** Copies the keys present (and not zero) under their proto names; `x-*` keys become vendor extensions. */
function fields(src: Json, names: Record<string, string>, out: Msg = {}): Msg {
  const extensions: Msg[] = [];
  for (const [k, v] of Object.entries(src)) {
    if (k.startsWith('x-')) extensions.push({ name: k, value: anyOf(v) });
    else if (names[k] !== undefined && v !== undefined && v !== null && v !== '' && v !== false && v !== 0)
      out[names[k]] ??= v;
  }
  if (extensions.length) out['vendor_extension'] = extensions;
  return out;
}

const SCHEMA_SCALARS: Record<string, string> = {
  $ref: '_ref',
  format: 'format',
  title: 'title',
  description: 'description',
  multipleOf: 'multiple_of',
  maximum: 'maximum',
  exclusiveMaximum: 'exclusive_maximum',
  minimum: 'minimum',
  exclusiveMinimum: 'exclusive_minimum',
  maxLength: 'max_length',
  minLength: 'min_length',
  pattern: 'pattern',
  maxItems: 'max_items',
  minItems: 'min_items',
  uniqueItems: 'unique_items',
  maxProperties: 'max_properties',
  minProperties: 'min_properties',
  required: 'required',
  discriminator: 'discriminator',
  readOnly: 'read_only',
};

function schema(s: unknown): Msg {
  if (!isObj(s)) return {};
  const out = fields(s, SCHEMA_SCALARS);
  if (s['default'] !== undefined) out['default'] = anyOf(s['default']);
  if (s['example'] !== undefined) out['example'] = anyOf(s['example']);
  if (Array.isArray(s['enum'])) out['enum'] = s['enum'].map(anyOf);
  const ap = s['additionalProperties'];
  if (typeof ap === 'boolean') out['additional_properties'] = { boolean: ap };
  else if (isObj(ap)) out['additional_properties'] = { schema: schema(ap) };
  const type = s['type'];
  if (type !== undefined) out['type'] = { value: Array.isArray(type) ? type : [type] };
  const items = s['items'];
  if (items !== undefined) out['items'] = { schema: (Array.isArray(items) ? items : [items]).map(schema) };
  if (Array.isArray(s['allOf'])) out['all_of'] = s['allOf'].map(schema);
  if (isObj(s['properties'])) out['properties'] = { additional_properties: named(s['properties'], schema) };
  return out;
}

const named = (o: Json, f: (v: unknown) => Msg): Msg[] => Object.entries(o).map(([name, v]) => ({ name, value: f(v) }));

const PRIMITIVE: Record<string, string> = {
  type: 'type',
  format: 'format',
  collectionFormat: 'collection_format',
  maximum: 'maximum',
  exclusiveMaximum: 'exclusive_maximum',
  minimum: 'minimum',
  exclusiveMinimum: 'exclusive_minimum',
  maxLength: 'max_length',
  minLength: 'min_length',
  pattern: 'pattern',
  maxItems: 'max_items',
  minItems: 'min_items',
  uniqueItems: 'unique_items',
  multipleOf: 'multiple_of',
};
const PARAM_HEAD: Record<string, string> = {
  required: 'required',
  in: 'in',
  description: 'description',
  name: 'name',
  allowEmptyValue: 'allow_empty_value',
};

function primitive(p: Json, head: Record<string, string>): Msg {
  const out = fields(p, { ...head, ...PRIMITIVE });
  if (isObj(p['items'])) out['items'] = primitive(p['items'], {});
  if (p['default'] !== undefined) out['default'] = anyOf(p['default']);
  if (Array.isArray(p['enum'])) out['enum'] = p['enum'].map(anyOf);
  return out;
}

const SUB_SCHEMA: Record<string, string> = {
  query: 'query_parameter_sub_schema',
  path: 'path_parameter_sub_schema',
  header: 'header_parameter_sub_schema',
  formData: 'form_data_parameter_sub_schema',
};

function parameter(p: unknown): Msg {
  if (!isObj(p)) return {};
  if (p['in'] === 'body') {
    const body = fields(p, { description: 'description', name: 'name', in: 'in', required: 'required' });
    if (isObj(p['schema'])) body['schema'] = schema(p['schema']);
    return { body_parameter: body };
  }
  const head =
    p['in'] === 'query' || p['in'] === 'formData'
      ? PARAM_HEAD
      : { required: 'required', in: 'in', description: 'description', name: 'name' };
  return { non_body_parameter: { [SUB_SCHEMA[String(p['in'])] ?? 'query_parameter_sub_schema']: primitive(p, head) } };
}

const parametersItem = (p: unknown): Msg =>
  isObj(p) && typeof p['$ref'] === 'string' ? { json_reference: { _ref: p['$ref'] } } : { parameter: parameter(p) };

function responses(r: unknown): Msg {
  if (!isObj(r)) return {};
  const out: Msg = { response_code: [] };
  const codes: Msg[] = [];
  for (const [code, v] of Object.entries(r)) {
    if (code.startsWith('x-') || !isObj(v)) continue;
    if (typeof v['$ref'] === 'string') {
      codes.push({ name: code, value: { json_reference: { _ref: v['$ref'] } } });
      continue;
    }
    const response = fields(v, { description: 'description' });
    if (isObj(v['schema'])) response['schema'] = { schema: schema(v['schema']) };
    codes.push({ name: code, value: { response } });
  }
  out['response_code'] = codes;
  return out;
}

const OPERATION: Record<string, string> = {
  tags: 'tags',
  summary: 'summary',
  description: 'description',
  operationId: 'operation_id',
  produces: 'produces',
  consumes: 'consumes',
  schemes: 'schemes',
  deprecated: 'deprecated',
};
const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch'];

function operation(op: unknown): Msg {
  if (!isObj(op)) return {};
  const out = fields(op, OPERATION);
  if (Array.isArray(op['parameters'])) out['parameters'] = op['parameters'].map(parametersItem);
  if (op['responses'] !== undefined) out['responses'] = responses(op['responses']);
  if (Array.isArray(op['security'])) out['security'] = op['security'].map(security);
  return out;
}

function pathItem(item: unknown): Msg {
  if (!isObj(item)) return {};
  const out = fields(item, { $ref: '_ref' });
  for (const m of METHODS) if (item[m] !== undefined) out[m] = operation(item[m]);
  if (Array.isArray(item['parameters'])) out['parameters'] = item['parameters'].map(parametersItem);
  return out;
}

const security = (req: unknown): Msg => ({
  additional_properties: isObj(req)
    ? Object.entries(req).map(([name, v]) => ({ name, value: { value: Array.isArray(v) ? v : [] } }))
    : [],
});

function securityDefinition(d: unknown): Msg {
  if (!isObj(d)) return {};
  if (d['type'] === 'basic')
    return { basic_authentication_security: fields(d, { type: 'type', description: 'description' }) };
  return { api_key_security: fields(d, { type: 'type', name: 'name', in: 'in', description: 'description' }) };
}

/** The gnostic message of a whole document. */
export function documentMessage(doc: Json): Msg {
  const out = fields(doc, {
    swagger: 'swagger',
    host: 'host',
    basePath: 'base_path',
    schemes: 'schemes',
    consumes: 'consumes',
    produces: 'produces',
  });
  if (isObj(doc['info']))
    out['info'] = fields(doc['info'], {
      title: 'title',
      version: 'version',
      description: 'description',
      termsOfService: 'terms_of_service',
    });
  if (isObj(doc['paths'])) out['paths'] = { path: named(doc['paths'], pathItem) };
  if (isObj(doc['definitions'])) out['definitions'] = { additional_properties: named(doc['definitions'], schema) };
  if (isObj(doc['parameters'])) out['parameters'] = { additional_properties: named(doc['parameters'], parameter) };
  if (Array.isArray(doc['security'])) out['security'] = doc['security'].map(security);
  if (isObj(doc['securityDefinitions']))
    out['security_definitions'] = { additional_properties: named(doc['securityDefinitions'], securityDefinition) };
  return out;
}

/** The Protobuf bytes of an OpenAPI v2 document. */
export function encodeOpenAPIV2(doc: Json): Uint8Array {
  const type = gnosticDocumentType();
  return type.encode(documentMessage(doc)).finish();
}
