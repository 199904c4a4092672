/** What the per-verb handlers receive: the parsed request and the front thread's services. */
import type { Exchange } from '../server/http.js';
import type { RequestInfo } from '../server/request-info.js';
import type { ActorPool } from '../server/actor-pool.js';
import type { WatchHub } from '../server/watch-hub.js';
import type { ResourceDef } from '../registry/types.js';
import type { ServerOptions } from '../server/options.js';
import type { Encoding } from '../actors/protocol.js';

export interface RequestHeaders {
  accept: string | undefined;
  contentType: string | undefined;
  contentLength: number;
  userAgent: string | undefined;
  acceptEncoding?: string | undefined;
}

export interface Request {
  x: Exchange;
  info: RequestInfo;
  query: URLSearchParams;
  headers: RequestHeaders;
  def: ResourceDef;
  enc: Encoding;
}

export interface Services {
  pool: ActorPool;
  hub: WatchHub;
  options: ServerOptions;
  /** namespaces known to exist and their phase (fed by the namespace change events) */
  namespaces: Map<string, 'Active' | 'Terminating'>;
  /** the Protobuf media type of the configured identity */
  protobufMediaType: string;
  /** a resourceVersion at or below which every change of typeKey has reached the hub */
  safeRV(typeKey: string): number;
}
