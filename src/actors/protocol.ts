/**
 * The only module both sides of the thread boundary import: messages between the front
 * thread and the shard actors. Everything here is plain data (structured clone).
 * One task carries a whole batch of operations for one shard (per event-loop turn), because
 * per-task overhead dominates single-operation round trips.
 */
import type { EncryptionConfig } from '../storage/encryption/config.js';
import type { Status } from '../api/status.js';
import type { Requester, StrategyConfig } from '../registry/strategy.js';
import type { EtcdConfig } from '../storage/etcd/etcd-client.js';
import type { CustomType } from '../registry/crd/types.js';

/** Identifies the served resource an operation targets (its registry entry). */
export interface TypeRef {
  group: string;
  version: string;
  resource: string;
  subresource?: string;
}

/** How the actor should encode the response body. */
export interface Encoding {
  format: 'json' | 'yaml' | 'protobuf' | 'cbor';
  pretty: boolean;
  /** the Protobuf media type of the configured identity (format protobuf only) */
  mediaType?: string;
  /** render a server-side view instead of the object or list (Accept `as=`) */
  view?: { as: 'Table' | 'PartialObjectMetadata' | 'PartialObjectMetadataList'; groupVersion: string; includeObject: 'None' | 'Metadata' | 'Object' };
  /** the client accepts gzip and the APIResponseCompression gate is on */
  gzip?: boolean;
}

export interface ListOptions {
  labelSelector?: string;
  fieldSelector?: string;
  limit?: number;
  continue?: string;
  resourceVersion?: string;
  resourceVersionMatch?: string;
}

/**
 * A page of a streamed LIST (src/handlers/list-stream.ts, op flag `page`): the reply body holds
 * only the page's items, comma-joined JSON, never compressed, and `page` carries the metadata.
 */
export interface PageMeta { resourceVersion: string; continue?: string; items: number }

export interface DeleteOptions {
  gracePeriodSeconds?: number;
  preconditions?: { uid?: string; resourceVersion?: string };
  propagationPolicy?: string;
  orphanDependents?: boolean;
  dryRun?: string[];
  /** alpha: delete an object that cannot be read (only with gate AllowUnsafeMalformedObjectDeletion) */
  ignoreStoreReadErrorWithClusterBreakingPotential?: boolean;
}

interface Base { id: number; type: TypeRef; enc: Encoding }
export interface Body { text: string; contentType: 'json' | 'yaml' | 'protobuf' | 'cbor'; bytes?: Uint8Array }
interface WriteBase extends Base {
  dryRun: boolean; fieldManager?: string; fieldValidation?: 'Ignore' | 'Warn' | 'Strict';
  /**
   * update, patch, delete: the resourceVersion the named object must have when the write runs
   * ('' = it must not exist), else 409 Conflict. The front thread sets it to the version its
   * checks previewed, so the object checked is the object written (src/handlers/pin.ts).
   */
  pin?: string;
}

export type Op =
  | (Base & { op: 'get'; namespace: string; name: string; resourceVersion?: string })
  | (Base & { op: 'list'; namespace: string; opts: ListOptions; page?: boolean })
  | (WriteBase & { op: 'create'; namespace: string; body: Body; namespaceTerminating?: boolean; name?: string; user?: Requester })
  | (WriteBase & { op: 'update'; namespace: string; name: string; body: Body })
  | (WriteBase & { op: 'delete'; namespace: string; name: string; options: DeleteOptions })
  | (WriteBase & { op: 'deletecollection'; namespace: string; opts: ListOptions; options: DeleteOptions })
  | (WriteBase & { op: 'patch'; namespace: string; name: string; patchType: PatchType; text: string; force: boolean; user?: Requester })
  /** held: share keys of initial events the front thread holds for this type (WatchStart.shareKey): not sent again */
  | (Base & { op: 'watch'; namespace: string; opts: ListOptions & WatchFlags; held?: string[] });

export type PatchType = 'json' | 'merge' | 'strategic' | 'apply';

export interface WatchFlags {
  sendInitialEvents?: boolean;
  allowWatchBookmarks?: boolean;
}

export type OpName = Op['op'];

/** Result of one operation: an already-encoded body, or a Status. */
export type Result =
  | { id: number; code: number; body: string | Uint8Array; contentType: string; warnings?: string[]; contentEncoding?: 'gzip'; bodyRef?: [number, number]; page?: PageMeta }
  | { id: number; error: Status }
  | { id: number; watch: WatchStart };

/** Reply to a watch op: encoded initial events and the version the live stream continues from. */
export interface WatchStart {
  /** type key (group/resource) whose event feed this watch subscribes to */
  typeKey: string;
  /** events to send first (synthetic ADDED, or history replay), already framed in the op's encoding */
  initial: (string | Uint8Array)[];
  /** deliver live events with rv strictly greater than this */
  fromRV: number;
  /** the kind and apiVersion of bookmarks for this watch */
  kind: string;
  apiVersion: string;
  /** when the initial events end with an initial-events-end bookmark, its rv */
  initialEventsEndRV?: number;
  /** the field selector in the stored object's labels, when the requested version renames them */
  fieldSelector?: string;
  /**
   * names `initial` for sharing: watches answered with the same key got the same initial
   * events (same state, options and encoding), so the front thread keeps one copy for all;
   * `initial` is empty when the key was among the op's `held` keys
   */
  shareKey?: string;
}

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
  /** ownership facts for the garbage collector (no JSON parsing on the front thread) */
  uid: string;
  owners?: { uid: string; apiVersion: string; kind: string; name: string; blockOwnerDeletion?: boolean }[];
  finalizers?: string[];
  deleting?: boolean;
  /** kinds with a TTL (Events): when the object expires after this write (ms since the epoch) */
  expiresAt?: number;
}

export interface Batch {
  ops: Op[];
  /**
   * Set (to the shard's wake counter as sent) on the empty batch the front thread keeps in
   * flight on a shared store: the actor answers once other servers' changes arrived, the
   * counter moved (work is queued) or a second passed.
   */
  poll?: number;
  /** per type key, the non-JSON stream encodings its live watchers use: events carry them encoded */
  streams?: Record<string, Encoding[]>;
}

export interface BatchReply {
  results: Result[];
  events: ChangeEvent[];
  /** string bodies packed as UTF-8 (see pack.ts), transferred rather than copied */
  bodies?: ArrayBuffer;
}

/** The first task sent to each actor; the actor opens its storage and loads its shard. */
export interface InitRequest { init: true }
/** Asks an actor for the state of every object and lease now (InitReply), e.g. for a newly elected leader's controllers. */
export interface SnapshotRequest { snapshot: true }
export interface InitReply { maxRV: number; namespaces: { name: string; terminating: boolean; obj: unknown }[]; objects: CachedObject[]; leases: Lease[] }

/**
 * The served custom resource types (every established CRD), sent to every actor whenever a
 * CRD changes; an actor loads the stored objects of types it owns and has not loaded yet.
 */
export interface DefsRequest { defs: CustomType[] }
export interface DefsReply { objects: CachedObject[] }

/** A stored object's lease (kinds with a TTL): it expires at expiresAt unless written again. */
export interface Lease { typeKey: string; namespace: string; name: string; rv: number; expiresAt: number }

/** An object's encoded state for the front thread's read cache. */
export interface CachedObject { typeKey: string; namespace: string; name: string; apiVersion: string; json: string }

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
