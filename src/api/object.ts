/**
 * The object model: upstream's TypeMeta, ObjectMeta and the shapes of the kinds whose code reads
 * them by field. Shapes list only the fields this server reads or writes, all optional, as a
 * stored or decoded object may lack any of them; code validates what it needs before relying on
 * it. Objects are plain JSON data (they cross threads by structured clone).
 */

/** apiVersion and kind (metav1.TypeMeta). */
export interface TypeMeta {
  apiVersion?: string;
  kind?: string;
}

/** metav1.OwnerReference */
export interface OwnerReference {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  controller?: boolean;
  blockOwnerDeletion?: boolean;
}

/** One entry of metadata.managedFields (metav1.ManagedFieldsEntry). */
export interface ManagedFieldsEntry {
  manager?: string;
  operation?: 'Apply' | 'Update';
  apiVersion?: string;
  time?: string;
  fieldsType?: string;
  fieldsV1?: Record<string, unknown>;
  subresource?: string;
}

/** metav1.ObjectMeta (the fields the server reads or writes). */
export interface ObjectMeta {
  name?: string;
  generateName?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  creationTimestamp?: string;
  deletionTimestamp?: string;
  deletionGracePeriodSeconds?: number;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  ownerReferences?: OwnerReference[];
  finalizers?: string[];
  managedFields?: ManagedFieldsEntry[];
  /** deprecated, never set by this server; dropped from written objects */
  selfLink?: string;
}

/** A stored object of any kind: TypeMeta, ObjectMeta, and the kind's spec and status. */
export interface KubeObject<Spec = unknown, Status = unknown> extends TypeMeta {
  metadata?: ObjectMeta;
  spec?: Spec;
  status?: Status;
}

/** An object as the store holds it: metadata and metadata.name always set. */
export type Stored<T extends KubeObject = KubeObject> = T & { metadata: ObjectMeta & { name: string } };

/** metav1.Condition and the per-kind condition types that share its fields. */
export interface Condition {
  type: string;
  status: string;
  reason?: string;
  message?: string;
  lastTransitionTime?: string;
  lastUpdateTime?: string;
  lastHeartbeatTime?: string;
  lastProbeTime?: string;
  observedGeneration?: number;
}

/** metav1.LabelSelector */
export interface LabelSelectorRequirement {
  key: string;
  operator: string;
  values?: string[];
}
export interface LabelSelector {
  matchLabels?: Record<string, string>;
  matchExpressions?: LabelSelectorRequirement[];
}

/** The narrowing every reader of decoded JSON starts with: a non-null, non-array object. */
export const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * The one place a decoded JSON object becomes a typed object: the caller (the store's decoders)
 * then sets and checks kind, apiVersion and metadata; validation checks the rest before
 * anything relies on it.
 */
export const isObjectBody = (v: unknown): v is Stored => isRecord(v);

/**
 * v?.[k1]?.[k2]... over decoded JSON: undefined as soon as a step is null or undefined, else
 * the property (of any value, as optional chaining reads it).
 */
export function fieldAt(v: unknown, ...keys: string[]): unknown {
  for (const k of keys) {
    if (v === undefined || v === null) return undefined;
    v = (v as Record<string, unknown>)[k];
  }
  return v;
}

/** The conditions of an object's status, [] when absent or malformed. */
export function conditionsOf(obj: { status?: unknown } | undefined): Condition[] {
  const status = obj?.status;
  const conds = isRecord(status) ? status.conditions : undefined;
  return Array.isArray(conds) ? (conds as Condition[]) : [];
}
