/**
 * Client certificates: the subject CN is the username, each O a group. The chain is verified
 * by the TLS front (src/auth/tls-terminator.ts) against `--client-ca-file`; it hands the result
 * to the uWS listener in one header whose value starts with a per-process secret.
 */
import { timingSafeEqual } from 'node:crypto';
import type { Name } from '../x509/name.js';
import { NOT_MINE, type AuthResult, type Authenticator, type ClientCertificate, type UserInfo } from '../api/user.js';

/** Internal header carrying the verified identity from the TLS front; stripped from client requests. */
export const CLIENT_IDENTITY_HEADER = 'x-plat-tls-client-identity';
/** The TLS front's header with the client's address (`<secret hex> <address>`), for audit sourceIPs and the request log. */
export const REMOTE_ADDRESS_HEADER = 'x-plat-tls-remote-address';
/** Every header the TLS front adds starts so; the front drops client copies of all of them. */
export const FRONT_HEADER_PREFIX = 'x-plat-tls-';

/** The address in the front's header, when it carries the secret (else undefined). */
export function remoteAddressOf(secretHex: string, value: string): string | undefined {
  return value.startsWith(`${secretHex} `) ? value.slice(secretHex.length + 1) : undefined;
}

/**
 * The identity of a certificate subject (upstream x509 CommonNameUserConversion): the CN (Go's
 * reading keeps the last one) is the username, each O a group; no CN is no user.
 */
export function userFromSubject(subject: Name): UserInfo | undefined {
  if (!subject.commonName) return undefined;
  return { username: subject.commonName, groups: [...subject.organization] };
}

/** Header value for a connection: `<secret> <base64url JSON>`. */
export function encodeClientIdentity(secret: string, cert: ClientCertificate): string {
  return `${secret} ${Buffer.from(JSON.stringify(cert)).toString('base64url')}`;
}

/** Reads the header back; a value not starting with the secret is ignored (undefined). */
export function decodeClientIdentity(secret: Buffer, value: string): ClientCertificate | undefined {
  if (value === '') return undefined;
  const sp = value.indexOf(' ');
  if (sp !== secret.length * 2) return undefined;
  const got = Buffer.from(value.slice(0, sp), 'hex');
  if (got.length !== secret.length || !timingSafeEqual(got, secret)) return undefined;
  try {
    return JSON.parse(Buffer.from(value.slice(sp + 1), 'base64url').toString('utf8')) as ClientCertificate;
  } catch {
    return undefined;
  }
}

export function clientCertAuthenticator(): Authenticator {
  return {
    authenticate(c): AuthResult {
      const cert = c.clientCertificate;
      if (!cert) return NOT_MINE;
      return cert.verified ? { kind: 'user', user: cert.user } : { kind: 'error', reason: cert.reason };
    },
  };
}

/**
 * A decoder with a small cache: every request of a connection carries the same value, so the
 * secret check and JSON parse run once per connection rather than once per request.
 */
export function clientIdentityReader(secret: Buffer, max = 1024): (value: string) => ClientCertificate | undefined {
  const cache = new Map<string, ClientCertificate>();
  return (value) => {
    if (value === '') return undefined;
    let c = cache.get(value);
    if (c) return c;
    c = decodeClientIdentity(secret, value);
    if (!c) return undefined;
    if (cache.size >= max) cache.delete(cache.keys().next().value!);
    cache.set(value, c);
    return c;
  };
}
