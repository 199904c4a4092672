/**
 * The TLS front used when client certificates are enabled (`--client-ca-file`). The pinned
 * uWebSockets.js build cannot hand the peer certificate to JavaScript, so a node:tls server
 * terminates TLS (requestCert, chain verified against the client CAs, expiry included) and
 * forwards each connection's bytes to an internal uWS listener on a unix socket in a private
 * directory. Every request head gets one header carrying the connection's verified identity,
 * prefixed by a per-process secret; client copies of that header are dropped.
 * Responses are piped back unchanged (watch streams included).
 */
import { X509Certificate } from 'node:crypto';
import { connect, type Socket } from 'node:net';
import { createServer, type DetailedPeerCertificate, type Server, type TLSSocket } from 'node:tls';
import { Worker } from 'node:worker_threads';
import { RequestFramer } from './http-framer.js';
import { certificateSubject } from '../x509/name.js';
import {
  CLIENT_IDENTITY_HEADER,
  FRONT_HEADER_PREFIX,
  REMOTE_ADDRESS_HEADER,
  encodeClientIdentity,
  userFromSubject,
} from './x509.js';
import type { ClientCertificate, ProxyVerdict } from '../api/user.js';
import type { KubeletDialMaterial } from '../kubelet/client.js';
import { isFollowedLogRequest, startUpgrade, type Tunnel } from './upgrade-proxy.js';

export interface TerminatorOptions {
  host: string;
  port: number;
  key: Buffer;
  cert: Buffer;
  /** `--client-ca-file` bundle (may be empty when only the proxy CA is given) */
  clientCA: Buffer;
  /** `--requestheader-client-ca-file` bundle, and `--requestheader-allowed-names` */
  requestHeaderCA?: Buffer;
  requestHeaderAllowedNames?: string[];
  /** unix socket of the internal uWS listener */
  upstreamPath: string;
  /** hex of the per-process secret the internal listener checks */
  secretHex: string;
  /** how to dial node agents for exec/attach/portforward upgrades and pods/log streams */
  kubelet?: KubeletDialMaterial;
  /**
   * a connection whose handshake, or whose begun request head, is not complete by then is
   * closed (default 32 s: upstream's ReadHeaderTimeout, which also bounds its handshake)
   */
  readHeaderTimeoutMs?: number;
}

const READ_HEADER_TIMEOUT_MS = 32_000;

/** SHA-256 fingerprints (as node:tls reports them) of every certificate of a PEM bundle. */
export function bundleFingerprints(pem: Buffer | undefined): Set<string> {
  const out = new Set<string>();
  for (const block of pem?.toString('utf8').match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ??
    []) {
    out.add(new X509Certificate(block).fingerprint256);
  }
  return out;
}

/** Trust anchors of the two roles a client certificate can play. */
export interface Anchors {
  /** --client-ca-file: the certificate is a user's credential */
  client: Set<string>;
  /** --requestheader-client-ca-file: the connection is an authenticating proxy */
  proxy?: { fingerprints: Set<string>; allowedNames: readonly string[] };
}

export function anchorsOf(o: TerminatorOptions): Anchors {
  const client = bundleFingerprints(o.clientCA);
  if (!o.requestHeaderCA) return { client };
  return {
    client,
    proxy: { fingerprints: bundleFingerprints(o.requestHeaderCA), allowedNames: o.requestHeaderAllowedNames ?? [] },
  };
}

/**
 * The handshake verified the chain against both bundles together (as upstream's serving pool);
 * which bundle anchors it is read from the verified chain's fingerprints.
 */
function chainFingerprints(sock: TLSSocket): Set<string> {
  const out = new Set<string>();
  let c: DetailedPeerCertificate | undefined = sock.getPeerCertificate(true);
  for (let i = 0; c?.fingerprint256 && i < 16 && !out.has(c.fingerprint256); i++) {
    out.add(c.fingerprint256);
    c = c.issuerCertificate;
  }
  return out;
}

const anchored = (chain: Set<string>, anchors: Set<string>) => [...chain].some((f) => anchors.has(f));

/**
 * What a connection's certificate says, as authentication will see it. The subject is read from
 * the certificate's DER by the server's one name parser (Go's reading: the last CN, every O;
 * string types Go refuses fail), never from OpenSSL's rendering of it, so the identity is the
 * one the CSR signer and approver checked. Throws NameError for a certificate Go would refuse
 * to parse (upstream's handshake fails).
 */
export function peerIdentity(sock: TLSSocket, anchors?: Anchors): ClientCertificate | undefined {
  const cert = sock.getPeerCertificate();
  if (!cert || Object.keys(cert).length === 0) return undefined;
  const name = certificateSubject(cert.raw);
  const subject = name.commonName ? `"${name.commonName}"` : 'without common name';
  if (!sock.authorized) {
    const reason = `verifying certificate ${subject} failed: ${String(sock.authorizationError)}`;
    return anchors?.proxy ? { verified: false, reason, proxy: { ok: false, reason } } : { verified: false, reason };
  }
  const chain = anchors ? chainFingerprints(sock) : undefined;
  let proxy: ProxyVerdict | undefined;
  if (anchors?.proxy) {
    const p = anchors.proxy;
    if (!anchored(chain!, p.fingerprints))
      proxy = { ok: false, reason: `certificate ${subject} is not signed by the requestheader client CA` };
    else if (p.allowedNames.length && !p.allowedNames.includes(name.commonName)) {
      proxy = { ok: false, reason: `x509: subject with cn=${name.commonName} is not in the allowed list` };
    } else proxy = { ok: true };
  }
  const withProxy = (c: ClientCertificate): ClientCertificate => (proxy ? { ...c, proxy } : c);
  if (anchors && !anchored(chain!, anchors.client))
    return withProxy({ verified: false, reason: `certificate ${subject} is not signed by the client CA` });
  const user = userFromSubject(name);
  return withProxy(
    user ? { verified: true, user } : { verified: false, reason: 'client certificate has no common name' },
  );
}

function relay(sock: TLSSocket, o: TerminatorOptions, anchors: Anchors | undefined): void {
  let identity: ClientCertificate | undefined;
  try {
    identity = peerIdentity(sock, anchors);
  } catch {
    // upstream's TLS stack refuses a client certificate it cannot parse: no request is served
    sock.destroy();
    return;
  }
  const inject = injectedHeaders(o.secretHex, identity, sock.remoteAddress);
  const up = connect({ path: o.upstreamPath });
  up.setNoDelay?.(true);
  let tunnel: Tunnel | undefined;
  const framer = new RequestFramer(FRONT_HEADER_PREFIX, inject, {
    write: (b) => {
      if (tunnel) tunnel.write(b);
      else if (!up.write(b)) sock.pause();
    },
    takesOver: isFollowedLogRequest,
    upgrade: (head) => {
      tunnel = takeOver(up, sock, head, o);
    },
    fail: (code, message) => {
      sock.end(plainResponse(code, message));
      up.destroy();
    },
  });
  up.on('drain', () => sock.resume());
  // one writev per TLS read: a head and the body bytes that came with it reach uWS together,
  // as they would over a direct connection (uWS closes a connection whose request was answered
  // before its body arrived)
  sock.on('data', (chunk: Buffer) => {
    up.cork();
    framer.push(chunk);
    up.uncork();
    watchHead();
  });
  // a begun head must complete in time (a client trickling a head holds a descriptor)
  const watchHead = headDeadline(sock, up, framer, o.readHeaderTimeoutMs ?? READ_HEADER_TIMEOUT_MS);
  up.pipe(sock);
  sock.on('end', () => {
    if (!tunnel) up.end();
  });
  sock.on('error', () => up.destroy());
  sock.on('close', () => up.destroy());
  // after a reset the bytes already piped still go out before the TLS close
  up.on('error', () => closeAfterFlush(sock));
  // uWS may close right after a response (e.g. a 401 before the body was read) or when a head
  // never completes (its idle timeout): end, not destroy, so the response bytes already piped
  // into the TLS socket are still delivered, then close it once they are flushed, so a client
  // that never closes its side keeps no half-closed socket here
  up.on('close', () => closeAfterFlush(sock));
}

/** The connection now belongs to the upgrade: the internal connection is let go, the tunnel starts. */
function takeOver(up: Socket, sock: TLSSocket, head: Buffer, o: TerminatorOptions): Tunnel {
  up.unpipe(sock);
  up.removeAllListeners('close').removeAllListeners('error').removeAllListeners('drain');
  up.on('error', () => {});
  up.end();
  return startUpgrade(sock, head, {
    upstreamPath: o.upstreamPath,
    secretHex: o.secretHex,
    identityHeader: CLIENT_IDENTITY_HEADER,
    ...(o.kubelet ? { kubelet: o.kubelet } : {}),
  });
}

/** The headers the front adds to each request head: the sealed client identity and the peer's address. */
function injectedHeaders(
  secretHex: string,
  identity: ClientCertificate | undefined,
  remote: string | undefined,
): string {
  return (
    (identity ? `${CLIENT_IDENTITY_HEADER}: ${encodeClientIdentity(secretHex, identity)}\r\n` : '') +
    (remote ? `${REMOTE_ADDRESS_HEADER}: ${secretHex} ${remote}\r\n` : '')
  );
}

/** The front's own refusal of a malformed or oversized head (the connection closes after it). */
function plainResponse(code: number, message: string): string {
  const reason = code === 431 ? 'Request Header Fields Too Large' : 'Bad Request';
  return `HTTP/1.1 ${code} ${reason}\r\nConnection: close\r\nContent-Type: text/plain\r\nContent-Length: ${message.length}\r\n\r\n${message}`;
}

/**
 * Returns the check to run after each read: while a head is begun and incomplete, a timer closes
 * both sides at the deadline; once none is pending, the timer is cleared.
 */
function headDeadline(sock: TLSSocket, up: Socket, framer: RequestFramer, ms: number): () => void {
  let headTimer: NodeJS.Timeout | undefined;
  sock.on('close', () => clearTimeout(headTimer));
  return () => {
    if (!framer.headPending()) {
      clearTimeout(headTimer);
      headTimer = undefined;
      return;
    }
    headTimer ??= setTimeout(() => {
      sock.destroy();
      up.destroy();
    }, ms);
  };
}

/** Ends the client socket (if not yet) and destroys it once everything written is flushed. */
function closeAfterFlush(sock: TLSSocket): void {
  if (sock.destroyed) return;
  if (!sock.writableEnded) sock.end();
  if (sock.writableFinished) sock.destroy();
  else sock.once('finish', () => sock.destroy());
}

/** Listens; resolves with the bound port. */
export function startTlsTerminator(o: TerminatorOptions): Promise<{ server: Server; port: number }> {
  // the fingerprint checks are only needed when two bundles share the handshake
  const anchors = o.requestHeaderCA ? anchorsOf(o) : undefined;
  const ca = o.requestHeaderCA ? Buffer.concat([o.clientCA, Buffer.from('\n'), o.requestHeaderCA]) : o.clientCA;
  const server = createServer(
    {
      key: o.key,
      cert: o.cert,
      ca,
      requestCert: true,
      rejectUnauthorized: false,
      ALPNProtocols: ['http/1.1'],
      // node's default is 120 s: a client that never sends its ClientHello holds a descriptor that long
      handshakeTimeout: o.readHeaderTimeoutMs ?? READ_HEADER_TIMEOUT_MS,
    },
    (sock) => relay(sock, o, anchors),
  );
  // a failed or timed-out handshake only concerns that client, whose socket goes (node leaves
  // it open once a listener is attached)
  server.on('tlsClientError', (_e, sock) => sock.destroy());
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(o.port, o.host, () => {
      server.off('error', reject);
      resolve({ server, port: (server.address() as { port: number }).port });
    });
  });
}

/** Runs the terminator in a worker thread; resolves with the bound port and a stop function. */
export function startTlsTerminatorThread(o: TerminatorOptions): Promise<{ port: number; stop: () => Promise<void> }> {
  const worker = new Worker(new URL('./tls-terminator-worker.js', import.meta.url), { workerData: o });
  return new Promise((resolve, reject) => {
    worker.once('error', reject);
    worker.once('exit', (code) => reject(new Error(`TLS front thread exited with ${code}`)));
    worker.once('message', (m: { port?: number; error?: string }) => {
      if (m.error !== undefined) {
        void worker.terminate();
        return reject(new Error(m.error));
      }
      worker.unref();
      // a dead front means a dead secure port: fail loudly rather than serve half the listeners
      worker.removeAllListeners('exit').removeAllListeners('error');
      worker.on('error', (e: Error) => {
        process.stderr.write(`error: TLS front thread failed: ${e.stack ?? e}\n`);
        process.exit(1);
      });
      resolve({
        port: m.port!,
        stop: async () => {
          worker.removeAllListeners('error');
          await worker.terminate();
        },
      });
    });
  });
}
