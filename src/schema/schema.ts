/**
 * The structural schema of every built-in kind, compiled once from the reference OpenAPI
 * document: which fields exist, their types, and the list/map merge semantics
 * (x-plat-patch-strategy, x-plat-patch-merge-key, x-plat-list-type, x-plat-list-map-keys,
 * x-plat-map-type). Strategic merge patch, apply and unknown-field detection read it.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export type NodeKind = 'struct' | 'map' | 'list' | 'scalar' | 'any';

export interface SchemaNode {
  kind: NodeKind;
  /** struct fields */
  props?: Record<string, SchemaNode>;
  /** map values and list items */
  elem?: SchemaNode;
  scalarType?: string;
  /** OpenAPI format of a scalar ('byte': base64-encoded bytes; 'int32'/'int64': the integer's range) */
  format?: string;
  listType?: 'atomic' | 'set' | 'map';
  mapKeys?: string[];
  /** list-map key fields with a default: an item without the field is keyed by the default */
  keyDefaults?: Record<string, unknown>;
  /** strategic merge patch: merge key and strategy of a list field */
  mergeKey?: string;
  patchStrategy?: string;
  /** struct/map granularity for apply */
  mapType?: 'atomic' | 'granular';
  required?: string[];
  preserveUnknown?: boolean;
  /** the reference definition a struct was compiled from (`io.plat.api.core.v1.Container`) */
  name?: string;
  /** a resource.Quantity scalar: canonicalized on decode (schema/quantities.ts) */
  quantity?: boolean;
}

/** The reference definition of resource.Quantity, whatever the group domain. */
const QUANTITY_DEFINITION = /\.apimachinery\.pkg\.api\.resource\.Quantity$/;

/**
 * One schema of the reference OpenAPI v2 document, as far as compile reads it. The document is
 * this server's own reference data (reference/openapi-v2.json), so its fields have these types.
 */
interface RawSchema {
  $ref?: string;
  type?: string;
  format?: string;
  items?: RawSchema;
  properties?: Record<string, RawSchema>;
  additionalProperties?: RawSchema;
  required?: string[];
  default?: unknown;
  'x-plat-group-version-kind'?: { group: string; version: string; kind: string }[];
  'x-plat-list-type'?: 'atomic' | 'set' | 'map';
  'x-plat-list-map-keys'?: string[];
  'x-plat-patch-strategy'?: string;
  'x-plat-patch-merge-key'?: string;
  'x-plat-map-type'?: 'atomic' | 'granular';
  'x-plat-int-or-string'?: boolean;
}

/**
 * Defaults of list-map key fields that upstream declares (`+default`) and structured-merge-diff
 * keys items by when the field is absent, missing from the reference document: an applied
 * port without `protocol` is the stored (defaulted) `TCP` port, not a second one.
 */
const KEY_DEFAULTS: Record<string, unknown> = {
  'io.plat.api.core.v1.ContainerPort.protocol': 'TCP',
  'io.plat.api.core.v1.ServicePort.protocol': 'TCP',
};

const REFERENCE = fileURLToPath(new URL('../../../reference/openapi-v2.json', import.meta.url));

export class SchemaIndex {
  private readonly defs: Record<string, RawSchema>;
  private readonly compiled = new Map<string, SchemaNode>();
  private readonly byGVK = new Map<string, string>();

  constructor(path = REFERENCE) {
    this.defs = JSON.parse(readFileSync(path, 'utf8')).definitions;
    for (const [name, d] of Object.entries(this.defs)) {
      for (const g of d['x-plat-group-version-kind'] ?? []) this.byGVK.set(`${g.group}/${g.version}/${g.kind}`, name);
    }
  }

  /** The schema of a kind, or undefined for kinds without one. */
  forKind(group: string, version: string, kind: string): SchemaNode | undefined {
    const name = this.byGVK.get(`${group}/${version}/${kind}`);
    return name ? this.definition(name) : undefined;
  }

  definition(name: string): SchemaNode {
    let n = this.compiled.get(name);
    if (n) return n;
    // placeholder first so recursive definitions (JSONSchemaProps) terminate
    n = { kind: 'any' };
    this.compiled.set(name, n);
    Object.assign(n, this.compile(this.defs[name] ?? {}));
    if (n.kind === 'struct') n.name = name;
    else if (n.kind === 'scalar' && QUANTITY_DEFINITION.test(name)) n.quantity = true;
    // CRD schemas as upstream clients write them: x-kubernetes-* is accepted beside x-plat-*
    if (name.endsWith('.apiextensions.v1.JSONSchemaProps') && n.props) {
      for (const [k, v] of Object.entries(n.props))
        if (k.startsWith('x-plat-')) n.props['x-kubernetes-' + k.slice(7)] = v;
    }
    return n;
  }

  private compile(s: RawSchema): SchemaNode {
    if (s.$ref) return this.definition(String(s.$ref).replace('#/definitions/', ''));
    let node: SchemaNode;
    if (s.type === 'array') {
      node = { kind: 'list', elem: s.items ? this.compile(s.items) : { kind: 'any' } };
      node.listType =
        s['x-plat-list-type'] ??
        (s['x-plat-patch-strategy']?.includes('merge') && s['x-plat-patch-merge-key'] ? 'map' : 'atomic');
      if (s['x-plat-list-map-keys']) node.mapKeys = s['x-plat-list-map-keys'];
      else if (node.listType === 'map' && s['x-plat-patch-merge-key']) node.mapKeys = [s['x-plat-patch-merge-key']];
      if (node.mapKeys) this.keyDefaults(node, s.items);
    } else if (s.properties) {
      const props: Record<string, SchemaNode> = {};
      node = { kind: 'struct', props };
      for (const [k, v] of Object.entries(s.properties as Record<string, RawSchema>)) props[k] = this.compileProp(v);
      if (s.required) node.required = s.required;
    } else if (s.type === 'object' && s.additionalProperties) {
      node = { kind: 'map', elem: this.compile(s.additionalProperties) };
    } else if (s.type === 'object') {
      node = { kind: 'any', preserveUnknown: true };
    } else if (s.type) {
      node = {
        kind: 'scalar',
        scalarType: s.format === 'int-or-string' || s['x-plat-int-or-string'] ? 'int-or-string' : s.type,
      };
      if (s.format === 'byte' || s.format === 'date-time') node.format = s.format;
      // the Go integer type a typed decode stores the value in (range checked on every decode)
      if (s.type === 'integer' && (s.format === 'int32' || s.format === 'int64')) node.format = s.format;
    } else {
      node = { kind: 'any', preserveUnknown: true };
    }
    if (s['x-plat-map-type']) node.mapType = s['x-plat-map-type'];
    return node;
  }

  /** Records the defaults of a list-map's key fields (from the item schema, else KEY_DEFAULTS). */
  private keyDefaults(node: SchemaNode, items: RawSchema | undefined): void {
    const name = typeof items?.$ref === 'string' ? items.$ref.replace('#/definitions/', '') : undefined;
    const props = (name ? this.defs[name]?.properties : items?.properties) ?? {};
    for (const k of node.mapKeys!) {
      const d = props[k]?.default ?? (name ? KEY_DEFAULTS[`${name}.${k}`] : undefined);
      if (d !== undefined) (node.keyDefaults ??= {})[k] = d;
    }
  }

  /** A property may add merge semantics to a referenced type: copy, never mutate the shared node. */
  private compileProp(v: RawSchema): SchemaNode {
    const base = this.compile(v);
    const strategy = v['x-plat-patch-strategy'];
    const key = v['x-plat-patch-merge-key'];
    if (!strategy && !key) return base;
    const node: SchemaNode = v.$ref ? { ...base } : base;
    if (strategy) node.patchStrategy = strategy;
    if (key) node.mergeKey = key;
    return node;
  }
}

let shared: SchemaIndex | undefined;
/** The process-wide schema index, built on first use. */
export function schemaIndex(): SchemaIndex {
  return (shared ??= new SchemaIndex());
}
