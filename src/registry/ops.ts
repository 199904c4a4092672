/**
 * The operations the generic store performs, as plain data: what the front thread sends a shard
 * actor (src/actors/protocol.ts re-exports them) and what the store answers.
 */
import type { Status } from '../api/status.js';
import type { Requester } from './strategy.js';
import type { Body, Encoding } from '../codec/types.js';

/** Identifies the served resource an operation targets (its registry entry). */
export interface TypeRef {
  group: string;
  version: string;
  resource: string;
  subresource?: string;
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
 * only the page's items (JSON: comma-joined; Protobuf: `items` fields, the first page opening the
 * envelope: src/registry/list-page.ts), never compressed, and `page` carries the metadata.
 */
export interface PageMeta {
  resourceVersion: string;
  continue?: string;
  items: number /** Protobuf: the whole body's length, on the first page */;
  size?: number;
}

export interface DeleteOptions {
  gracePeriodSeconds?: number;
  /** as decoded: a JSON null field is no precondition */
  preconditions?: { uid?: string | null; resourceVersion?: string | null };
  propagationPolicy?: string;
  orphanDependents?: boolean;
  dryRun?: string[];
  /** alpha: delete an object that cannot be read (only with gate AllowUnsafeMalformedObjectDeletion) */
  ignoreStoreReadErrorWithClusterBreakingPotential?: boolean;
}

interface Base {
  id: number;
  type: TypeRef;
  enc: Encoding;
}
interface WriteBase extends Base {
  dryRun: boolean;
  fieldManager?: string;
  fieldValidation?: 'Ignore' | 'Warn' | 'Strict';
  /**
   * update, patch, delete: the resourceVersion the named object must have when the write runs
   * ('' = it must not exist), else 409 Conflict. The front thread sets it to the version its
   * checks previewed, so the object checked is the object written (src/http/pin.ts).
   */
  pin?: string;
}

export type Op =
  | (Base & { op: 'get'; namespace: string; name: string; resourceVersion?: string })
  | (Base & { op: 'list'; namespace: string; opts: ListOptions; page?: boolean })
  | (WriteBase & {
      op: 'create';
      namespace: string;
      body: Body;
      namespaceTerminating?: boolean;
      name?: string;
      user?: Requester;
    })
  | (WriteBase & { op: 'update'; namespace: string; name: string; body: Body })
  | (WriteBase & { op: 'delete'; namespace: string; name: string; options: DeleteOptions })
  | (WriteBase & { op: 'deletecollection'; namespace: string; opts: ListOptions; options: DeleteOptions })
  | (WriteBase & {
      op: 'patch';
      namespace: string;
      name: string;
      patchType: PatchType;
      text: string;
      force: boolean;
      user?: Requester;
    })
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
  | {
      id: number;
      code: number;
      body: string | Uint8Array;
      contentType: string;
      warnings?: string[];
      contentEncoding?: 'gzip';
      bodyRef?: [number, number];
      page?: PageMeta /** the body is the whole of a buffer transferred to the front (actors/pack.ts returnBody) */;
      ownBuffer?: boolean;
    }
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
