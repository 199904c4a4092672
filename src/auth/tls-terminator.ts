/**
 * The TLS front used when client certificates are enabled (`--client-ca-file`). The pinned
 * uWebSockets.js build cannot hand the peer certificate to JavaScript, so a node:tls server
 * terminates TLS (requestCert, chain verified against the client CAs, expiry included) and
 * forwards each connection's bytes to an internal uWS listener on a unix socket in a private
 * directory. Every request head gets one header carrying the connection's verified identity,
 * prefixed by a per-process secret; client copies of that header are dropped.
 * Responses are piped back unchanged (watch streams included).
 */
import { connect } from 'node:net';
import { createServer, type Server, type TLSSocket } from 'node:tls';
import { Worker } from 'node:worker_threads';
import { RequestFramer } from './http-framer.js';
import { CLIENT_IDENTITY_HEADER, encodeClientIdentity, userFromSubject } from './x509.js';
import type { ClientCertificate } from './types.js';

export interface TerminatorOptions {
  host: string;
  port: number;
  key: Buffer;
  cert: Buffer;
  clientCA: Buffer;
  /** unix socket of the internal uWS listener */
  upstreamPath: string;
  /** hex of the per-process secret the internal listener checks */
  secretHex: string;
}

/** What a connection's certificate says, as authentication will see it. */
export function peerIdentity(sock: TLSSocket): ClientCertificate | undefined {
  const cert = sock.getPeerCertificate();
  if (!cert || Object.keys(cert).length === 0) return undefined;
  if (!sock.authorized) {
    const subject = cert.subject?.CN ? `"${cert.subject.CN}"` : 'without common name';
    return { verified: false, reason: `verifying certificate ${subject} failed: ${String(sock.authorizationError)}` };
  }
  const user = userFromSubject(cert.subject as unknown as Record<string, string | string[]>);
  return user ? { verified: true, user } : { verified: false, reason: 'client certificate has no common name' };
}

function relay(sock: TLSSocket, o: TerminatorOptions): void {
  const identity = peerIdentity(sock);
  const inject = identity ? `${CLIENT_IDENTITY_HEADER}: ${encodeClientIdentity(o.secretHex, identity)}\r\n` : '';
  const up = connect({ path: o.upstreamPath });
  up.setNoDelay?.(true);
  const framer = new RequestFramer(CLIENT_IDENTITY_HEADER, inject, {
    write: (b) => { if (!up.write(b)) sock.pause(); },
    fail: (code, message) => {
      sock.end(`HTTP/1.1 ${code} ${code === 431 ? 'Request Header Fields Too Large' : 'Bad Request'}\r\nConnection: close\r\nContent-Type: text/plain\r\nContent-Length: ${message.length}\r\n\r\n${message}`);
      up.destroy();
    },
  });
  up.on('drain', () => sock.resume());
  // one writev per TLS read: a head and the body bytes that came with it reach uWS together,
  // as they would over a direct connection (uWS closes a connection whose request was answered
  // before its body arrived)
  sock.on('data', (chunk: Buffer) => { up.cork(); framer.push(chunk); up.uncork(); });
  up.pipe(sock);
  sock.on('end', () => up.end());
  sock.on('error', () => up.destroy());
  sock.on('close', () => up.destroy());
  // after a reset the bytes already piped still go out before the TLS close
  up.on('error', () => { if (!sock.writableEnded) sock.end(); });
  // uWS may close right after a response (e.g. a 401 before the body was read): end, not
  // destroy, so the response bytes already piped into the TLS socket are still delivered
  up.on('close', () => { if (!sock.writableEnded) sock.end(); });
}

/** Listens; resolves with the bound port. */
export function startTlsTerminator(o: TerminatorOptions): Promise<{ server: Server; port: number }> {
  const server = createServer({
    key: o.key, cert: o.cert, ca: o.clientCA, requestCert: true, rejectUnauthorized: false, ALPNProtocols: ['http/1.1'],
  }, (sock) => relay(sock, o));
  // a failed handshake only concerns that client
  server.on('tlsClientError', () => {});
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
      if (m.error !== undefined) { void worker.terminate(); return reject(new Error(m.error)); }
      worker.unref();
      // a dead front means a dead secure port: fail loudly rather than serve half the listeners
      worker.removeAllListeners('exit').removeAllListeners('error');
      worker.on('error', (e: Error) => {
        process.stderr.write(`error: TLS front thread failed: ${e.stack ?? e}\n`);
        process.exit(1);
      });
      resolve({ port: m.port!, stop: async () => { worker.removeAllListeners('error'); await worker.terminate(); } });
    });
  });
}
