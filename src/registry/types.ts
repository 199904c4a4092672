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
  group: string;          // "" for the core group
  version: string;        // "v1", "v1beta1", ...
  resource: string;       // plural, URL segment: "configmaps"
  singularName: string;   // "configmap"
  kind: string;           // "ConfigMap"
  listKind: string;       // "ConfigMapList"
  namespaced: boolean;
  verbs: Verb[];
  subresources: SubresourceDef[];
  shortNames: string[];
  categories: string[];
  /** openapi definition name of the kind, e.g. "io.plat.api.core.v1.ConfigMap" */
  definition: string;
  stability: Stability;
}
