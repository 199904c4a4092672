/**
 * What an admission plugin sees (upstream admission.Attributes): the operation, the resource
 * and kind, who asks, the object the write would store and the stored one. Mutating plugins
 * change `object` in place and say so; every plugin may refuse by throwing a StatusError.
 */
import { fieldAt, isRecord } from '../api/object.js';
import type { UserInfo } from '../api/user.js';

export type Operation = 'CREATE' | 'UPDATE' | 'DELETE' | 'CONNECT';

export interface GroupVersionKind {
  group: string;
  version: string;
  kind: string;
}

/** The request alone, known before any body is read: enough to decide whether a plugin applies. */
export interface RequestAttributes {
  operation: Operation;
  group: string;
  version: string;
  resource: string;
  /** '' for the main resource */
  subresource: string;
  kind: GroupVersionKind;
  namespace: string;
  /** '' for a create whose name is generated */
  name: string;
  namespaced: boolean;
  dryRun: boolean;
  user: UserInfo;
}

export interface AdmissionAttributes extends RequestAttributes {
  /** the object the write would store (undefined for DELETE) */
  object: unknown;
  /** the stored object (UPDATE, DELETE) */
  oldObject: unknown;
  /** CreateOptions / UpdateOptions / DeleteOptions as the AdmissionReview carries them */
  options: Record<string, unknown>;
  /** Warning header values collected along the chain */
  warnings: string[];
  /** audit annotations collected along the chain */
  annotations: Record<string, string>;
}

/** metadata.name of an admitted object (a string, once validated), undefined when absent. */
export function nameOf(o: unknown): string | undefined {
  const name = fieldAt(o, 'metadata', 'name');
  return typeof name === 'string' ? name : undefined;
}

/**
 * metadata.labels of an admitted object (`object` or `oldObject`), undefined when it has none.
 * The objects are the store's: a dry-run result (validated, so labels map strings to strings)
 * or the stored object.
 */
export function labelsOf(o: unknown): Record<string, string> | undefined {
  const labels = fieldAt(o, 'metadata', 'labels');
  return isRecord(labels) ? (labels as Record<string, string>) : undefined;
}

/**
 * One admission plugin. `handles` is called on every write and must be cheap; `admit` (mutating
 * plugins, run first, in order) returns true when it changed the object; `validate` (validating
 * plugins, run after every mutation) may only refuse.
 */
export interface AdmissionPlugin {
  readonly name: string;
  handles(a: RequestAttributes): boolean;
  admit?(a: AdmissionAttributes): Promise<boolean> | boolean;
  validate?(a: AdmissionAttributes): Promise<void> | void;
}
