/**
 * The messages of gnostic's `openapi.v2` package (github.com/google/gnostic-models,
 * openapiv2/OpenAPIv2.proto, proto3) that an API server's OpenAPI v2 document uses, as a
 * protobufjs JSON descriptor written from that specification: the wire form of
 * `application/com.github.proto-openapi.spec.v2@v1.0+protobuf` (kube-openapi's ToProtoBinary).
 * Field numbers are the specification's; messages the document never holds are left out.
 */
import protobuf from 'protobufjs';

type FieldSpec = [id: number, type: string, repeated?: 'repeated'];

function message(fields: Record<string, FieldSpec>): {
  fields: Record<string, { id: number; type: string; rule?: string }>;
} {
  return {
    fields: Object.fromEntries(
      Object.entries(fields).map(([name, [id, type, rule]]) => [name, { id, type, ...(rule ? { rule } : {}) }]),
    ),
  };
}

const R = 'repeated' as const;
const ext = (id: number): Record<string, FieldSpec> => ({ vendor_extension: [id, 'NamedAny', R] });

/** Fields shared by query, path, header and form parameters and PrimitivesItems, from `type` on (numbers shift by `at`). */
function primitive(at: number): Record<string, FieldSpec> {
  const names: [string, string, 'repeated'?][] = [
    ['type', 'string'],
    ['format', 'string'],
    ['items', 'PrimitivesItems'],
    ['collection_format', 'string'],
    ['default', 'Any'],
    ['maximum', 'double'],
    ['exclusive_maximum', 'bool'],
    ['minimum', 'double'],
    ['exclusive_minimum', 'bool'],
    ['max_length', 'int64'],
    ['min_length', 'int64'],
    ['pattern', 'string'],
    ['max_items', 'int64'],
    ['min_items', 'int64'],
    ['unique_items', 'bool'],
    ['enum', 'Any', R],
    ['multiple_of', 'double'],
  ];
  return Object.fromEntries(names.map(([n, t, r], i) => [n, [at + i, t, r] as FieldSpec]));
}

const named = (type: string) => message({ name: [1, 'string'], value: [2, type] });

const MESSAGES = {
  Document: message({
    swagger: [1, 'string'],
    info: [2, 'Info'],
    host: [3, 'string'],
    base_path: [4, 'string'],
    schemes: [5, 'string', R],
    consumes: [6, 'string', R],
    produces: [7, 'string', R],
    paths: [8, 'Paths'],
    definitions: [9, 'Definitions'],
    parameters: [10, 'ParameterDefinitions'],
    security: [12, 'SecurityRequirement', R],
    security_definitions: [13, 'SecurityDefinitions'],
    tags: [14, 'Tag', R],
    external_docs: [15, 'ExternalDocs'],
    ...ext(16),
  }),
  Info: message({
    title: [1, 'string'],
    version: [2, 'string'],
    description: [3, 'string'],
    terms_of_service: [4, 'string'],
    contact: [5, 'Contact'],
    license: [6, 'License'],
    ...ext(7),
  }),
  Contact: message({ name: [1, 'string'], url: [2, 'string'], email: [3, 'string'], ...ext(4) }),
  License: message({ name: [1, 'string'], url: [2, 'string'], ...ext(3) }),
  ExternalDocs: message({ description: [1, 'string'], url: [2, 'string'], ...ext(3) }),
  Tag: message({ name: [1, 'string'], description: [2, 'string'], external_docs: [3, 'ExternalDocs'], ...ext(4) }),
  Any: message({ value: [1, 'ProtoAny'], yaml: [2, 'string'] }),
  /** google.protobuf.Any (never set: gnostic keeps extension values as YAML text) */
  ProtoAny: message({ type_url: [1, 'string'], value: [2, 'bytes'] }),
  NamedAny: named('Any'),
  Paths: message({ ...ext(1), path: [2, 'NamedPathItem', R] }),
  NamedPathItem: named('PathItem'),
  PathItem: message({
    _ref: [1, 'string'],
    get: [2, 'Operation'],
    put: [3, 'Operation'],
    post: [4, 'Operation'],
    delete: [5, 'Operation'],
    options: [6, 'Operation'],
    head: [7, 'Operation'],
    patch: [8, 'Operation'],
    parameters: [9, 'ParametersItem', R],
    ...ext(10),
  }),
  Operation: message({
    tags: [1, 'string', R],
    summary: [2, 'string'],
    description: [3, 'string'],
    external_docs: [4, 'ExternalDocs'],
    operation_id: [5, 'string'],
    produces: [6, 'string', R],
    consumes: [7, 'string', R],
    parameters: [8, 'ParametersItem', R],
    responses: [9, 'Responses'],
    schemes: [10, 'string', R],
    deprecated: [11, 'bool'],
    security: [12, 'SecurityRequirement', R],
    ...ext(13),
  }),
  ParametersItem: message({ parameter: [1, 'Parameter'], json_reference: [2, 'JsonReference'] }),
  JsonReference: message({ _ref: [1, 'string'], description: [2, 'string'] }),
  Parameter: message({ body_parameter: [1, 'BodyParameter'], non_body_parameter: [2, 'NonBodyParameter'] }),
  BodyParameter: message({
    description: [1, 'string'],
    name: [2, 'string'],
    in: [3, 'string'],
    required: [4, 'bool'],
    schema: [5, 'Schema'],
    ...ext(6),
  }),
  NonBodyParameter: message({
    header_parameter_sub_schema: [1, 'HeaderParameterSubSchema'],
    form_data_parameter_sub_schema: [2, 'FormDataParameterSubSchema'],
    query_parameter_sub_schema: [3, 'QueryParameterSubSchema'],
    path_parameter_sub_schema: [4, 'PathParameterSubSchema'],
  }),
  HeaderParameterSubSchema: message({
    required: [1, 'bool'],
    in: [2, 'string'],
    description: [3, 'string'],
    name: [4, 'string'],
    ...primitive(5),
    ...ext(22),
  }),
  PathParameterSubSchema: message({
    required: [1, 'bool'],
    in: [2, 'string'],
    description: [3, 'string'],
    name: [4, 'string'],
    ...primitive(5),
    ...ext(22),
  }),
  QueryParameterSubSchema: message({
    required: [1, 'bool'],
    in: [2, 'string'],
    description: [3, 'string'],
    name: [4, 'string'],
    allow_empty_value: [5, 'bool'],
    ...primitive(6),
    ...ext(23),
  }),
  FormDataParameterSubSchema: message({
    required: [1, 'bool'],
    in: [2, 'string'],
    description: [3, 'string'],
    name: [4, 'string'],
    allow_empty_value: [5, 'bool'],
    ...primitive(6),
    ...ext(23),
  }),
  PrimitivesItems: message({ ...primitive(1), ...ext(18) }),
  Responses: message({ response_code: [1, 'NamedResponseValue', R], ...ext(2) }),
  NamedResponseValue: named('ResponseValue'),
  ResponseValue: message({ response: [1, 'Response'], json_reference: [2, 'JsonReference'] }),
  Response: message({ description: [1, 'string'], schema: [2, 'SchemaItem'], ...ext(5) }),
  SchemaItem: message({ schema: [1, 'Schema'] }),
  Schema: message({
    _ref: [1, 'string'],
    format: [2, 'string'],
    title: [3, 'string'],
    description: [4, 'string'],
    default: [5, 'Any'],
    multiple_of: [6, 'double'],
    maximum: [7, 'double'],
    exclusive_maximum: [8, 'bool'],
    minimum: [9, 'double'],
    exclusive_minimum: [10, 'bool'],
    max_length: [11, 'int64'],
    min_length: [12, 'int64'],
    pattern: [13, 'string'],
    max_items: [14, 'int64'],
    min_items: [15, 'int64'],
    unique_items: [16, 'bool'],
    max_properties: [17, 'int64'],
    min_properties: [18, 'int64'],
    required: [19, 'string', R],
    enum: [20, 'Any', R],
    additional_properties: [21, 'AdditionalPropertiesItem'],
    type: [22, 'TypeItem'],
    items: [23, 'ItemsItem'],
    all_of: [24, 'Schema', R],
    properties: [25, 'Properties'],
    discriminator: [26, 'string'],
    read_only: [27, 'bool'],
    external_docs: [29, 'ExternalDocs'],
    example: [30, 'Any'],
    ...ext(31),
  }),
  AdditionalPropertiesItem: message({ schema: [1, 'Schema'], boolean: [2, 'bool'] }),
  TypeItem: message({ value: [1, 'string', R] }),
  ItemsItem: message({ schema: [1, 'Schema', R] }),
  Properties: message({ additional_properties: [1, 'NamedSchema', R] }),
  NamedSchema: named('Schema'),
  Definitions: message({ additional_properties: [1, 'NamedSchema', R] }),
  ParameterDefinitions: message({ additional_properties: [1, 'NamedParameter', R] }),
  NamedParameter: named('Parameter'),
  SecurityRequirement: message({ additional_properties: [1, 'NamedStringArray', R] }),
  NamedStringArray: named('StringArray'),
  StringArray: message({ value: [1, 'string', R] }),
  SecurityDefinitions: message({ additional_properties: [1, 'NamedSecurityDefinitionsItem', R] }),
  NamedSecurityDefinitionsItem: named('SecurityDefinitionsItem'),
  SecurityDefinitionsItem: message({
    basic_authentication_security: [1, 'BasicAuthenticationSecurity'],
    api_key_security: [2, 'ApiKeySecurity'],
  }),
  BasicAuthenticationSecurity: message({ type: [1, 'string'], description: [2, 'string'], ...ext(3) }),
  ApiKeySecurity: message({
    type: [1, 'string'],
    name: [2, 'string'],
    in: [3, 'string'],
    description: [4, 'string'],
    ...ext(5),
  }),
};

let root: protobuf.Root | undefined;

/** The `openapi.v2.Document` type, compiled on first use. */
export function gnosticDocumentType(): protobuf.Type {
  root ??= protobuf.Root.fromJSON({ nested: { openapi: { nested: { v2: { nested: MESSAGES } } } } });
  return root.lookupType('openapi.v2.Document');
}
