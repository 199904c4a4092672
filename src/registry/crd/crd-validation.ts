/**
 * Validation of a CustomResourceDefinition (apiextensions v1, upstream
 * ValidateCustomResourceDefinition): names, group, scope, versions (unique, exactly one
 * storage version), structural schemas required, subresources, printer columns, conversion.
 */
import type { StatusCause } from '../../api/status.js';
import { checkValue, withPlatExtensions } from './structural.js';
import { ruleCauses, withTypeAndObjectMeta } from './rule-specs.js';
import { re2 } from '../../cel/re2.js';
import { duplicate, forbidden, invalid, notSupported, required, immutable } from '../strategies/field-errors.js';
import { validateWebhookUrl } from '../strategies/webhook-url.js';
import { fieldAt, isRecord } from '../../api/object.js';

const DNS1035 = /^[a-z]([-a-z0-9]*[a-z0-9])?$/;
const SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const KIND = /^[a-zA-Z][a-zA-Z0-9]*$/;
const DNS1035_MSG = `a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')`;
const SUBDOMAIN_MSG = `a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`;
const COLUMN_TYPES = ['integer', 'number', 'string', 'boolean', 'date'];
const SCHEMA_TYPES = ['array', 'boolean', 'integer', 'number', 'object', 'string'];
/** A printer column and a version as written (each field checked before use). */
type RawColumn = { name?: unknown; type?: string; jsonPath?: unknown } | null;
type RawVersion = {
  name?: unknown;
  storage?: unknown;
  served?: unknown;
  schema?: { openAPIV3Schema?: unknown };
} | null;

const isObj = isRecord;
/** includes over a list of strings, for a value not yet known to be a string */
const oneOf = (list: readonly string[], v: unknown): boolean => list.some((x) => x === v);

function names(n: unknown, path: string, out: StatusCause[]): void {
  if (!isObj(n)) {
    out.push(required(path));
    return;
  }
  const label = (f: string, v: unknown) => {
    if (typeof v === 'string' && v !== '' && !DNS1035.test(v)) out.push(invalid(`${path}.${f}`, v, DNS1035_MSG));
  };
  if (!n.plural) out.push(required(`${path}.plural`));
  label('plural', n.plural);
  label('singular', n.singular);
  if (!n.kind) out.push(required(`${path}.kind`));
  else if (!KIND.test(String(n.kind)))
    out.push(
      invalid(`${path}.kind`, n.kind, 'may have mixed case, but should otherwise match: [a-z]([-a-z0-9]*[a-z0-9])?'),
    );
  if (n.listKind && !KIND.test(String(n.listKind)))
    out.push(
      invalid(
        `${path}.listKind`,
        n.listKind,
        'may have mixed case, but should otherwise match: [a-z]([-a-z0-9]*[a-z0-9])?',
      ),
    );
  if (n.kind && n.kind === n.listKind)
    out.push(invalid(`${path}.listKind`, n.listKind, 'kind and listKind may not be the same'));
  (Array.isArray(n.shortNames) ? n.shortNames : []).forEach((s: unknown, i: number) => {
    if (typeof s !== 'string' || !DNS1035.test(s)) out.push(invalid(`${path}.shortNames[${i}]`, s, DNS1035_MSG));
  });
  (Array.isArray(n.categories) ? n.categories : []).forEach((s: unknown, i: number) => {
    if (typeof s !== 'string' || !DNS1035.test(s)) out.push(invalid(`${path}.categories[${i}]`, s, DNS1035_MSG));
  });
}

/**
 * The causes that make a schema non-structural (upstream ValidateStructural), as opposed to
 * the other schema checks: refused on every v1 write, except on an update of a CRD that was
 * already non-structural (persisted before v1 required it; upstream requireStructuralSchema).
 */
const VIOLATIONS = new WeakSet<StatusCause>();
function violation(c: StatusCause): StatusCause {
  VIOLATIONS.add(c);
  return c;
}

/** Structural schema rules: every specified field has a type; the root is an object. */
/** data: the path of the values this schema describes (`spec.replicas`), for messages about defaults */
function structural(s: unknown, path: string, out: StatusCause[], root: boolean, data = ''): void {
  if (!isObj(s)) {
    out.push(violation(invalid(path, s ?? null, 'must be a schema object')));
    return;
  }
  typeRules(s, path, out, root);
  valueRules(s, path, out, root, data);
  children(s, path, out, root, data);
}

/** The type of a schema level: set (unless int-or-string or preserving), known, consistent with items. */
function typeRules(s: Record<string, unknown>, path: string, out: StatusCause[], root: boolean): void {
  const preserve = s['x-plat-preserve-unknown-fields'] === true;
  const intOrString = s['x-plat-int-or-string'] === true;
  if (root) {
    if (s.type !== undefined && s.type !== 'object')
      out.push(violation(invalid(`${path}.type`, s.type, 'must be object at the root')));
    if (s.type === undefined) out.push(violation(required(`${path}.type`, 'must not be empty at the root')));
  } else if (s.type === undefined && !intOrString && !preserve) {
    out.push(violation(required(`${path}.type`, 'must not be empty for specified object fields')));
  }
  if (s.type !== undefined && !oneOf(SCHEMA_TYPES, s.type))
    out.push(notSupported(`${path}.type`, s.type, SCHEMA_TYPES));
  if (intOrString && s.type !== undefined)
    out.push(violation(forbidden(`${path}.type`, 'must be empty if x-plat-int-or-string is true')));
  if (s['x-plat-embedded-resource'] === true && s.type !== 'object')
    out.push(violation(invalid(`${path}.type`, s.type ?? '', 'must be object if x-plat-embedded-resource is true')));
  if (s.type === 'array' && s.items === undefined) out.push(violation(required(`${path}.items`, 'must be specified')));
  if (Array.isArray(s.items))
    out.push(violation(forbidden(`${path}.items`, 'items must be a schema object and not an array')));
  if (s.uniqueItems === true)
    out.push(
      forbidden(
        `${path}.uniqueItems`,
        'uniqueItems cannot be set to true since the runtime complexity becomes quadratic',
      ),
    );
  // upstream: beside properties only `additionalProperties: true` (no schema) is allowed
  if (
    isObj(s.properties) &&
    Object.keys(s.properties).length > 0 &&
    s.additionalProperties !== undefined &&
    s.additionalProperties !== true
  ) {
    out.push(
      violation(forbidden(`${path}.additionalProperties`, 'additionalProperties and properties are mutual exclusive')),
    );
  }
}

/** The default (valid against its schema: upstream validates defaults at CRD write), pattern and list type. */
function valueRules(s: Record<string, unknown>, path: string, out: StatusCause[], root: boolean, data: string): void {
  if (s.default !== undefined && !root) {
    for (const c of checkValue(s.default, s, data)) out.push({ ...c, field: `${path}.default` });
  }
  if (typeof s.pattern === 'string') {
    try {
      re2(s.pattern);
    } catch (e) {
      out.push(
        invalid(`${path}.pattern`, s.pattern, `must be a valid regular expression, but isn't: ${(e as Error).message}`),
      );
    }
  }
  const listType = s['x-plat-list-type'];
  if (listType !== undefined && !oneOf(['atomic', 'set', 'map'], listType))
    out.push(notSupported(`${path}.x-plat-list-type`, listType, ['atomic', 'set', 'map']));
  const mapKeys = s['x-plat-list-map-keys'];
  if (listType === 'map' && !(Array.isArray(mapKeys) && mapKeys.length)) {
    out.push(required(`${path}.x-plat-list-map-keys`, 'must not be empty if x-plat-list-type is map'));
  }
}

/** The schemas below a level: properties (at the root, metadata may only name name and generateName), items, additionalProperties. */
function children(s: Record<string, unknown>, path: string, out: StatusCause[], root: boolean, data: string): void {
  if (isObj(s.properties))
    for (const [k, v] of Object.entries(s.properties)) {
      if (root && k === 'metadata' && isObj(v) && isObj(v.properties)) {
        for (const mk of Object.keys(v.properties)) {
          if (mk !== 'name' && mk !== 'generateName')
            out.push(violation(forbidden(`${path}.properties[metadata].properties[${mk}]`, 'must not be specified')));
        }
        continue;
      }
      structural(v, `${path}.properties[${k}]`, out, false, data ? `${data}.${k}` : k);
    }
  if (s.items !== undefined && !Array.isArray(s.items)) structural(s.items, `${path}.items`, out, false, `${data}[0]`);
  if (isObj(s.additionalProperties))
    structural(s.additionalProperties, `${path}.additionalProperties`, out, false, `${data}[key]`);
}

/**
 * schemaPath: where the version's schema errors point; upstream reports them under
 * spec.validation.openAPIV3Schema when every version has the same schema (it hoists it).
 */
function version(v: unknown, path: string, out: StatusCause[], schemaPath: string): void {
  if (!isObj(v)) {
    out.push(required(path));
    return;
  }
  if (!v.name) out.push(required(`${path}.name`));
  else if (!DNS1035.test(String(v.name))) out.push(invalid(`${path}.name`, v.name, DNS1035_MSG));
  const written = fieldAt(v.schema, 'openAPIV3Schema');
  const schema = withPlatExtensions(written);
  if (!isObj(schema)) out.push(required(`${path}.schema.openAPIV3Schema`, 'schemas are required'));
  else {
    const before = out.length;
    structural(schema, schemaPath, out, true);
    // rules are compiled only over a structural schema (their types come from it)
    if (out.length === before) {
      const ext = JSON.stringify(written).includes('"x-kubernetes-') ? 'x-kubernetes' : 'x-plat';
      out.push(...ruleCauses(withTypeAndObjectMeta(schema), schemaPath, ext));
    }
  }
  if (isObj(schema)) selectableFields(v.selectableFields, schema, `${path}.selectableFields`, out);
  const scale = fieldAt(v.subresources, 'scale');
  if (isObj(scale)) {
    const sp = `${path}.subresources.scale`;
    if (!scale.specReplicasPath) out.push(required(`${sp}.specReplicasPath`));
    else if (!String(scale.specReplicasPath).startsWith('.spec.'))
      out.push(invalid(`${sp}.specReplicasPath`, scale.specReplicasPath, 'should be a json path under .spec'));
    if (!scale.statusReplicasPath) out.push(required(`${sp}.statusReplicasPath`));
    else if (!String(scale.statusReplicasPath).startsWith('.status.'))
      out.push(invalid(`${sp}.statusReplicasPath`, scale.statusReplicasPath, 'should be a json path under .status'));
    if (scale.labelSelectorPath && !/^\.(spec|status)\./.test(String(scale.labelSelectorPath))) {
      out.push(
        invalid(
          `${sp}.labelSelectorPath`,
          scale.labelSelectorPath,
          'should be a json path under either .spec or .status',
        ),
      );
    }
  }
  (Array.isArray(v.additionalPrinterColumns) ? v.additionalPrinterColumns : []).forEach((c: RawColumn, i: number) => {
    const cp = `${path}.additionalPrinterColumns[${i}]`;
    if (!c?.name) out.push(required(`${cp}.name`));
    if (!c?.type) out.push(required(`${cp}.type`));
    else if (!oneOf(COLUMN_TYPES, c.type)) out.push(notSupported(`${cp}.type`, c.type, COLUMN_TYPES));
    if (!c?.jsonPath) out.push(required(`${cp}.jsonPath`));
  });
}

/** The schema a selectable field's path (`.spec.color`) points to, or why it points nowhere. */
function selectedSchema(jsonPath: string, schema: Record<string, unknown>): Record<string, unknown> | string {
  if (jsonPath.includes('[')) return 'array notation is not allowed';
  if (!jsonPath.startsWith('.')) return `expected [ or . but got: ${jsonPath.split('.')[0]}`;
  let s = schema;
  for (const k of jsonPath.slice(1).split('.')) {
    const next = isObj(s.properties) ? s.properties[k] : undefined;
    if (!isObj(next)) return 'does not refer to a valid field';
    s = next;
  }
  return s;
}

/** spec.versions[*].selectableFields (upstream v1.32): at most 8, unique, each a scalar field of the schema. */
function selectableFields(list: unknown, schema: Record<string, unknown>, path: string, out: StatusCause[]): void {
  if (!Array.isArray(list)) return;
  if (list.length > 8)
    out.push({
      reason: 'FieldValueTooMany',
      message: `Too many: ${list.length}: must have at most 8 items`,
      field: path,
    });
  const seen = new Set<string>();
  list.forEach((f: { jsonPath?: unknown } | null, i: number) => {
    const at = `${path}[${i}].jsonPath`;
    const jp = typeof f?.jsonPath === 'string' ? f.jsonPath : '';
    if (!jp) {
      out.push(required(at));
      return;
    }
    const s = selectedSchema(jp, schema);
    if (typeof s === 'string') out.push(invalid(at, jp, `is an invalid path: ${s}`));
    else if (!oneOf(['string', 'integer', 'boolean'], s.type)) {
      out.push(
        invalid(
          at,
          jp,
          'must point to a field of type string, boolean or integer. Enum string fields and strings with formats are allowed.',
        ),
      );
    }
    if (seen.has(jp)) out.push(duplicate(at, jp));
    seen.add(jp);
  });
}

function conversion(c: unknown, out: StatusCause[]): void {
  if (!isObj(c)) return;
  const strategy = c.strategy;
  if (strategy !== 'None' && strategy !== 'Webhook')
    out.push(notSupported('spec.conversion.strategy', strategy ?? '', ['None', 'Webhook']));
  if (strategy === 'Webhook' && !isObj(fieldAt(c.webhook, 'clientConfig')))
    out.push(required('spec.conversion.webhook', 'required when strategy is set to Webhook'));
  if (strategy === 'None' && c.webhook !== undefined)
    out.push(forbidden('spec.conversion.webhook', 'should not be set when strategy is not set to Webhook'));
  const url = fieldAt(c.webhook, 'clientConfig', 'url');
  if (strategy === 'Webhook' && typeof url === 'string')
    out.push(...validateWebhookUrl(url, 'spec.conversion.webhook.clientConfig.url'));
}

/**
 * The NonStructuralSchema condition's findings (upstream nonstructuralschema controller): the
 * structural violations of each version's schema and `spec.preserveUnknownFields: true`, as
 * `<field>: <message>` lines; none for a structural CRD.
 */
export function structuralViolations(crd: unknown): string[] {
  const out: string[] = [];
  const spec = isObj(crd) && isObj(crd.spec) ? crd.spec : {};
  if (spec.preserveUnknownFields === true) out.push('spec.preserveUnknownFields: Invalid value: true: must be false');
  const versions: unknown[] = Array.isArray(spec.versions) ? spec.versions : [];
  versions.forEach((v, i) => {
    const schema = withPlatExtensions(isObj(v) && isObj(v.schema) ? v.schema.openAPIV3Schema : undefined);
    if (!isObj(schema)) return;
    const causes: StatusCause[] = [];
    structural(schema, `spec.versions[${i}].schema.openAPIV3Schema`, causes, true);
    for (const c of causes) if (VIOLATIONS.has(c)) out.push(`${c.field}: ${c.message}`);
  });
  return out;
}

/** Whether a write must leave the CRD structural: always, unless the stored one (old) is not. */
export function requiresStructural(old: unknown): boolean {
  return !old || structuralViolations(old).length === 0;
}

/** requireStructural false: the structural violations are not refused (an update of a non-structural CRD). */
export function validateCRD(crd: unknown, requireStructural = true): StatusCause[] {
  const all = validateAll(crd);
  return requireStructural ? all : all.filter((c) => !VIOLATIONS.has(c));
}

function validateAll(crd: unknown): StatusCause[] {
  const out: StatusCause[] = [];
  const spec = fieldAt(crd, 'spec');
  if (!isObj(spec)) return [required('spec')];
  const group = spec.group;
  if (!group) out.push(required('spec.group'));
  else if (!SUBDOMAIN.test(String(group))) out.push(invalid('spec.group', group, SUBDOMAIN_MSG));
  else if (!String(group).includes('.'))
    out.push(invalid('spec.group', group, 'should be a domain with at least one dot'));
  const plural = fieldAt(spec.names, 'plural');
  const name = fieldAt(crd, 'metadata', 'name');
  if (plural && group && name !== `${plural}.${group}`) {
    out.push(invalid('metadata.name', name ?? '', 'must be spec.names.plural+"."+spec.group'));
  }
  if (!spec.scope) out.push(required('spec.scope'));
  else if (spec.scope !== 'Cluster' && spec.scope !== 'Namespaced')
    out.push(notSupported('spec.scope', spec.scope, ['Cluster', 'Namespaced']));
  names(spec.names, 'spec.names', out);
  const versions = Array.isArray(spec.versions) ? spec.versions : [];
  if (!versions.length) out.push(required('spec.versions', 'must have at least one version'));
  const seen = versionCauses(versions, out);
  if (versions.length && versions.filter((v: RawVersion) => v?.storage === true).length !== 1) {
    out.push(invalid('spec.versions', versions, 'must have exactly one version marked as storage version'));
  }
  if (versions.length && !versions.some((v: RawVersion) => v?.served === true))
    out.push(invalid('spec.versions', versions, 'must have at least one served version'));
  if (spec.preserveUnknownFields === true) {
    out.push(
      violation(
        invalid(
          'spec.preserveUnknownFields',
          true,
          'cannot set to true, set x-plat-preserve-unknown-fields to true in spec.versions[*].schema instead',
        ),
      ),
    );
  }
  conversion(spec.conversion, out);
  const storedVersions = fieldAt(crd, 'status', 'storedVersions');
  const stored: unknown[] = Array.isArray(storedVersions) ? storedVersions : [];
  stored.forEach((s, i) => {
    if (!seen.has(String(s))) out.push(invalid(`status.storedVersions[${i}]`, s, 'must appear in spec.versions'));
  });
  return out;
}

/**
 * Each version's causes (a schema shared by every version is reported once, under
 * spec.validation like upstream's hoisting) and duplicate names; the set of version names.
 */
function versionCauses(versions: RawVersion[], out: StatusCause[]): Set<string> {
  const seen = new Set<string>();
  const schemas = versions.map((v: RawVersion) => JSON.stringify(v?.schema?.openAPIV3Schema ?? null));
  const hoisted = versions.length > 0 && schemas.every((x: string) => x === schemas[0]) && schemas[0] !== 'null';
  const reported = new Set<string>();
  versions.forEach((v: RawVersion, i: number) => {
    const schemaPath = hoisted ? 'spec.validation.openAPIV3Schema' : `spec.versions[${i}].schema.openAPIV3Schema`;
    const mine: StatusCause[] = [];
    version(v, `spec.versions[${i}]`, mine, schemaPath);
    // a hoisted schema is validated once: its errors are not repeated per version
    for (const c of mine)
      if (!hoisted || !reported.has(`${c.field}\0${c.message}`)) {
        reported.add(`${c.field}\0${c.message}`);
        out.push(c);
      }
    if (typeof v?.name === 'string') {
      if (seen.has(v.name)) out.push(duplicate(`spec.versions[${i}].name`, v.name));
      seen.add(v.name);
    }
  });
  return seen;
}

export function validateCRDUpdate(crd: unknown, old: unknown): StatusCause[] {
  return immutable('spec.scope', fieldAt(crd, 'spec', 'scope'), fieldAt(old, 'spec', 'scope'));
}
