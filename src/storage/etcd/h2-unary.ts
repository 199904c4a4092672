/**
 * A gRPC unary call straight on node:http2, for the one call of the write path (KV/Txn): one
 * HTTP/2 session per etcd member, a request with the gRPC headers, the length-prefixed message,
 * and the status from the trailers. grpc-js's call stack (resolving, retrying, load-balancing and
 * subchannel calls, interceptors, filters, a copy of the message into its frame) cost about
 * 40% of the client CPU of a Txn call (bench/etcd-txn.ts); member choice, circuit breakers and
 * attempts stay etcd3's (txn-call.ts runs each call inside the pool's `withConnection`).
 *
 * Failures answer as grpc-js answers them (an Error with the numeric gRPC `code` and the message
 * `<code> <NAME>: <details>`), so etcd3's `castGrpcError` types them as before: a broken
 * connection or stream is UNAVAILABLE, a refusal by etcd carries etcd's status and message.
 */
import http2, { type ClientHttp2Session, type ClientHttp2Stream, type IncomingHttpHeaders } from 'node:http2';
import type { SecureContextOptions } from 'node:tls';

/** gRPC status codes used here, with grpc-js's names (its error messages start with both) */
const STATUS_NAMES: Record<number, string> = {
  1: 'CANCELLED',
  2: 'UNKNOWN',
  3: 'INVALID_ARGUMENT',
  4: 'DEADLINE_EXCEEDED',
  5: 'NOT_FOUND',
  6: 'ALREADY_EXISTS',
  7: 'PERMISSION_DENIED',
  8: 'RESOURCE_EXHAUSTED',
  9: 'FAILED_PRECONDITION',
  10: 'ABORTED',
  11: 'OUT_OF_RANGE',
  12: 'UNIMPLEMENTED',
  13: 'INTERNAL',
  14: 'UNAVAILABLE',
  15: 'DATA_LOSS',
  16: 'UNAUTHENTICATED',
};
export const CANCELLED = 1;
export const UNAVAILABLE = 14;
export const INTERNAL = 13;
const { NGHTTP2_CANCEL, NGHTTP2_REFUSED_STREAM } = http2.constants;

/** An error shaped as grpc-js's (castGrpcError reads its message and code). */
export function grpcError(code: number, details: string): Error & { code: number; details: string } {
  return Object.assign(new Error(`${code} ${STATUS_NAMES[code] ?? 'UNKNOWN'}: ${details}`), { code, details });
}

/** The gRPC frame of a message: no compression, its length, the message. */
export function grpcFrame(message: Buffer): Buffer {
  const frame = Buffer.allocUnsafe(5 + message.length);
  frame[0] = 0;
  frame.writeUInt32BE(message.length, 1);
  message.copy(frame, 5);
  return frame;
}

/** what etcd3's connection pool was built with (etcd3 1.x `IOptions`): its hosts and TLS */
export interface PoolOptions {
  hosts?: string | string[];
  credentials?: { rootCertificate?: Buffer | null; certChain?: Buffer; privateKey?: Buffer };
}

/** TLS as etcd3 sets up its channels: the client's credentials, or system roots for an https host. */
export function tlsOf(options: PoolOptions): SecureContextOptions | undefined {
  const { credentials, hosts = [] } = options;
  if (credentials)
    return { ca: credentials.rootCertificate ?? undefined, cert: credentials.certChain, key: credentials.privateKey };
  return [hosts].flat().some((h) => h.startsWith('https://')) ? {} : undefined;
}

/** a call's grpc Metadata (etcd3 hands one to every call) */
export interface Metadata {
  getMap(): Record<string, unknown>;
}

/** the call's metadata as HTTP/2 headers (etcd3's auth token when the client authenticates) */
export function headersOf(metadata: Metadata): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(metadata.getMap())) if (typeof v === 'string') out[k] = v;
  return out;
}

/** A session to a member (`host:port`): https when tls is present. */
export function connectMember(host: string, tls: SecureContextOptions | undefined): ClientHttp2Session {
  return http2.connect(`${tls ? 'https' : 'http'}://${host}`, tls ?? {});
}

/** A gRPC call's stream on session: the request headers of method path and the call's metadata. */
export function grpcRequest(
  session: ClientHttp2Session,
  path: string,
  headers: Record<string, string>,
): ClientHttp2Stream {
  return session.request({
    ':method': 'POST',
    ':path': path,
    'content-type': 'application/grpc',
    te: 'trailers',
    ...headers,
  });
}

/** A call in flight: cancel() ends its stream (its promise then never settles through it). */
export interface UnaryCall<T> {
  answer: Promise<T>;
  cancel(): void;
}

interface Session {
  s: ClientHttp2Session;
  /** streams open on it: the session keeps the process alive only while some are */
  active: number;
}

/** HTTP/2 sessions to etcd members, by `host:port`, opened on first use and again after a failure. */
export class H2Unary {
  private readonly sessions = new Map<string, Session>();
  private closed = false;

  /** tls: present for https members (CA, client certificate and key when configured) */
  constructor(private readonly tls: SecureContextOptions | undefined) {}

  /**
   * Calls path on host with one message (already framed, grpcFrame) and decodes the one answer;
   * headers: the call's metadata (etcd3's auth token, when there is one).
   */
  call<T>(
    host: string,
    path: string,
    frame: Buffer,
    headers: Record<string, string>,
    decode: (message: Buffer) => T,
  ): UnaryCall<T> {
    let stream: ClientHttp2Stream | undefined;
    const answer = new Promise<T>((resolve, reject) => {
      if (this.closed) return reject(grpcError(UNAVAILABLE, 'client closed'));
      const session = this.session(host);
      try {
        stream = grpcRequest(session.s, path, headers);
      } catch (e) {
        this.retire(host, session);
        return reject(grpcError(UNAVAILABLE, (e as Error).message));
      }
      session.active++ || session.s.ref();
      readAnswer(stream, decode).then(resolve, reject);
      stream.once('close', () => --session.active || session.s.unref());
      stream.end(frame);
    });
    return { answer, cancel: () => stream?.close(NGHTTP2_CANCEL) };
  }

  /**
   * A member that failed a call with a recoverable error (unreachable, past its deadline): later
   * calls open a new session, as etcd3 resets its grpc clients of the host; the calls on this
   * one may still finish.
   */
  retire(host: string, session = this.sessions.get(host)): void {
    if (!session || this.sessions.get(host) !== session) return;
    this.sessions.delete(host);
    if (!session.s.closed) session.s.close();
  }

  close(): void {
    this.closed = true;
    for (const { s } of this.sessions.values()) s.destroy();
    this.sessions.clear();
  }

  private session(host: string): Session {
    const known = this.sessions.get(host);
    if (known && !known.s.closed && !known.s.destroyed) return known;
    const s = connectMember(host, this.tls);
    const session: Session = { s, active: 0 };
    s.unref();
    const drop = (): void => {
      if (this.sessions.get(host) === session) this.sessions.delete(host);
    };
    // the streams on it fail with their own errors; this only keeps the session from being reused
    s.on('error', drop);
    s.on('goaway', drop);
    s.on('close', drop);
    this.sessions.set(host, session);
    return session;
  }
}

/** The one message of a unary answer, or the call's gRPC error. */
function readAnswer<T>(stream: ClientHttp2Stream, decode: (message: Buffer) => T): Promise<T> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let status: IncomingHttpHeaders | undefined;
    let failure: Error | undefined;
    stream.on('response', (h) => {
      // a trailers-only answer (an error) carries the status in its headers
      if (h['grpc-status'] !== undefined) status = h;
      else if (h[':status'] !== 200) failure = grpcError(UNAVAILABLE, `HTTP status ${String(h[':status'])}`);
    });
    stream.on('trailers', (h) => (status = h));
    stream.on('data', (c: Buffer) => chunks.push(c));
    stream.on('error', (e) => (failure ??= grpcError(UNAVAILABLE, e.message)));
    stream.on('close', () => {
      if (failure) return reject(failure);
      if (!status) {
        const code = stream.rstCode === NGHTTP2_REFUSED_STREAM ? UNAVAILABLE : INTERNAL;
        return reject(grpcError(code, `stream closed with RST_STREAM code ${stream.rstCode} and no status`));
      }
      const code = Number(status['grpc-status']);
      if (code !== 0) return reject(grpcError(code, decodeMessage(status['grpc-message'])));
      try {
        resolve(decode(message(chunks)));
      } catch (e) {
        reject(grpcError(INTERNAL, (e as Error).message));
      }
    });
  });
}

/** The message of an answer's data: one uncompressed gRPC frame. */
function message(chunks: Buffer[]): Buffer {
  const data = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks);
  if (data.length < 5 || data[0] !== 0) throw new Error('unexpected gRPC frame (compressed or truncated)');
  const length = data.readUInt32BE(1);
  if (data.length !== 5 + length) throw new Error(`gRPC frame of ${length} bytes in ${data.length - 5}`);
  return data.subarray(5);
}

/** A status's grpc-message, percent-decoded (as sent when it can be). */
export function decodeMessage(m: string | string[] | undefined): string {
  const s = Array.isArray(m) ? m.join(',') : (m ?? '');
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}
