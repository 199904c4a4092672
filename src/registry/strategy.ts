/**
 * Per-kind behaviour plugged into the generic store. A kind spreads DEFAULT_STRATEGY and
 * overrides only what differs. Hooks run inside the owning shard actor.
 */
import type { Scale } from '../api/kinds.js';
import type { KubeObject, Stored } from '../api/object.js';
import type { StatusCause } from '../api/status.js';

/** Server settings strategies read (validated once at start). */
export interface StrategyConfig {
  serviceClusterIPRange: string;
  serviceNodePortRange: string;
  /** name of the API server's own Service in default (the product word: platform, kubernetes) */
  apiServiceName: string;
  /** lifetime of an Event after its last write, ms (--event-ttl) */
  eventTtlMs: number;
  /** the domain of the labels the server writes (`<product>.io`: platform.io, kubernetes.io) */
  labelDomain: string;
  /** namespaces that may not be deleted: default and the identity's system, public and node-lease ones */
  protectedNamespaces: readonly string[];
  /** --api-domain (the identity's group names); the reference domain when absent */
  apiDomain?: string;
}

/** Who asked for a write (the authenticated user, as plain data that crosses threads). */
export interface Requester {
  username: string;
  uid?: string;
  groups: string[];
  extra?: Record<string, string[]>;
}

/** What a strategy may consult while preparing a write; never mutated through it. */
export interface StrategyContext {
  /**
   * every object of the same type (as stored): committed state plus writes staged earlier in this
   * batch; a strategy may read them as its own kind T (the store holds one kind per strategy)
   */
  existing(): Iterable<Stored>;
  dryRun: boolean;
  config: StrategyConfig;
  /** wall clock of the batch (ms) */
  now: number;
  /** the requesting user of a create (undefined for the server's own writes) */
  user?: Requester;
}

export type NameRule = 'subdomain' | 'label' | 'path';

/**
 * T is the kind's shape (src/api/kinds.ts); the hooks are methods, so a ResourceStrategy<Pod> is
 * usable where a ResourceStrategy (any kind) is expected: the store hands each strategy only
 * objects of its own kind.
 */
export interface ResourceStrategy<T extends KubeObject = KubeObject> {
  /** how metadata.name is validated */
  nameRule: NameRule;
  /** PUT of a missing object creates it (upstream AllowCreateOnUpdate) */
  allowCreateOnUpdate: boolean;
  /**
   * PUT without metadata.resourceVersion (or with "0") updates whatever is stored (upstream
   * AllowUnconditionalUpdate); false: such a PUT is a 422.
   */
  allowUnconditionalUpdate: boolean;
  /**
   * Runs on create after metadata is stamped, before validation: set defaults, reset
   * status when the kind has a status subresource. May change obj.
   */
  prepareForCreate(obj: Stored<T>, ctx: StrategyContext): void;
  /** Runs on update of the main resource: may change obj (never old). */
  prepareForUpdate(obj: Stored<T>, old: Stored<T>, ctx: StrategyContext): void;
  /**
   * Field-level validation (create and update); returns one cause per bad field path. old is
   * the stored object on update (custom resources: transition rules and ratcheting).
   */
  validate(obj: Stored<T>, config?: StrategyConfig, old?: Stored<T>): StatusCause[];
  /** Extra validation on update (immutability). */
  validateUpdate(obj: Stored<T>, old: Stored<T>): StatusCause[];
  /**
   * Validating admission of a create, after validation passed (e.g. CSR subject restrictions):
   * why the create is forbidden (a 403), or undefined.
   */
  admitCreate(obj: Stored<T>, ctx: StrategyContext): string | undefined;
  /**
   * Runs on a write through the status subresource, after the store took status from the
   * written object and everything else from the stored one: may change next (never old).
   */
  prepareForStatusUpdate(next: Stored<T>, old: Stored<T>, ctx: StrategyContext): void;
  /** Validation of a write through a subresource (status, approval, ...): one cause per bad field path. */
  validateSubresourceUpdate(name: string, next: Stored<T>, old: Stored<T>): StatusCause[];
  /**
   * Besides metadata.finalizers, does something of the object hold its deletion pending?
   * (Namespaces: spec.finalizers.) Checked on delete and after every update of a deleting object.
   */
  holdsDeletion(obj: Stored<T>): boolean;
  /** Runs when deletion starts and is held: may change obj (e.g. phase Terminating). */
  prepareForDelete(obj: Stored<T>): void;
  /**
   * Seconds a deletion waits before the object may be removed (pods bound to a node wait for
   * their node agent); 0 removes at once. requested is DeleteOptions.gracePeriodSeconds.
   */
  gracePeriod(obj: Stored<T>, requested: number | undefined): number;
  /** Reply with the removed object (pods, services, namespaces) instead of a Success Status. */
  returnDeletedObject: boolean;
  /** Refuses deletion outright (e.g. system namespaces): a message for a 403, or undefined. */
  forbidDelete(obj: Stored<T>, config: StrategyConfig): string | undefined;
  /**
   * Writes through a subresource other than status and scale (e.g. namespaces/finalize): the
   * next object from the written one and the stored one; undefined when not supported.
   */
  updateSubresource(name: string, obj: Stored<T>, old: Stored<T>, ctx: StrategyContext): Stored<T> | undefined;
  /**
   * POST to a subresource (pods/binding, pods/eviction): returns the next state of the main
   * object (undefined = delete it) and the body to reply with (201); undefined when not supported.
   */
  createSubresource(
    name: string,
    body: unknown,
    old: Stored<T>,
    ctx: StrategyContext,
  ): { next: Stored<T> | undefined; reply: unknown } | undefined;
  /**
   * GET (and DELETE, for proxies) of a subresource other than status and scale (pods/log,
   * exec, attach, portforward, proxy): the reply body (a string is sent as text/plain), or
   * undefined for the full object. May throw a StatusError (e.g. no host assigned); never changes obj.
   */
  getSubresource(name: string, obj: Stored<T>): unknown | undefined;
  /**
   * Upstream TTLFunc: ms an object lives after each write (its storage lease), 0 for none.
   * Runs on every committed create and update; the object is deleted once the lease runs out.
   */
  ttl(obj: Stored<T>, config: StrategyConfig): number;
  /**
   * The scale subresource over other fields than spec.replicas (custom resources): the Scale
   * view of an object and the object after writing a Scale. Absent: the built-in spec.replicas.
   */
  scale?: {
    to(obj: Stored<T>): Scale;
    from(old: Stored<T>, scale: unknown): Stored<T>;
    /** where the Scale's spec.replicas lives in the object, for field ownership */
    replicasPath: string[];
  };
}

/** The hooks of a kind without special rules; typed by inference (no parameters, undefined results) so it spreads into a strategy of any kind. */
export const DEFAULT_STRATEGY = {
  nameRule: 'subdomain',
  allowCreateOnUpdate: false,
  allowUnconditionalUpdate: true,
  prepareForCreate() {},
  prepareForUpdate() {},
  validate() {
    return [];
  },
  validateUpdate() {
    return [];
  },
  admitCreate() {
    return undefined;
  },
  prepareForStatusUpdate() {},
  validateSubresourceUpdate() {
    return [];
  },
  holdsDeletion() {
    return false;
  },
  prepareForDelete() {},
  forbidDelete() {
    return undefined;
  },
  gracePeriod() {
    return 0;
  },
  returnDeletedObject: false,
  updateSubresource() {
    return undefined;
  },
  createSubresource() {
    return undefined;
  },
  getSubresource() {
    return undefined;
  },
  ttl() {
    return 0;
  },
} satisfies ResourceStrategy;
