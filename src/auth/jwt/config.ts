/**
 * AuthenticationConfiguration (`--authentication-config`, apiserver.config.<domain>/v1beta1 or
 * v1alpha1): the JWT authenticator shape (which the `--oidc-*` flags also become, see
 * oidc-flags.ts). Validation follows upstream's ValidateAuthenticationConfiguration and reports every
 * problem with its field path (`jwt[0].issuer.url: Invalid value: ...`).
 */
import { X509Certificate } from 'node:crypto';
import { parse as parseYaml } from 'yaml';
import { compile, usesClaim } from './cel.js';

export interface ClaimOrExpression {
  claim?: string;
  prefix?: string;
  expression?: string;
}
export interface JwtAuthenticatorSpec {
  issuer: {
    url: string;
    discoveryURL?: string;
    certificateAuthority?: string;
    audiences: string[];
    audienceMatchPolicy?: string;
  };
  claimValidationRules?: { claim?: string; requiredValue?: string; expression?: string; message?: string }[];
  claimMappings: {
    username: ClaimOrExpression;
    groups?: ClaimOrExpression;
    uid?: { claim?: string; expression?: string };
    extra?: { key: string; valueExpression: string }[];
  };
  userValidationRules?: { expression: string; message?: string }[];
}

export interface AnonymousSpec {
  enabled: boolean;
  conditions: { path: string }[];
}

export interface AuthenticationConfig {
  jwt: JwtAuthenticatorSpec[];
  anonymous?: AnonymousSpec;
}

export const MAX_JWT_AUTHENTICATORS = 64;
/** every asymmetric algorithm (the file does not restrict them; the flags default to RS256) */
export const ALL_SIGNING_ALGS = ['RS256', 'RS384', 'RS512', 'ES256', 'ES384', 'ES512', 'PS256', 'PS384', 'PS512'];

const q = (v: unknown) => JSON.stringify(v);

/** Collects field errors in upstream's wording. */
class Errors {
  readonly list: string[] = [];
  required(path: string, detail?: string): void {
    this.list.push(`${path}: Required value${detail ? `: ${detail}` : ''}`);
  }
  invalid(path: string, value: unknown, detail: string): void {
    this.list.push(`${path}: Invalid value: ${q(value)}: ${detail}`);
  }
  duplicate(path: string, value: unknown): void {
    this.list.push(`${path}: Duplicate value: ${q(value)}`);
  }
  tooMany(path: string, n: number, max: number): void {
    this.list.push(`${path}: Too many: ${n}: must have at most ${max} items`);
  }
  throwIfAny(): void {
    if (this.list.length === 1) throw new Error(this.list[0]);
    if (this.list.length > 1) throw new Error(`[${this.list.join(', ')}]`);
  }
}

function validateURL(e: Errors, path: string, raw: string): void {
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    return e.invalid(path, raw, 'URL must be a valid URL');
  }
  if (u.protocol !== 'https:') e.invalid(path, raw, 'URL scheme must be https');
  if (u.username || u.password) e.invalid(path, raw, 'URL must not contain a username or password');
  if (u.search || raw.includes('?')) e.invalid(path, raw, 'URL must not contain a query');
  if (u.hash || raw.includes('#')) e.invalid(path, raw, 'URL must not contain a fragment');
}

function validateCEL(e: Errors, path: string, expression: unknown): void {
  if (typeof expression !== 'string' || expression === '') return e.required(path);
  try {
    compile(expression);
  } catch (err) {
    e.invalid(path, expression, (err as Error).message);
  }
}

function pemCertificates(pem: string): number {
  let n = 0;
  for (const block of pem.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? []) {
    try {
      new X509Certificate(block);
      n++;
    } catch {
      /* counted as invalid */
    }
  }
  return n;
}

const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

function validateExtraKey(e: Errors, path: string, key: string, reserved: string[]): void {
  if (key === '') return e.required(path);
  if (key !== key.toLowerCase()) return e.invalid(path, key, 'key must be lowercase');
  const slash = key.indexOf('/');
  const domain = slash < 0 ? '' : key.slice(0, slash);
  if (slash <= 0 || slash === key.length - 1 || domain.length > 253 || !DNS_SUBDOMAIN.test(domain)) {
    return e.invalid(path, key, 'must be a domain-prefixed path (such as "acme.io/foo")');
  }
  if (!/^[A-Za-z0-9\-._~!$&'()*+,;=:@%/]+$/.test(key.slice(slash + 1)))
    return e.invalid(path, key, 'must be a domain-prefixed path (such as "acme.io/foo")');
  if (reserved.some((r) => domain === r || domain.endsWith(`.${r}`))) {
    e.invalid(
      path,
      key,
      `${reserved.join(', ')} and their subdomains are reserved for ${reserved[1]!.split('.')[0]} use`,
    );
  }
}

/**
 * The file as parsed, before validation: every field may be missing or of another type; the
 * lists are used as lists (as upstream's decoder would have required).
 */
interface RawClaimOrExpression {
  claim?: unknown;
  prefix?: unknown;
  expression?: unknown;
}
interface RawIssuer {
  url?: unknown;
  discoveryURL?: unknown;
  certificateAuthority?: unknown;
  audiences?: unknown;
  audienceMatchPolicy?: unknown;
}
interface RawClaimRule {
  claim?: unknown;
  requiredValue?: unknown;
  expression?: unknown;
  message?: unknown;
}
interface RawMappings {
  username?: RawClaimOrExpression;
  groups?: RawClaimOrExpression;
  uid?: RawClaimOrExpression;
  extra?: { key?: unknown; valueExpression?: unknown }[];
}
interface RawJwt {
  issuer?: RawIssuer;
  claimValidationRules?: RawClaimRule[];
  claimMappings?: RawMappings;
  userValidationRules?: { expression?: unknown }[];
}

export interface ValidateContext {
  /** service account issuers: a JWT issuer may not overlap them */
  disallowedIssuers: readonly string[];
  /** reserved extra key domains, e.g. ['plat.io', 'platform.io'] */
  reservedDomains: string[];
}

function validateJwt(
  e: Errors,
  p: string,
  j: RawJwt | undefined,
  ctx: ValidateContext,
  seenIssuers: Set<string>,
  seenDiscovery: Set<string>,
): void {
  validateIssuer(e, p, j?.issuer ?? {}, ctx, seenIssuers, seenDiscovery);
  validateClaimRules(e, p, j?.claimValidationRules ?? []);
  validateMappings(e, p, j?.claimMappings ?? {}, ctx);
  (j?.userValidationRules ?? []).forEach((r, i: number) =>
    validateCEL(e, `${p}.userValidationRules[${i}].expression`, r.expression),
  );
  validateEmailVerified(e, p, j);
}

function validateIssuer(
  e: Errors,
  p: string,
  iss: RawIssuer,
  ctx: ValidateContext,
  seenIssuers: Set<string>,
  seenDiscovery: Set<string>,
): void {
  if (typeof iss.url !== 'string' || iss.url === '') e.required(`${p}.issuer.url`);
  else {
    validateURL(e, `${p}.issuer.url`, iss.url);
    if (seenIssuers.has(iss.url)) e.duplicate(`${p}.issuer.url`, iss.url);
    seenIssuers.add(iss.url);
    if (ctx.disallowedIssuers.includes(iss.url))
      e.invalid(
        `${p}.issuer.url`,
        iss.url,
        `URL must not overlap with disallowed issuers: [${ctx.disallowedIssuers.join(' ')}]`,
      );
  }
  if (iss.discoveryURL !== undefined && iss.discoveryURL !== '') {
    validateURL(e, `${p}.issuer.discoveryURL`, String(iss.discoveryURL));
    if (iss.discoveryURL === iss.url)
      e.invalid(`${p}.issuer.discoveryURL`, iss.discoveryURL, 'discoveryURL must be different from URL');
    if (seenDiscovery.has(iss.discoveryURL as string)) e.duplicate(`${p}.issuer.discoveryURL`, iss.discoveryURL);
    seenDiscovery.add(iss.discoveryURL as string);
  }
  if (
    iss.certificateAuthority !== undefined &&
    iss.certificateAuthority !== '' &&
    pemCertificates(String(iss.certificateAuthority)) === 0
  ) {
    e.invalid(
      `${p}.issuer.certificateAuthority`,
      '<omitted>',
      'data does not contain any valid RSA or ECDSA certificates',
    );
  }
  validateAudiences(e, p, iss);
}

/** issuer.audiences and audienceMatchPolicy, as upstream's validateAudiences. */
function validateAudiences(e: Errors, p: string, iss: RawIssuer): void {
  const auds = iss.audiences;
  if (!Array.isArray(auds) || auds.length === 0)
    e.required(`${p}.issuer.audiences`, `at least one ${p}.issuer.audiences is required`);
  else {
    const seen = new Set<string>();
    auds.forEach((a: unknown, i: number) => {
      if (typeof a !== 'string' || a === '') e.required(`${p}.issuer.audiences[${i}]`, "audience can't be empty");
      else if (seen.has(a)) e.duplicate(`${p}.issuer.audiences[${i}]`, a);
      else seen.add(a);
    });
    if (auds.length > 1 && iss.audienceMatchPolicy !== 'MatchAny') {
      e.invalid(
        `${p}.issuer.audienceMatchPolicy`,
        iss.audienceMatchPolicy ?? '',
        'audienceMatchPolicy must be MatchAny for multiple audiences',
      );
    }
    if (
      auds.length === 1 &&
      iss.audienceMatchPolicy !== undefined &&
      iss.audienceMatchPolicy !== '' &&
      iss.audienceMatchPolicy !== 'MatchAny'
    ) {
      e.invalid(
        `${p}.issuer.audienceMatchPolicy`,
        iss.audienceMatchPolicy,
        'audienceMatchPolicy must be empty or MatchAny for single audience',
      );
    }
  }
}

function validateClaimRules(e: Errors, p: string, rules: RawClaimRule[]): void {
  const seenClaims = new Set<string>();
  rules.forEach((r, i: number) => {
    const rp = `${p}.claimValidationRules[${i}]`;
    if (r.claim && r.expression) return e.invalid(rp, r.claim, "claim and expression can't both be set");
    if (!r.claim && !r.expression) return e.required(`${rp}.claim`, 'claim or expression is required');
    if (r.claim) {
      if (seenClaims.has(r.claim as string)) e.duplicate(`${rp}.claim`, r.claim);
      seenClaims.add(r.claim as string);
      if (r.message) e.invalid(`${rp}.message`, r.message, 'may not be specified when claim is set');
    } else {
      if (r.requiredValue)
        e.invalid(`${rp}.requiredValue`, r.requiredValue, 'may not be specified when expression is set');
      validateCEL(e, `${rp}.expression`, r.expression);
    }
  });
}

function validateMappings(e: Errors, p: string, cm: RawMappings, ctx: ValidateContext): void {
  const u = cm.username ?? {};
  const up = `${p}.claimMappings.username`;
  if (!u.claim && !u.expression) e.required(up, 'claim or expression is required');
  else if (u.claim && u.expression) e.invalid(up, '', "claim and expression can't both be set");
  else if (u.claim) {
    if (u.prefix === undefined)
      e.required(
        `${up}.prefix`,
        'prefix is required when claim is set. It can be set to an empty string to disable prefixing',
      );
  } else {
    if (u.prefix !== undefined) e.invalid(`${up}.prefix`, u.prefix, 'may not be specified when expression is set');
    validateCEL(e, `${up}.expression`, u.expression);
  }
  for (const [name, m] of [
    ['groups', cm.groups],
    ['uid', cm.uid],
  ] as const) {
    if (!m) continue;
    const mp = `${p}.claimMappings.${name}`;
    if (m.claim && m.expression) e.invalid(mp, '', "claim and expression can't both be set");
    else if (m.expression) {
      if (name === 'groups' && m.prefix !== undefined)
        e.invalid(`${mp}.prefix`, m.prefix, 'may not be specified when expression is set');
      validateCEL(e, `${mp}.expression`, m.expression);
    }
  }
  const keys = new Set<string>();
  (cm.extra ?? []).forEach((x, i: number) => {
    const xp = `${p}.claimMappings.extra[${i}]`;
    validateExtraKey(e, `${xp}.key`, String(x.key ?? ''), ctx.reservedDomains);
    if (keys.has(x.key as string)) e.duplicate(`${xp}.key`, x.key);
    keys.add(x.key as string);
    validateCEL(e, `${xp}.valueExpression`, x.valueExpression);
  });
}

/** The email-verified rule: a username expression reading claims.email needs claims.email_verified somewhere. */
function validateEmailVerified(e: Errors, p: string, j: RawJwt | undefined): void {
  const cm = j?.claimMappings ?? {};
  const u = cm.username ?? {};
  const up = `${p}.claimMappings.username`;
  if (typeof u.expression === 'string' && usesClaim(u.expression, 'email')) {
    const all = [
      u.expression,
      ...(cm.extra ?? []).map((x) => x.valueExpression),
      ...(j?.claimValidationRules ?? []).map((r) => r.expression),
    ];
    if (!all.some((x) => typeof x === 'string' && usesClaim(x, 'email_verified'))) {
      e.invalid(
        `${up}.expression`,
        u.expression,
        'claims.email_verified must be used in claimMappings.username.expression or claimMappings.extra[*].valueExpression or claimValidationRules[*].expression when claimMappings.username.expression uses claims.email',
      );
    }
  }
}

/** The parsed document's top level (parseYaml gives any value; checked below). */
type RawDocument =
  | {
      kind?: unknown;
      apiVersion?: unknown;
      jwt?: unknown;
      anonymous?: { enabled?: unknown; conditions?: unknown } | null;
    }
  | null
  | undefined;

/** Parses and validates the file's text (YAML or JSON); throws the field errors. */
export function parseAuthenticationConfig(text: string, group: string, ctx: ValidateContext): AuthenticationConfig {
  let doc: RawDocument;
  try {
    doc = parseYaml(text);
  } catch (err) {
    throw new Error(`cannot parse: ${(err as Error).message}`);
  }
  if (!doc || typeof doc !== 'object') throw new Error('cannot parse: the file is empty');
  const versions = [`${group}/v1beta1`, `${group}/v1alpha1`];
  if (doc.kind !== 'AuthenticationConfiguration' || !versions.includes(doc.apiVersion as string)) {
    throw new Error(
      `no kind ${q(doc.kind ?? '')} is registered for version ${q(doc.apiVersion ?? '')}: expected kind AuthenticationConfiguration, apiVersion ${versions.join(' or ')}`,
    );
  }
  const e = new Errors();
  const jwt = doc.jwt ?? [];
  if (!Array.isArray(jwt)) throw new Error('jwt: Invalid value: must be a list');
  if (jwt.length > MAX_JWT_AUTHENTICATORS) e.tooMany('jwt', jwt.length, MAX_JWT_AUTHENTICATORS);
  const issuers = new Set<string>(),
    discovery = new Set<string>();
  jwt.forEach((j: RawJwt | undefined, i: number) => validateJwt(e, `jwt[${i}]`, j, ctx, issuers, discovery));
  let anonymous: AnonymousSpec | undefined;
  if (doc.anonymous !== undefined && doc.anonymous !== null) {
    const a = doc.anonymous;
    const conditions: { path: string }[] = Array.isArray(a.conditions) ? a.conditions : [];
    if (!a.enabled && conditions.length)
      e.invalid('anonymous.conditions', conditions, 'enabled should be set to true when conditions are defined');
    const paths = new Set<string>();
    conditions.forEach((c, i) => {
      if (typeof c?.path !== 'string' || c.path === '') return e.required(`anonymous.conditions[${i}].path`);
      if (paths.has(c.path)) e.duplicate(`anonymous.conditions[${i}].path`, c.path);
      paths.add(c.path);
    });
    anonymous = { enabled: a.enabled === true, conditions };
  }
  e.throwIfAny();
  return { jwt: jwt as JwtAuthenticatorSpec[], anonymous };
}
