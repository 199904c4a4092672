/**
 * The watch stream's answers (`etcdserverpb.WatchResponse`) decoded by hand. Every commit a
 * server makes comes back to it on its own watch (one event per written key, value included),
 * and the follower skips those groups by revision without reading them; protobufjs decoded each
 * into objects and converted four int64 per key through `Long` to strings first. This decoder
 * makes the same shape etcd3 hands its watchers (proto-loader with longs and enums as strings,
 * defaults set), with keys and values as views into the received message (no copy), so etcd3's
 * WatchManager and Watcher (resume, backoff, reconnection) run unchanged on top of it.
 */
import type { Etcd3, IWatchResponse } from 'etcd3';
import { EMPTY, Reader } from './proto-reader.js';
import { H2Duplex } from './h2-stream.js';
import { headersOf, tlsOf, type Metadata, type PoolOptions } from './h2-unary.js';

const WATCH_METHOD = '/etcdserverpb.Watch/Watch';
type Header = IWatchResponse['header'];
type Event = IWatchResponse['events'][number];
type KeyValue = Event['kv'];

function header(r: Reader): Header {
  const h: Header = { cluster_id: '0', member_id: '0', revision: '0', raft_term: '0' };
  r.fields((f, field, wire) => {
    if (wire !== 0) f.skip(wire);
    else if (field === 1) h.cluster_id = f.int64(true);
    else if (field === 2) h.member_id = f.int64(true);
    else if (field === 3) h.revision = f.int64();
    else if (field === 4) h.raft_term = f.int64(true);
    else f.skip(wire);
  });
  return h;
}

function keyValue(r: Reader): KeyValue {
  const kv: KeyValue = {
    key: EMPTY,
    create_revision: '0',
    mod_revision: '0',
    version: '0',
    value: EMPTY,
    lease: '0',
  };
  r.fields((f, field, wire) => {
    if (field === 1 && wire === 2) kv.key = f.bytes();
    else if (field === 5 && wire === 2) kv.value = f.bytes();
    else if (wire !== 0) f.skip(wire);
    else if (field === 2) kv.create_revision = f.int64();
    else if (field === 3) kv.mod_revision = f.int64();
    else if (field === 4) kv.version = f.int64();
    else if (field === 6) kv.lease = f.int64();
    else f.skip(wire);
  });
  return kv;
}

function event(r: Reader): Event {
  const ev = { type: 'Put', kv: null, prev_kv: null } as unknown as Event;
  r.fields((f, field, wire) => {
    if (field === 1 && wire === 0) ev.type = f.small() === 1 ? 'Delete' : 'Put';
    else if (field === 2 && wire === 2) ev.kv = keyValue(f);
    else if (field === 3 && wire === 2) ev.prev_kv = keyValue(f);
    else f.skip(wire);
  });
  return ev;
}

/** A WatchResponse as etcd3's proto-loader codec decodes it (test/storage/etcd/watch-codec.test.ts). */
export function decodeWatchResponse(buf: Buffer): IWatchResponse {
  const res = {
    header: null,
    watch_id: '0',
    created: false,
    canceled: false,
    compact_revision: '0',
    cancel_reason: '',
    fragment: false,
    events: [],
  } as unknown as IWatchResponse & { fragment: boolean };
  const r = new Reader(buf, 0, buf.length);
  while (r.pos < r.end) {
    const tag = r.small();
    const field = Math.floor(tag / 8);
    const wire = tag & 7;
    if (field === 1 && wire === 2) res.header = header(r);
    else if (field === 11 && wire === 2) res.events.push(event(r));
    else if (field === 6 && wire === 2) res.cancel_reason = r.bytes().toString();
    else if (wire !== 0) r.skip(wire);
    else if (field === 2) res.watch_id = r.int64();
    else if (field === 3) res.created = r.small() !== 0;
    else if (field === 4) res.canceled = r.small() !== 0;
    else if (field === 5) res.compact_revision = r.int64();
    else if (field === 7) res.fragment = r.small() !== 0;
    else r.skip(wire);
  }
  return res;
}

interface StreamClient {
  constructor: { service?: { Watch?: { requestSerialize(v: unknown): Buffer } } };
}

/** what etcd3 1.x's WatchClient holds: its connection pool (`ICallable`) */
interface Pool {
  withConnection<R>(
    service: 'Watch',
    fn: (args: { resource: { host: string }; client: unknown; metadata: Metadata }) => R,
  ): Promise<R>;
  markFailed(resource: unknown, error: Error): void;
  options?: PoolOptions;
}

/**
 * Makes the client's watch streams decode with decodeWatchResponse, on an HTTP/2 stream of their
 * own (h2-stream.ts) rather than grpc-js's call: etcd3's WatchClient.watch (what its WatchManager
 * calls to open and re-open the stream) is replaced on this client only, opening the same call
 * to the member etcd3's pool chooses, with etcd3's request encoder. A client whose shape is not
 * etcd3 1.x's is left as it is.
 */
export function useWatchCodec(client: Etcd3): void {
  const watchClient = (client as unknown as { watchClient?: { client?: Partial<Pool>; watch?: unknown } }).watchClient;
  const pool = watchClient?.client;
  if (!watchClient || typeof pool?.withConnection !== 'function' || typeof pool.markFailed !== 'function') return;
  const p = pool as Pool;
  const tls = tlsOf(p.options ?? {});
  watchClient.watch = () =>
    p.withConnection('Watch', ({ resource, client: c, metadata }) => {
      const serialize = (c as StreamClient).constructor.service?.Watch?.requestSerialize;
      if (!serialize) throw new Error('etcd3: Watch service client has no request encoder');
      const stream = new H2Duplex(
        resource.host,
        tls,
        WATCH_METHOD,
        headersOf(metadata),
        serialize,
        decodeWatchResponse,
      );
      stream.on('error', (err: Error) => stream.writable && p.markFailed(resource, err));
      return stream;
    });
}
