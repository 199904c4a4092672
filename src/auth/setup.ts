/**
 * Builds the authenticators from the flags once at start (files read, keys parsed; any problem
 * is a startup error naming the flag, file or line). Order of the request authenticators, as
 * upstream: client certificate, then bearer tokens (static file, service accounts).
 */
import { createPublicKey } from 'node:crypto';
import type { AuthenticationOptions } from './options.js';
import { firstUser, type Authenticator, type TokenAuthenticator } from './types.js';
import { clientCertAuthenticator } from './x509.js';
import { bearerAuthenticator, unionTokenAuthenticator } from './bearer.js';
import { loadTokenFile, tokenFileAuthenticator } from './token-file.js';
import { ServiceAccountTokens } from './service-account.js';
import { BootstrapTokens } from './bootstrap-tokens.js';
import { loadClientConfig } from './kubeconfig.js';
import { requestHeaderAuthenticator } from './request-header.js';
import { WebhookTokenAuthenticator } from './webhook-token.js';
import { jwksDocument, loadSigningKey, loadVerifyKeys, openidConfiguration, type VerifyKey } from './sa-keys.js';

export interface AuthenticationSetup {
  /** whole-request authenticator of the secure listener */
  authenticator: Authenticator;
  /** the bearer token authenticators (TokenReview uses them) */
  tokens: TokenAuthenticator;
  apiAudiences: readonly string[];
  anonymous: boolean;
  serviceAccounts?: ServiceAccountTokens;
  /** `--enable-bootstrap-token-auth`: fed with the secrets by the server (load, observe) */
  bootstrapTokens?: BootstrapTokens;
  webhook?: WebhookTokenAuthenticator;
  /** pre-encoded `/.well-known/openid-configuration` and `/openid/v1/jwks`, when the issuer is an https URL */
  discovery?: { configuration: string; jwks: string };
}

export interface SetupDeps {
  domain: string;
  /** the served authentication group (authentication.<domain>), the webhook's TokenReview group */
  authenticationGroup: string;
  /** where bootstrap token secrets live, and their type (`bootstrap.<product>.io/token`) */
  systemNamespace: string;
  product: string;
  lookupServiceAccount: (namespace: string, name: string) => Promise<{ uid: string } | undefined>;
  now?: () => number;
}

export async function buildAuthentication(o: AuthenticationOptions, deps: SetupDeps): Promise<AuthenticationSetup> {
  const apiAudiences: readonly string[] = o.apiAudiences.length ? o.apiAudiences : o.serviceAccountIssuers;
  const tokenAuthenticators: TokenAuthenticator[] = [];
  if (o.tokenAuthFile) tokenAuthenticators.push(tokenFileAuthenticator(loadTokenFile(o.tokenAuthFile), apiAudiences));
  let serviceAccounts: ServiceAccountTokens | undefined;
  let discovery: AuthenticationSetup['discovery'];
  if (o.serviceAccountIssuers.length) {
    const signingKey = o.serviceAccountSigningKeyFile ? loadSigningKey(o.serviceAccountSigningKeyFile) : undefined;
    const verifyKeys: VerifyKey[] = loadVerifyKeys(o.serviceAccountKeyFiles);
    // the signing key always verifies its own tokens
    if (signingKey && !verifyKeys.some((k) => k.kid === signingKey.kid)) {
      verifyKeys.push({ kid: signingKey.kid, alg: signingKey.alg, key: createPublicKey(signingKey.key) });
    }
    serviceAccounts = new ServiceAccountTokens({
      issuers: o.serviceAccountIssuers, signingKey, verifyKeys, domain: deps.domain, apiAudiences,
      lookup: o.serviceAccountLookup ? deps.lookupServiceAccount : undefined, now: deps.now,
    });
    tokenAuthenticators.push(serviceAccounts.authenticator());
    discovery = await discoveryDocuments(o, verifyKeys);
  }
  let bootstrapTokens: BootstrapTokens | undefined;
  if (o.enableBootstrapTokenAuth) {
    bootstrapTokens = new BootstrapTokens(deps.systemNamespace, `bootstrap.${deps.product}.io/token`, deps.now);
    tokenAuthenticators.push(bootstrapTokens.authenticator(apiAudiences));
  }
  let webhook: WebhookTokenAuthenticator | undefined;
  if (o.authenticationTokenWebhookConfigFile) {
    const flag = '--authentication-token-webhook-config-file';
    let client;
    try { client = loadClientConfig(o.authenticationTokenWebhookConfigFile); } catch (e) { throw new Error(`${flag} ${o.authenticationTokenWebhookConfigFile}: ${(e as Error).message}`); }
    webhook = new WebhookTokenAuthenticator({
      client, version: o.authenticationTokenWebhookVersion, group: deps.authenticationGroup, cacheTtlMs: o.authenticationTokenWebhookCacheTtlMs,
      implicitAudiences: apiAudiences, now: deps.now,
    });
    // remote last: local authenticators first, as upstream
    tokenAuthenticators.push(webhook);
  }
  const tokens = unionTokenAuthenticator(tokenAuthenticators);
  const requestAuthenticators: Authenticator[] = [];
  // upstream order: authenticating proxy, client certificates, bearer tokens
  if (o.requestheaderClientCAFile) requestAuthenticators.push(requestHeaderAuthenticator());
  if (o.clientCAFile) requestAuthenticators.push(clientCertAuthenticator());
  if (tokenAuthenticators.length) requestAuthenticators.push(bearerAuthenticator(tokens, apiAudiences));
  const authenticator: Authenticator = requestAuthenticators.length === 1
    ? requestAuthenticators[0]!
    : { authenticate: (c) => firstUser(requestAuthenticators, (a) => a.authenticate(c)) };
  return { authenticator, tokens, apiAudiences, anonymous: o.anonymousAuth, serviceAccounts, bootstrapTokens, webhook, discovery };
}

async function discoveryDocuments(o: AuthenticationOptions, keys: VerifyKey[]): Promise<AuthenticationSetup['discovery']> {
  const issuer = o.serviceAccountIssuers[0]!;
  let url: URL;
  try { url = new URL(issuer); } catch { return undefined; }
  if (url.protocol !== 'https:') return undefined;
  const jwksUri = o.serviceAccountJwksUri || new URL('/openid/v1/jwks', url).toString();
  return {
    configuration: JSON.stringify(openidConfiguration(issuer, jwksUri, keys)),
    jwks: JSON.stringify(await jwksDocument(keys)),
  };
}
