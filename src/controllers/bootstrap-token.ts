/**
 * Bootstrap token secrets (upstream k8s.io/cluster-bootstrap): `bootstrap-token-<id>` in the
 * system namespace, type `bootstrap.<product>.io/token`, data base64-encoded: token-id (6),
 * token-secret (16), expiration (RFC 3339), usage-bootstrap-signing, ... Shared by the
 * TokenCleaner and the BootstrapSigner.
 */
import type { Identity } from '../api/identity.js';
import type { Secret } from '../api/kinds.js';

export const SECRET_PREFIX = 'bootstrap-token-';
const ID = /^[a-z0-9]{6}$/;
const SECRET = /^[a-z0-9]{16}$/;

export interface BootstrapToken {
  id: string;
  secret: string;
  /** ms since the epoch; undefined = never expires */
  expires: number | undefined;
  /** `usage-bootstrap-signing: "true"` */
  signing: boolean;
  uid: string;
  resourceVersion: string;
}

export const tokenSecretType = (identity: Identity): string => `bootstrap.${identity.product}.io/token`;

function field(data: Record<string, unknown>, key: string): string {
  const v = data[key];
  return typeof v === 'string' ? Buffer.from(v, 'base64').toString('utf8') : '';
}

/** Parses an expiration; NaN (unparsable) is treated as expired, as upstream's cleaner deletes such tokens. */
export function parseExpiration(v: string): number | undefined {
  if (!v) return undefined;
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/.test(v)) return Number.NaN;
  return Date.parse(v);
}

/** The token a secret carries, or undefined when it is not a bootstrap token secret. */
export function bootstrapToken(secret: Secret | undefined, identity: Identity): BootstrapToken | undefined {
  if (secret?.type !== tokenSecretType(identity) || secret?.metadata?.namespace !== identity.systemNamespace)
    return undefined;
  const data = secret.data && typeof secret.data === 'object' ? secret.data : {};
  return {
    id: field(data, 'token-id'),
    secret: field(data, 'token-secret'),
    expires: parseExpiration(field(data, 'expiration')),
    signing: field(data, 'usage-bootstrap-signing') === 'true',
    uid: String(secret.metadata.uid ?? ''),
    resourceVersion: String(secret.metadata.resourceVersion ?? ''),
  };
}

/** upstream validateSecretForSigning: a well-formed, unexpired signing token named after its id. */
export function validForSigning(name: string, t: BootstrapToken, now: number): boolean {
  return ID.test(t.id) && SECRET.test(t.secret) && name === SECRET_PREFIX + t.id && t.signing && !isExpired(t, now);
}

export function isExpired(t: BootstrapToken, now: number): boolean {
  return t.expires !== undefined && !(t.expires > now);
}
