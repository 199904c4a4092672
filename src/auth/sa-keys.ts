/**
 * Service account keys: PEM files holding RSA or ECDSA keys (public or private, several per
 * file) for verification, one private key for signing, and the OpenID discovery documents
 * built from them once at start.
 */
import { createHash, createPrivateKey, createPublicKey, generateKeyPairSync, type KeyObject } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { exportJWK, type JWK } from 'jose';

export interface VerifyKey {
  kid: string;
  alg: string;
  key: KeyObject;
}
export interface SigningKey {
  kid: string;
  alg: string;
  key: KeyObject;
}

const KEY_BLOCKS = new Set(['PUBLIC KEY', 'RSA PUBLIC KEY', 'PRIVATE KEY', 'RSA PRIVATE KEY', 'EC PRIVATE KEY']);

/** The JWS algorithm for a key: RS256 for RSA, ES256/384/512 by curve for ECDSA. */
export function algorithmOf(key: KeyObject): string {
  if (key.asymmetricKeyType === 'rsa') return 'RS256';
  if (key.asymmetricKeyType === 'ec') {
    const curve = key.asymmetricKeyDetails?.namedCurve;
    const alg = ({ prime256v1: 'ES256', secp384r1: 'ES384', secp521r1: 'ES512' } as Record<string, string>)[
      curve ?? ''
    ];
    if (alg) return alg;
    throw new Error(`unsupported ECDSA curve ${curve}`);
  }
  throw new Error(`unsupported key type ${key.asymmetricKeyType}: RSA or ECDSA required`);
}

/** Upstream's key id: unpadded base64url of the SHA-256 of the PKIX (DER) public key. */
export function keyId(publicKey: KeyObject): string {
  return createHash('sha256')
    .update(publicKey.export({ type: 'spki', format: 'der' }))
    .digest('base64url');
}

/** Every public key of a PEM text; other blocks (EC PARAMETERS, certificates) are skipped. */
export function parsePublicKeys(pem: string, source: string): VerifyKey[] {
  const out: VerifyKey[] = [];
  const re = /-----BEGIN ([A-Z ]+)-----[\s\S]*?-----END \1-----/g;
  let m: RegExpExecArray | null;
  while ((m = re.exec(pem))) {
    if (!KEY_BLOCKS.has(m[1]!)) continue;
    let key: KeyObject;
    try {
      key = createPublicKey(m[0]);
    } catch (e) {
      throw new Error(`${source}: ${m[1]} block: ${(e as Error).message}`);
    }
    out.push({ kid: keyId(key), alg: algorithmOf(key), key });
  }
  if (out.length === 0) throw new Error(`${source}: data does not contain any valid RSA or ECDSA public keys`);
  return out;
}

export function loadVerifyKeys(files: readonly string[]): VerifyKey[] {
  const byKid = new Map<string, VerifyKey>();
  for (const f of files) {
    let text: string;
    try {
      text = readFileSync(f, 'utf8');
    } catch (e) {
      throw new Error(`--service-account-key-file: cannot read ${f}: ${(e as Error).message}`);
    }
    for (const k of parsePublicKeys(text, `--service-account-key-file ${f}`)) byKid.set(k.kid, k);
  }
  return [...byKid.values()];
}

export function loadSigningKey(file: string): SigningKey {
  let key: KeyObject;
  try {
    key = createPrivateKey(readFileSync(file, 'utf8'));
  } catch (e) {
    throw new Error(`--service-account-signing-key-file ${file}: ${(e as Error).message}`);
  }
  try {
    return { kid: keyId(createPublicKey(key)), alg: algorithmOf(key), key };
  } catch (e) {
    throw new Error(`--service-account-signing-key-file ${file}: ${(e as Error).message}`);
  }
}

/** `/openid/v1/jwks`: the public verification keys. */
export async function jwksDocument(keys: readonly VerifyKey[]): Promise<{ keys: JWK[] }> {
  const out: JWK[] = [];
  for (const k of keys) out.push({ ...(await exportJWK(k.key)), kid: k.kid, use: 'sig', alg: k.alg });
  return { keys: out };
}

/** `/.well-known/openid-configuration` for the issuer (upstream fields). */
export function openidConfiguration(
  issuer: string,
  jwksUri: string,
  keys: readonly VerifyKey[],
): Record<string, unknown> {
  return {
    issuer,
    jwks_uri: jwksUri,
    response_types_supported: ['id_token'],
    subject_types_supported: ['public'],
    id_token_signing_alg_values_supported: [...new Set(keys.map((k) => k.alg))].sort(),
  };
}

/** The default issuer when no `--service-account-*` flag is given, as upstream's in-cluster name. */
export function defaultIssuer(product: string): string {
  return `https://${product}.default.svc.cluster.local`;
}

/**
 * The generated signing key (`<cert-dir>/service-account.key`): an ECDSA P-256 key in PKCS#8
 * PEM, created on first start (mode 0600, fast enough for every start of a fresh directory)
 * and reused on later starts so issued tokens stay valid.
 */
export function ensureServiceAccountKey(file: string): string {
  if (existsSync(file)) return file;
  mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
  const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  writeFileSync(file, privateKey.export({ type: 'pkcs8', format: 'pem' }), { mode: 0o600, flag: 'wx' });
  return file;
}
