/**
 * Per-kind behaviour plugged into the generic store. A kind spreads DEFAULT_STRATEGY and
 * overrides only what differs. Hooks run inside the owning shard actor.
 */
import type { StatusCause } from '../api/status.js';

export type NameRule = 'subdomain' | 'label' | 'path';

export interface ResourceStrategy {
  /** how metadata.name is validated */
  nameRule: NameRule;
  /** PUT of a missing object creates it (upstream AllowCreateOnUpdate) */
  allowCreateOnUpdate: boolean;
  /**
   * Runs on create after metadata is stamped, before validation: set defaults, reset
   * status when the kind has a status subresource. May change obj.
   */
  prepareForCreate(obj: any): void;
  /** Runs on update of the main resource: may change obj (never old). */
  prepareForUpdate(obj: any, old: any): void;
  /** Field-level validation on create; returns one cause per bad field path. */
  validate(obj: any): StatusCause[];
  /** Extra validation on update (immutability). */
  validateUpdate(obj: any, old: any): StatusCause[];
}

export const DEFAULT_STRATEGY: ResourceStrategy = {
  nameRule: 'subdomain',
  allowCreateOnUpdate: false,
  prepareForCreate() {},
  prepareForUpdate() {},
  validate() { return []; },
  validateUpdate() { return []; },
};
