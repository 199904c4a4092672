/**
 * The HTTPS listener (`--secure-port`). Without client CAs (`--client-ca-file`, the generated
 * cluster CA) or a requestheader CA, uWS terminates TLS itself (SSLApp): the fastest path,
 * bearer tokens only. With them, the node:tls front
 * (tls-terminator.ts) terminates TLS and verifies client certificates, and forwards to an
 * internal uWS listener on a unix socket in a private directory; that listener trusts the
 * identity header only with this process's secret. Either way the same handler serves.
 */
import uWS from 'uWebSockets.js';
import type { HttpRequest, HttpResponse, TemplatedApp, us_listen_socket } from 'uWebSockets.js';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Credentials } from '../api/user.js';
import { listenError, reasonOf } from '../api/startup-error.js';
import type { ServingFiles } from './pki.js';
import { CLIENT_IDENTITY_HEADER, REMOTE_ADDRESS_HEADER, clientIdentityReader, remoteAddressOf } from './x509.js';
import { startTlsTerminator, startTlsTerminatorThread } from './tls-terminator.js';
import { allHeaders, userFromHeaders, type RequestHeaderConfig } from './request-header.js';
import type { KubeletDialMaterial } from '../kubelet/client.js';
import { TAKEN_OVER_HEADER, encodeUpgradeDirective, type UpgradeTarget } from '../kubelet/upgrade-directive.js';

function readFlagFile(flag: string, path: string): Buffer {
  try {
    return readFileSync(path);
  } catch (e) {
    throw new Error(`--${flag}: cannot read ${path}: ${reasonOf(e)} (give a readable PEM file with --${flag})`);
  }
}

/**
 * credentials: what the connection presented; takenOver: whether the TLS front took the
 * request's connection over (an upgrade, or a pods/log it streams itself), read from the head
 */
export type SecureHandler = (
  res: HttpResponse,
  req: HttpRequest,
  credentials: (req: HttpRequest) => Credentials,
  takenOver: (req: HttpRequest) => boolean,
) => void;

export interface SecureListener {
  port: number;
  /** 'uws' (SSLApp) or 'terminator' (node:tls front + internal uWS listener) */
  mode: 'uws' | 'terminator';
  /** the directive header value handing an upgrade to the TLS front (terminator mode only) */
  upgradeDirective?: (t: UpgradeTarget) => string;
  close(): void;
}

export interface SecureListenerOptions {
  host: string;
  port: number;
  serving: ServingFiles;
  /** CA bundles trusted for client certificates (`--client-ca-file`, the generated cluster CA) */
  clientCAFiles: { flag: string; path: string }[];
  /** authenticating proxy (`--requestheader-*`), when its CA file is given */
  requestHeader?: RequestHeaderConfig & { clientCAFile: string; allowedNames: string[] };
  /** how the TLS front dials node agents for streaming upgrades */
  kubelet?: KubeletDialMaterial;
  /** the TLS front's deadline for a handshake and for a begun request head (--read-header-timeout) */
  readHeaderTimeoutMs?: number;
  /** the TLS front on the main thread instead of its own (hidden --tls-front-inline, for benchmarking) */
  inlineFront?: boolean;
}

function listen(app: TemplatedApp, host: string, port: number): Promise<us_listen_socket> {
  return new Promise((resolve, reject) =>
    app.listen(host, port, (sock) => (sock ? resolve(sock) : void listenError('secure-port', host, port).then(reject))),
  );
}

const bearerOnly = (req: HttpRequest): Credentials => ({ authorization: req.getHeader('authorization') });

/**
 * The credentials of a request the TLS front relayed: its bearer token, the client certificate's
 * identity (carried in a header sealed with the front's secret) and, from a trusted
 * authenticating proxy, the user its headers name.
 */
function certificateCredentials(
  secretHex: string,
  rh: SecureListenerOptions['requestHeader'],
): (req: HttpRequest) => Credentials {
  const readIdentity = clientIdentityReader(Buffer.from(secretHex, 'hex'));
  return (req) => {
    const cert = readIdentity(req.getHeader(CLIENT_IDENTITY_HEADER));
    const c: Credentials = {
      authorization: req.getHeader('authorization'),
      clientCertificate: cert,
      remoteAddress: remoteAddressOf(secretHex, req.getHeader(REMOTE_ADDRESS_HEADER)),
    };
    // the headers are read only on a connection the front found to be a trusted proxy
    if (rh && cert?.proxy)
      c.proxy = cert.proxy.ok ? { ok: true, user: userFromHeaders(allHeaders(req), rh) } : cert.proxy;
    return c;
  };
}

/** Starts the TLS front (its own thread, or inline with --tls-front-inline) relaying to upstreamPath. */
async function startFront(
  o: SecureListenerOptions,
  p: { clientCA: Buffer; requestHeaderCA: Buffer | undefined; upstreamPath: string; secretHex: string },
): Promise<{ port: number; stop: () => Promise<void> }> {
  const t = {
    host: o.host,
    port: o.port,
    key: readFileSync(o.serving.keyFile),
    cert: readFileSync(o.serving.certFile),
    clientCA: p.clientCA,
    requestHeaderCA: p.requestHeaderCA,
    requestHeaderAllowedNames: o.requestHeader?.allowedNames,
    upstreamPath: p.upstreamPath,
    secretHex: p.secretHex,
    ...(o.kubelet ? { kubelet: o.kubelet } : {}),
    ...(o.readHeaderTimeoutMs ? { readHeaderTimeoutMs: o.readHeaderTimeoutMs } : {}),
  };
  if (!o.inlineFront) return startTlsTerminatorThread(t);
  const { server, port } = await startTlsTerminator(t);
  return {
    port,
    stop: async () => {
      server.close();
    },
  };
}

export async function startSecureListener(o: SecureListenerOptions, handle: SecureHandler): Promise<SecureListener> {
  const rh = o.requestHeader;
  if (o.clientCAFiles.length === 0 && !rh) {
    const app = uWS.SSLApp({ key_file_name: o.serving.keyFile, cert_file_name: o.serving.certFile });
    app.any('/*', (res, req) => handle(res, req, bearerOnly, () => false));
    const sock = await listen(app, o.host, o.port);
    return { port: uWS.us_socket_local_port(sock), mode: 'uws', close: () => uWS.us_listen_socket_close(sock) };
  }
  const clientCA = Buffer.concat(o.clientCAFiles.flatMap((f) => [readFlagFile(f.flag, f.path), Buffer.from('\n')]));
  const requestHeaderCA = rh ? readFlagFile('requestheader-client-ca-file', rh.clientCAFile) : undefined;
  const secret = randomBytes(16);
  const secretHex = secret.toString('hex');
  const withCertificate = certificateCredentials(secretHex, rh);
  const dir = mkdtempSync(join(tmpdir(), 'plat-front-'));
  const path = join(dir, 'front.sock');
  const app = uWS.App();
  const takenOver = (req: HttpRequest) => req.getHeader(TAKEN_OVER_HEADER) === secretHex;
  app.any('/*', (res, req) => handle(res, req, withCertificate, takenOver));
  const sock = await new Promise<us_listen_socket>((resolve, reject) =>
    app.listen_unix((s) => (s ? resolve(s) : reject(new Error(`cannot listen on ${path}`))), path),
  );
  let front: { port: number; stop: () => Promise<void> };
  try {
    front = await startFront(o, { clientCA, requestHeaderCA, upstreamPath: path, secretHex });
  } catch (e) {
    uWS.us_listen_socket_close(sock);
    rmSync(dir, { recursive: true, force: true });
    // the TLS front (node:tls, in a thread: only the message crosses) names the errno of a failed bind
    if (/\b(EADDRINUSE|EACCES|EADDRNOTAVAIL)\b/.test(`${(e as { code?: unknown }).code} ${(e as Error).message}`))
      throw await listenError('secure-port', o.host, o.port);
    throw e;
  }
  return {
    port: front.port,
    mode: 'terminator',
    upgradeDirective: (t) => encodeUpgradeDirective(secret.toString('hex'), t),
    close: () => {
      void front.stop();
      uWS.us_listen_socket_close(sock);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
