/** What the per-verb handlers receive: the parsed request and the front thread's services. */
import type { CustomType } from '../registry/crd/types.js';
import type { Exchange } from './exchange.js';
import type { RequestInfo } from './request-info.js';
import type { ActorPool } from '../actors/pool.js';
import type { WatchHub } from './watch-hub.js';
import type { ResourceDef } from '../registry/types.js';
import type { CoreOptions } from './options.js';
import type { Encoding } from '../actors/protocol.js';
import type { ReadCache } from '../actors/read-cache.js';
import type { Status } from '../api/status.js';
import type { UserInfo } from '../api/user.js';

export interface RequestHeaders {
  accept: string | undefined;
  contentType: string | undefined;
  contentLength: number;
  userAgent: string | undefined;
  acceptEncoding?: string | undefined;
  /** If-None-Match, read for the OpenAPI documents only (their ETags) */
  ifNoneMatch?: string | undefined;
  /** the Upgrade header (connect subresources: exec, attach, portforward) */
  upgrade?: string | undefined;
  /** every header, lower-cased, in order: read only for proxy subresources (forwarded to the backend) */
  all?: [string, string][];
}

/** Delivers the request body once (already buffering, or read on demand). */
export type BodyReader = (done: (body: Buffer) => void, fail: (s: Status) => void) => void;

/** One attempt's pin, shared by the copies of its Request (`{ ...r }` keeps the same holder). */
export interface PinState {
  /** the resourceVersion every check of this attempt saw ('' = no object); undefined until one looked */
  rv?: string;
  /** runs the whole attempt again; false when the attempts are used up */
  again(): boolean;
}

export interface Request {
  x: Exchange;
  info: RequestInfo;
  query: URLSearchParams;
  headers: RequestHeaders;
  def: ResourceDef;
  enc: Encoding;
  /** who is asking (set by authentication; system:unsecured on the plain port) */
  user?: UserInfo;
  /** the body when a filter already started reading it (async authentication) */
  body?: BodyReader;
  /** a checked write: the version its checks saw, which the write must find (see pin.ts) */
  pin?: PinState;
  /**
   * a server-side apply that admission rewrote as a create or update of the admitted object: its
   * managedFields are the apply's own, stored as given (mutations by admission are nobody's, as upstream)
   */
  appliedFields?: true;
}

export interface Services {
  pool: ActorPool;
  hub: WatchHub;
  options: CoreOptions;
  /** namespaces known to exist and their phase (fed by the namespace change events) */
  namespaces: Map<string, 'Active' | 'Terminating'>;
  /** newest committed JSON of every object, for plain GETs (see read-cache.ts) */
  readCache: ReadCache;
  /** the Protobuf media type of the configured identity */
  protobufMediaType: string;
  /** a resourceVersion at or below which every change of typeKey has reached the hub */
  safeRV(typeKey: string): number;
  /** the served custom type of a group and resource (webhook conversion reads its CRD's settings) */
  customType?(group: string, resource: string): CustomType | undefined;
  /** the served apiextensions group (`apiextensions.<domain>`) */
  apiextensionsGroup?: string;
  /** asks the authorizer about the request's resource with another verb (upstream's extra checks) */
  authorize?(
    r: Request,
    verb: string,
  ): { decision: string; reason: string } | Promise<{ decision: string; reason: string }>;
}
