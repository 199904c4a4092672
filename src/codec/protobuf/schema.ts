/**
 * Protobuf schema knowledge derived from the reference documents: the protobufjs root built
 * from proto-descriptor.json, the JSON name of every proto field (and which fields are Go
 * embedded structs that JSON inlines), and the (group, version) → proto package index.
 * Everything is derived from the descriptor and the OpenAPI document; the only hand-written
 * facts are the three `options` fields the descriptor lacks (see MISSING_FIELDS).
 */
import protobuf from 'protobufjs';

/** How a proto field appears in JSON: under `json`, or merged into the parent when `inline`. */
export interface FieldLayout {
  json: string;
  inline: boolean;
}

interface OpenApiDoc {
  definitions: Record<string, OpenApiDef>;
}
interface OpenApiDef {
  properties?: Record<string, unknown>;
  'x-plat-group-version-kind'?: { group: string; version: string; kind: string }[];
}
type JsonNamespace = { nested?: Record<string, JsonNamespace>; fields?: Record<string, Record<string, unknown>> };

/**
 * The descriptor drops every field named `options` (protobufjs JSON reserves that key), while the
 * OpenAPI document lists them. Numbers and types are upstream's (Go struct tags in core/v1 types.go).
 */
const MISSING_FIELDS: Record<string, Record<string, Record<string, unknown>>> = {
  'api.core.v1.FlexVolumeSource': { options: { keyType: 'string', type: 'string', id: 5 } },
  'api.core.v1.FlexPersistentVolumeSource': { options: { keyType: 'string', type: 'string', id: 5 } },
  'api.core.v1.PodDNSConfig': { options: { rule: 'repeated', type: 'PodDNSConfigOption', id: 3 } },
};

const norm = (s: string): string => s.replace(/[^A-Za-z0-9]/g, '').toLowerCase();
/** `xKubernetesListType` ↔ `x-plat-list-type`: extension names compare without their vendor word. */
const extProto = (s: string): string | undefined => /^x[A-Z][a-z]+([A-Z].*)$/.exec(s)?.[1];
const extJson = (s: string): string | undefined => /^x-[a-z]+-(.+)$/.exec(s)?.[1];

export class ProtoSchema {
  readonly root: protobuf.Root;
  /** Root package of the descriptor, e.g. `plat.io`, which is also the reference API domain. */
  readonly base: string;
  private readonly defs: Record<string, OpenApiDef>;
  private readonly layouts = new Map<protobuf.Type, FieldLayout[]>();
  private readonly analogs = new Map<string, protobuf.Type[]>();
  private readonly gvPackages = new Map<string, string>();
  private readonly groupPackages = new Map<string, string>();
  private readonly domains: string[];

  constructor(descriptor: JsonNamespace, openapi: OpenApiDoc, apiDomain?: string) {
    this.base = ProtoSchema.findBase(descriptor);
    this.defs = openapi.definitions;
    this.patchDescriptor(descriptor);
    this.root = protobuf.Root.fromJSON(descriptor as protobuf.INamespace);
    this.root.resolveAll();
    this.domains = [...new Set([this.base, apiDomain].filter((d): d is string => !!d))];
    this.indexTypes();
  }

  /** The package path below the descriptor root: `plat.io.api.core.v1.Pod` → `api.core.v1.Pod`. */
  relName(type: protobuf.ReflectionObject): string {
    return type.fullName.slice(this.base.length + 2);
  }

  /** Proto package holding a served (group, version), or undefined for unknown groups. */
  packageFor(group: string, version: string): string | undefined {
    const key = this.groupKey(group);
    const known = this.gvPackages.get(`${key}/${version}`);
    if (known) return known;
    const prefix = this.groupPackages.get(key) ?? `${this.base}.api.${key.split('.')[0] || 'core'}`;
    const candidate = `${prefix}.${version}`;
    return this.root.lookup(candidate) ? candidate : undefined;
  }

  /** Group name without the API domain suffix (`rbac.authorization.plat.io` → `rbac.authorization`). */
  groupKey(group: string): string {
    for (const d of this.domains) {
      if (group === d) return '';
      if (group.endsWith('.' + d)) return group.slice(0, -d.length - 1);
    }
    return group;
  }

  /** JSON names of a message's fields in declaration order. */
  layout(type: protobuf.Type): FieldLayout[] {
    let out = this.layouts.get(type);
    if (!out) {
      out = [];
      this.layouts.set(type, out);
      out.push(...this.computeLayout(type));
    }
    return out;
  }

  private static findBase(descriptor: JsonNamespace): string {
    const path: string[] = [];
    let ns = descriptor;
    while (ns.nested && Object.keys(ns.nested).length === 1 && !ns.fields) {
      const [name, child] = Object.entries(ns.nested)[0]!;
      if (name === 'api' || name === 'apimachinery') break;
      path.push(name);
      ns = child;
    }
    return path.join('.');
  }

  private patchDescriptor(descriptor: JsonNamespace): void {
    for (const [rel, fields] of Object.entries(MISSING_FIELDS)) {
      let ns: JsonNamespace | undefined = descriptor;
      for (const part of `${this.base}.${rel}`.split('.')) ns = ns?.nested?.[part];
      if (!ns?.fields) continue;
      for (const [name, field] of Object.entries(fields)) {
        const def = this.defs[this.defName(`${this.base}.${rel}`)];
        if (!ns.fields[name] && def?.properties?.[name]) ns.fields[name] = field;
      }
    }
  }

  /** `plat.io.kube_aggregator.pkg.apis.apiregistration.v1.APIService` → `io.plat.kube-aggregator....`. */
  private defName(fullName: string): string {
    const baseParts = this.base.split('.');
    const rest = fullName
      .replace(/^\./, '')
      .slice(this.base.length + 1)
      .replace(/_/g, '-');
    return `${[...baseParts].reverse().join('.')}.${rest}`;
  }

  private packageOfDef(defName: string): string {
    const baseParts = this.base.split('.');
    const parts = defName.split('.').slice(0, -1);
    return [...baseParts, ...parts.slice(baseParts.length)].join('.').replace(/-/g, '_');
  }

  private indexTypes(): void {
    const visit = (ns: protobuf.NamespaceBase): void => {
      for (const obj of ns.nestedArray) {
        if (obj instanceof protobuf.Type) {
          const list = this.analogs.get(obj.name) ?? [];
          list.push(obj);
          this.analogs.set(obj.name, list);
        }
        if (obj instanceof protobuf.Namespace || obj instanceof protobuf.Type) visit(obj);
      }
    };
    visit(this.root);
    const metaPrefix = `${this.base}.apimachinery.`;
    for (const [name, def] of Object.entries(this.defs)) {
      const pkg = this.packageOfDef(name);
      if (pkg.startsWith(metaPrefix) || !this.root.lookup(pkg)) continue;
      for (const gvk of def['x-plat-group-version-kind'] ?? []) {
        const key = this.groupKey(gvk.group);
        if (pkg.endsWith('.' + gvk.version)) {
          this.gvPackages.set(`${key}/${gvk.version}`, pkg);
          this.groupPackages.set(key, pkg.slice(0, -gvk.version.length - 1));
        }
      }
    }
  }

  private defFor(type: protobuf.Type): OpenApiDef | undefined {
    return this.defs[this.defName(type.fullName)];
  }

  private computeLayout(type: protobuf.Type): FieldLayout[] {
    const def = this.defFor(type);
    if (def?.properties) return this.layoutFromDef(type, def.properties);
    const analog = (this.analogs.get(type.name) ?? []).find((t) => t !== type && this.defFor(t)?.properties);
    const analogLayout = analog ? this.layout(analog) : undefined;
    return type.fieldsArray.map((f) => {
      const i = analog ? analog.fieldsArray.findIndex((a) => a.name === f.name) : -1;
      return i >= 0 && analogLayout ? { ...analogLayout[i]! } : { json: f.name, inline: false };
    });
  }

  private layoutFromDef(type: protobuf.Type, props: Record<string, unknown>): FieldLayout[] {
    const fields = type.fieldsArray;
    const out: (FieldLayout | undefined)[] = fields.map((f) =>
      f.name in props ? { json: f.name, inline: false } : undefined,
    );
    const used = new Set(out.filter((l) => l).map((l) => l!.json));
    const free = () => Object.keys(props).filter((p) => !used.has(p));
    const match = (key: (s: string) => string | undefined, keyJson: (s: string) => string | undefined) => {
      fields.forEach((f, i) => {
        if (out[i]) return;
        const k = key(f.name);
        const p =
          k === undefined ? undefined : free().find((q) => keyJson(q) !== undefined && norm(keyJson(q)!) === norm(k));
        if (p !== undefined) {
          out[i] = { json: p, inline: false };
          used.add(p);
        }
      });
    };
    match(
      (s) => s,
      (s) => s,
    );
    match(extProto, extJson);
    fields.forEach((f, i) => {
      if (out[i]) return;
      const sub = f.resolvedType;
      const keys = sub instanceof protobuf.Type && !f.repeated && !f.map ? this.jsonKeys(sub) : [];
      out[i] = { json: f.name, inline: keys.length > 0 && keys.every((k) => k in props) };
    });
    return out as FieldLayout[];
  }

  /** JSON keys a message contributes, with inlined members flattened. */
  private jsonKeys(type: protobuf.Type): string[] {
    const layout = this.layout(type);
    return type.fieldsArray.flatMap((f, i) => {
      const l = layout[i]!;
      return l.inline && f.resolvedType instanceof protobuf.Type ? this.jsonKeys(f.resolvedType) : [l.json];
    });
  }
}
