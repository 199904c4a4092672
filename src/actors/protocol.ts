/**
 * The only module both sides of the thread boundary import: messages between the front
 * thread and the shard actors. Everything here is plain data (structured clone); a batch's
 * ops and its reply's results and events travel packed (wire.ts), restored on arrival.
 * One task carries a whole batch of operations for one shard (per event-loop turn), because
 * per-task overhead dominates single-operation round trips.
 */
import type { EncryptionConfig } from '../storage/encryption/config.js';
import type { StrategyConfig } from '../registry/strategy.js';
import type { EtcdConfig } from '../storage/etcd/etcd-client.js';
import type { CustomType } from '../registry/crd/types.js';

import type { Encoding } from '../codec/types.js';
import type { Op, Result } from '../registry/ops.js';
import type { PackedOps, PackedReply } from './wire.js';
export type { Encoding, Body } from '../codec/types.js';
export type {
  TypeRef,
  ListOptions,
  PageMeta,
  DeleteOptions,
  Op,
  PatchType,
  WatchFlags,
  OpName,
  Result,
  WatchStart,
} from '../registry/ops.js';

/** A committed change, broadcast to the front thread for watch fan-out. */
export interface ChangeEvent {
  typeKey: string;
  type: 'ADDED' | 'MODIFIED' | 'DELETED';
  rv: number;
  namespace: string;
  name: string;
  /** the object, JSON-encoded once */
  json: string;
  /** selectable state of the object now and before the change (for selector transitions) */
  labels: Record<string, string> | undefined;
  fields: Record<string, string>;
  prevLabels?: Record<string, string>;
  prevFields?: Record<string, string>;
  /** the previous object, only when an update changed labels or selectable fields */
  prevJson?: string;
  /**
   * the object in the stream encodings live watchers of this type use (Batch.streams), keyed by
   * streamKey; events a watcher needs in another encoding are encoded on the front thread
   */
  encoded?: Record<string, string | Uint8Array>;
  /** the version the object is stored (and its JSON written) in */
  apiVersion: string;
  /** bench tracing only (PLAT_WATCH_TRACE): when the actor published it after its commit, monotonic µs */
  publishedUs?: number;
  /** ownership facts for the garbage collector (no JSON parsing on the front thread) */
  uid: string;
  owners?: { uid: string; apiVersion: string; kind: string; name: string; blockOwnerDeletion?: boolean }[];
  finalizers?: string[];
  deleting?: boolean;
  /** kinds with a TTL (Events): when the object expires after this write (ms since the epoch) */
  expiresAt?: number;
  /** Pods (ADDED/MODIFIED): what ResourceQuota counts of it, when not the plain count of one (pod-quota.ts) */
  quota?: PodQuota;
}

/** A Pod as ResourceQuota counts it: finished (counts nothing), else its containers' sums per resource name. */
export interface PodQuota {
  finished?: true;
  requests?: Record<string, number>;
  limits?: Record<string, number>;
}

export interface Batch {
  /** empty on the wire when `wire` holds them (the front always packs) */
  ops: Op[];
  /** the ops packed (wire-ops.ts): what the front thread sends instead of cloning `ops` */
  wire?: PackedOps;
  /**
   * Set (to the shard's wake counter as sent) on the empty batch the front thread keeps in
   * flight on a shared store: the actor answers once other servers' changes arrived, the
   * counter moved (work is queued) or a second passed.
   */
  poll?: number;
  /** per type key, the non-JSON stream encodings its live watchers use: events carry them encoded */
  streams?: Record<string, Encoding[]>;
  /** buffers of bodies the front thread wrote, transferred back for reuse (codec/buffer-pool.ts) */
  returned?: ArrayBuffer[];
}

export interface BatchReply {
  results: Result[];
  events: ChangeEvent[];
  /** string bodies packed as UTF-8 (see pack.ts), transferred rather than copied */
  bodies?: ArrayBuffer;
  /** the results and events packed (wire-reply.ts): both lists are empty on the wire when set */
  wire?: PackedReply;
}

/** The first task sent to each actor; the actor opens its storage and loads its shard. */
export interface InitRequest {
  init: true;
}
/** Asks an actor for the state of every object and lease now (InitReply), e.g. for a newly elected leader's controllers. */
export interface SnapshotRequest {
  snapshot: true;
}
/** Asks an idle actor to scavenge its young generation (src/actors/idle-collect.ts). */
export interface CollectRequest {
  collect: true;
}
export interface InitReply {
  maxRV: number;
  namespaces: { name: string; terminating: boolean; obj: unknown }[];
  objects: CachedObject[];
  leases: Lease[];
}

/**
 * The served custom resource types (every established CRD), sent to every actor whenever a
 * CRD changes; an actor loads the stored objects of types it owns and has not loaded yet.
 */
export interface DefsRequest {
  defs: CustomType[];
}
export interface DefsReply {
  objects: CachedObject[];
}

/** A stored object's lease (kinds with a TTL): it expires at expiresAt unless written again. */
export interface Lease {
  typeKey: string;
  namespace: string;
  name: string;
  rv: number;
  expiresAt: number;
}

/** An object's encoded state for the front thread's read cache. */
export interface CachedObject {
  typeKey: string;
  namespace: string;
  name: string;
  apiVersion: string;
  json: string;
  /** as ChangeEvent.quota; set by the start-up load only (a snapshot, for the controllers, goes without) */
  quota?: PodQuota;
}

/**
 * Test-only fault injection (hidden flags --test-actor-faults, --test-fail-commit-match; see
 * src/actors/test-faults.ts). Never set in production.
 */
export interface TestFaults {
  /** a GET of CRASH_NAME ends the actor; while `<dir>/hold-init` exists a (re)starting actor waits before loading */
  dir?: string;
  /** a commit holding a key that contains this text fails as a backend refusal would */
  failCommitMatch?: string;
}

/** Data every actor receives at start (piscina workerData). */
export interface ActorConfig {
  shard: number;
  shards: number;
  /** where shards store their objects: LMDB under dataDir, or etcd (settings in etcd) */
  storageBackend: 'lmdb' | 'etcd3';
  dataDir: string;
  etcd: EtcdConfig;
  runtimeConfig: string;
  apiDomain: string;
  /** shared resourceVersion counter: BigInt64Array over this buffer, index 0 */
  rvBuffer: SharedArrayBuffer;
  /** this shard's wake counter (Int32Array, index 0): bumped when work queues behind a poll */
  wakeBuffer?: SharedArrayBuffer;
  historyWindowMs: number;
  continueTtlMs: number;
  strategyConfig: StrategyConfig;
  /** `--encryption-provider-config`, parsed and validated by the front thread */
  encryption?: EncryptionConfig;
  /** test fixtures only (ServerOptions.testFaults) */
  testFaults?: TestFaults;
}
