/** Shapes of the resource registry: one entry per served (group, version, resource). */

export type Verb = 'get' | 'list' | 'watch' | 'create' | 'update' | 'patch' | 'delete' | 'deletecollection';

export type Stability = 'stable' | 'beta' | 'alpha';

export interface SubresourceDef {
  /** path segment after the object name, e.g. "status", "scale", "log" */
  name: string;
  /** kind served by the subresource, e.g. "Scale" */
  kind: string;
  /** group and version of that kind (Scale is autoscaling/v1) */
  group: string;
  version: string;
  verbs: Verb[];
}

export interface ResourceDef {
  group: string; // "" for the core group
  version: string; // "v1", "v1beta1", ...
  resource: string; // plural, URL segment: "configmaps"
  singularName: string; // "configmap"
  kind: string; // "ConfigMap"
  listKind: string; // "ConfigMapList"
  namespaced: boolean;
  verbs: Verb[];
  subresources: SubresourceDef[];
  shortNames: string[];
  categories: string[];
  /** openapi definition name of the kind, e.g. "io.plat.api.core.v1.ConfigMap" */
  definition: string;
  stability: Stability;
  /** upstream's prerelease lifecycle of a beta version (generated; releases as "1.28") */
  lifecycle?: Lifecycle;
  /** set by the Registry when the lifecycle says the version is deprecated in this release */
  deprecation?: Deprecation;
  /** served from a CustomResourceDefinition (src/registry/crd) */
  custom?: boolean;
}

export interface Lifecycle {
  introduced: string;
  /** introduced + 3 minor releases unless upstream says otherwise */
  deprecated: string;
  /** deprecated + 3 minor releases unless upstream says otherwise */
  removed: string;
  /** the kind to use instead (group in reference names) */
  replacement?: { group: string; version: string; kind: string };
}

/** What a request to a deprecated version gets: the Warning text and the removed release. */
export interface Deprecation {
  /** `<group>/<version> <Kind> is deprecated in v1.X+, unavailable in v1.Y+; use <group>/<version> <Kind>` */
  warning: string;
  /** "1.34" (the `removed_release` label, the `plat.io/removed-release` audit annotation) */
  removedRelease: string;
}
