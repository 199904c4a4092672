/**
 * A CustomResourceDefinition as the served registry and the shard actors need it: plain data
 * (it crosses the thread boundary in a `defs` message), derived once from the stored CRD.
 */
import type { ResourceDef, SubresourceDef, Verb } from '../types.js';
import type { CustomResourceDefinition } from '../../api/kinds.js';
import type { Stored } from '../../api/object.js';
import { withPlatExtensions, type Raw } from './structural.js';

export interface PrinterColumn {
  name: string;
  type: string;
  format?: string;
  description?: string;
  priority?: number;
  jsonPath: string;
}

export interface ScalePaths {
  specReplicasPath: string;
  statusReplicasPath: string;
  labelSelectorPath?: string;
}

export interface CustomVersion {
  name: string;
  served: boolean;
  storage: boolean;
  /** spec.versions[*].schema.openAPIV3Schema */
  schema: Raw;
  status: boolean;
  scale?: ScalePaths;
  printerColumns: PrinterColumn[];
  deprecated?: boolean;
  deprecationWarning?: string;
  /** selectableFields as field labels (`spec.color`): field selectors accept them besides metadata.name/namespace */
  selectableFields: string[];
}

export interface CustomType {
  /** the CRD's metadata.name (`<plural>.<group>`) */
  crd: string;
  group: string;
  plural: string;
  singular: string;
  kind: string;
  listKind: string;
  namespaced: boolean;
  shortNames: string[];
  categories: string[];
  versions: CustomVersion[];
  /** the version objects are stored in */
  storageVersion: string;
  /** conversion.strategy Webhook: where to send ConversionReviews (the front thread converts) */
  webhook?: { clientConfig: unknown; reviewVersions: string[] };
}

/**
 * A spec.versions item of a stored CRD: validated at write (crd-validation.ts), so the fields
 * read here have these types when present.
 */
interface StoredVersion {
  name: string;
  served?: boolean;
  storage?: boolean;
  schema?: { openAPIV3Schema?: Raw };
  subresources?: { status?: unknown; scale?: ScalePaths };
  additionalPrinterColumns?: unknown;
  deprecated?: boolean;
  deprecationWarning?: string;
  selectableFields?: unknown;
}

const VERBS: Verb[] = ['delete', 'deletecollection', 'get', 'list', 'patch', 'create', 'update', 'watch'];
const SUB_VERBS: Verb[] = ['get', 'patch', 'update'];

/** The spec fields of a stored CRD that customTypeOf reads: validated at write (crd-validation.ts). */
interface StoredCrdSpec {
  group: string;
  scope?: string;
  versions?: unknown;
  conversion?: {
    strategy?: string;
    webhook?: { clientConfig?: unknown; conversionReviewVersions?: string[] };
  };
}

/** The CRD's accepted names and versions as plain data (undefined while its names are not accepted). */
export function customTypeOf(crd: Stored<CustomResourceDefinition>): CustomType | undefined {
  // a stored CRD passed validation: its spec fields have the types validation checked
  const spec = crd?.spec as StoredCrdSpec | undefined;
  const names = crd?.status?.acceptedNames;
  if (!spec || !names?.plural || !names.kind || !Array.isArray(spec.versions)) return undefined;
  const versions: CustomVersion[] = spec.versions.map((v: StoredVersion) => ({
    name: v.name,
    served: !!v.served,
    storage: !!v.storage,
    schema: withPlatExtensions(v.schema?.openAPIV3Schema ?? { type: 'object', 'x-plat-preserve-unknown-fields': true }),
    status: v.subresources?.status !== undefined,
    ...(v.subresources?.scale ? { scale: v.subresources.scale } : {}),
    printerColumns: Array.isArray(v.additionalPrinterColumns) ? v.additionalPrinterColumns : [],
    ...(v.deprecated ? { deprecated: true, deprecationWarning: v.deprecationWarning } : {}),
    selectableFields: (Array.isArray(v.selectableFields) ? v.selectableFields : [])
      .map((f: { jsonPath?: unknown } | null) => String(f?.jsonPath ?? '').replace(/^\./, ''))
      .filter((f: string) => f !== ''),
  }));
  const storage = versions.find((v) => v.storage) ?? versions[0];
  if (!storage) return undefined;
  return {
    crd: crd.metadata.name,
    group: spec.group,
    plural: names.plural,
    singular: names.singular || names.kind.toLowerCase(),
    kind: names.kind,
    listKind: names.listKind || `${names.kind}List`,
    namespaced: spec.scope === 'Namespaced',
    shortNames: names.shortNames ?? [],
    categories: names.categories ?? [],
    versions,
    storageVersion: storage.name,
    ...(spec.conversion?.strategy === 'Webhook' && spec.conversion.webhook?.clientConfig
      ? {
          webhook: {
            clientConfig: spec.conversion.webhook.clientConfig,
            reviewVersions: spec.conversion.webhook.conversionReviewVersions ?? ['v1'],
          },
        }
      : {}),
  };
}

/** The served ResourceDef of each served version. */
export function customDefs(t: CustomType): ResourceDef[] {
  return t.versions
    .filter((v) => v.served)
    .map((v): ResourceDef => {
      const subresources: SubresourceDef[] = [];
      if (v.scale)
        subresources.push({ name: 'scale', kind: 'Scale', group: 'autoscaling', version: 'v1', verbs: SUB_VERBS });
      if (v.status)
        subresources.push({ name: 'status', kind: t.kind, group: t.group, version: v.name, verbs: SUB_VERBS });
      const def: ResourceDef = {
        group: t.group,
        version: v.name,
        resource: t.plural,
        singularName: t.singular,
        kind: t.kind,
        listKind: t.listKind,
        namespaced: t.namespaced,
        verbs: VERBS,
        subresources,
        shortNames: t.shortNames,
        categories: t.categories,
        definition: `${t.group.split('.').reverse().join('.')}.${v.name}.${t.kind}`,
        stability: 'stable',
        custom: true,
      };
      if (v.deprecated) {
        def.deprecation = {
          warning: v.deprecationWarning ?? `${t.group}/${v.name} ${t.kind} is deprecated`,
          removedRelease: '',
        };
      }
      return def;
    });
}

export function customVersion(t: CustomType, version: string): CustomVersion | undefined {
  return t.versions.find((v) => v.name === version);
}
