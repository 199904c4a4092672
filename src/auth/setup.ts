/**
 * Builds the authenticators from the flags once at start (files read, keys parsed; any problem
 * is a startup error naming the flag, file or line). Order of the request authenticators, as
 * upstream: authenticating proxy, client certificate, then bearer tokens (static file, service
 * accounts, bootstrap tokens, JWT issuers, webhook).
 */
import { readFileSync } from 'node:fs';
import { createPublicKey } from 'node:crypto';
import type { AuthenticationOptions } from './options.js';
import { firstUser, type Authenticator, type TokenAuthenticator } from '../api/user.js';
import { clientCertAuthenticator } from './x509.js';
import { bearerAuthenticator, unionTokenAuthenticator } from './bearer.js';
import { loadTokenFile, tokenFileAuthenticator } from './token-file.js';
import { ServiceAccountTokens, type ObjectLookup } from './service-account.js';
import { BootstrapTokens } from './bootstrap-tokens.js';
import { loadClientConfig } from './kubeconfig.js';
import { requestHeaderAuthenticator } from './request-header.js';
import { WebhookTokenAuthenticator } from './webhook-token.js';
import { audienceAgnostic } from './audiences.js';
import { JwtSet, AuthenticationConfigFile, buildJwt } from './jwt/jwt-set.js';
import type { AuthenticationConfig } from './jwt/config.js';
import { oidcFlagsToJwt } from './jwt/oidc-flags.js';
import { jwksDocument, loadSigningKey, loadVerifyKeys, openidConfiguration, type VerifyKey } from './sa-keys.js';

export interface AuthenticationSetup {
  /** whole-request authenticator of the secure listener */
  authenticator: Authenticator;
  /** the bearer token authenticators (TokenReview uses them) */
  tokens: TokenAuthenticator;
  apiAudiences: readonly string[];
  anonymous: boolean;
  /** `anonymous.conditions` of the authentication configuration: the only paths anonymous requests may use */
  anonymousPaths?: ReadonlySet<string>;
  /** the JWT authenticators in force (OIDC flags or the configuration file) */
  jwt: JwtSet;
  /** `--authentication-config`, watched for changes once the server runs */
  configFile?: AuthenticationConfigFile;
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
  /** the served group of the configuration files (apiserver.config.<domain>) */
  configGroup: string;
  /** the generated cluster CA: it signs the admin certificate, so it is trusted for client certificates too */
  clusterCAFile?: string;
  log: (m: string) => void;
  /** reads a stored service account, pod or secret (undefined when absent) */
  lookupObject: ObjectLookup;
  now?: () => number;
}

export async function buildAuthentication(o: AuthenticationOptions, deps: SetupDeps): Promise<AuthenticationSetup> {
  const apiAudiences: readonly string[] = o.apiAudiences.length ? o.apiAudiences : o.serviceAccountIssuers;
  const tokenAuthenticators: TokenAuthenticator[] = [];
  if (o.tokenAuthFile) tokenAuthenticators.push(tokenFileAuthenticator(loadTokenFile(o.tokenAuthFile), apiAudiences));
  const { serviceAccounts, discovery } = await serviceAccountSetup(o, deps, apiAudiences);
  if (serviceAccounts) tokenAuthenticators.push(serviceAccounts.authenticator());
  let bootstrapTokens: BootstrapTokens | undefined;
  if (o.enableBootstrapTokenAuth) {
    bootstrapTokens = new BootstrapTokens(deps.systemNamespace, `bootstrap.${deps.product}.io/token`, deps.now);
    tokenAuthenticators.push(bootstrapTokens.authenticator(apiAudiences));
  }
  // JWT issuers: the --oidc-* flags or the authentication configuration file
  const { jwt, configFile, fileConfig } = jwtSetup(o, deps);
  // JWT authenticators check their own audiences (client IDs): audience agnostic for the API
  if (configFile || jwt.size) tokenAuthenticators.push(audienceAgnostic(apiAudiences, jwt));
  const webhook = webhookSetup(o, deps, apiAudiences);
  // remote last: local authenticators first, as upstream
  if (webhook) tokenAuthenticators.push(webhook);
  const tokens = unionTokenAuthenticator(tokenAuthenticators);
  const requestAuthenticators: Authenticator[] = [];
  // upstream order: authenticating proxy, client certificates, bearer tokens
  if (o.requestheaderClientCAFile) requestAuthenticators.push(requestHeaderAuthenticator());
  if (o.clientCAFile || deps.clusterCAFile) requestAuthenticators.push(clientCertAuthenticator());
  if (tokenAuthenticators.length) requestAuthenticators.push(bearerAuthenticator(tokens, apiAudiences));
  const authenticator: Authenticator =
    requestAuthenticators.length === 1
      ? requestAuthenticators[0]!
      : { authenticate: (c) => firstUser(requestAuthenticators, (a) => a.authenticate(c)) };
  const { anonymous, anonymousPaths } = anonymousSetup(o, fileConfig, deps);
  return {
    authenticator,
    tokens,
    apiAudiences,
    anonymous,
    anonymousPaths,
    jwt,
    configFile,
    serviceAccounts,
    bootstrapTokens,
    webhook,
    discovery,
  };
}

/** Service-account tokens (--service-account-*): the issuer's keys and its discovery documents. */
async function serviceAccountSetup(
  o: AuthenticationOptions,
  deps: SetupDeps,
  apiAudiences: readonly string[],
): Promise<Pick<AuthenticationSetup, 'serviceAccounts' | 'discovery'>> {
  if (!o.serviceAccountIssuers.length) return { serviceAccounts: undefined, discovery: undefined };
  const signingKey = o.serviceAccountSigningKeyFile ? loadSigningKey(o.serviceAccountSigningKeyFile) : undefined;
  const verifyKeys: VerifyKey[] = loadVerifyKeys(o.serviceAccountKeyFiles);
  // the signing key always verifies its own tokens
  if (signingKey && !verifyKeys.some((k) => k.kid === signingKey.kid)) {
    verifyKeys.push({ kid: signingKey.kid, alg: signingKey.alg, key: createPublicKey(signingKey.key) });
  }
  const serviceAccounts = new ServiceAccountTokens({
    issuers: o.serviceAccountIssuers,
    signingKey,
    verifyKeys,
    domain: `${deps.product}.io`,
    apiAudiences,
    lookup: o.serviceAccountLookup ? deps.lookupObject : undefined,
    now: deps.now,
  });
  return { serviceAccounts, discovery: await discoveryDocuments(o, verifyKeys) };
}

/** The JWT issuers of the authentication configuration file, or of the --oidc-* flags. */
function jwtSetup(
  o: AuthenticationOptions,
  deps: SetupDeps,
): { jwt: JwtSet; configFile: AuthenticationConfigFile | undefined; fileConfig: AuthenticationConfig | undefined } {
  const jwt = new JwtSet();
  let configFile: AuthenticationConfigFile | undefined;
  let fileConfig: AuthenticationConfig | undefined;
  if (o.authenticationConfig) {
    configFile = new AuthenticationConfigFile(o.authenticationConfig, jwt, {
      group: deps.configGroup,
      log: deps.log,
      validate: { disallowedIssuers: o.serviceAccountIssuers, reservedDomains: [deps.domain, `${deps.product}.io`] },
    });
    fileConfig = configFile.load();
    if (fileConfig.anonymous && o.anonymousAuthSet) {
      throw new Error(
        '--anonymous-auth flag cannot be set when anonymous field is configured in authentication configuration file',
      );
    }
  } else if (o.oidcIssuerURL) {
    let ca: string | undefined;
    if (o.oidcCAFile) {
      try {
        ca = readFileSync(o.oidcCAFile, 'utf8');
      } catch (e) {
        throw new Error(`--oidc-ca-file: cannot read ${o.oidcCAFile}: ${(e as Error).message}`);
      }
    }
    jwt.swap(
      buildJwt(
        [
          oidcFlagsToJwt(
            {
              issuerURL: o.oidcIssuerURL,
              clientID: o.oidcClientID,
              usernameClaim: o.oidcUsernameClaim,
              usernamePrefix: o.oidcUsernamePrefix,
              groupsClaim: o.oidcGroupsClaim,
              groupsPrefix: o.oidcGroupsPrefix,
              requiredClaims: o.oidcRequiredClaims,
              caFile: o.oidcCAFile,
              signingAlgs: o.oidcSigningAlgs,
            },
            ca,
          ),
        ],
        o.oidcSigningAlgs,
        deps.log,
      ),
    );
  }
  return { jwt, configFile, fileConfig };
}

/** The token webhook (--authentication-token-webhook-config-file). */
function webhookSetup(
  o: AuthenticationOptions,
  deps: SetupDeps,
  apiAudiences: readonly string[],
): WebhookTokenAuthenticator | undefined {
  if (!o.authenticationTokenWebhookConfigFile) return undefined;
  const flag = '--authentication-token-webhook-config-file';
  let client: ReturnType<typeof loadClientConfig>;
  try {
    client = loadClientConfig(o.authenticationTokenWebhookConfigFile);
  } catch (e) {
    throw new Error(`${flag} ${o.authenticationTokenWebhookConfigFile}: ${(e as Error).message}`);
  }
  return new WebhookTokenAuthenticator({
    client,
    version: o.authenticationTokenWebhookVersion,
    group: deps.authenticationGroup,
    cacheTtlMs: o.authenticationTokenWebhookCacheTtlMs,
    implicitAudiences: apiAudiences,
    now: deps.now,
  });
}

/** Anonymous requests: the flag, or the configuration file's anonymous section (with its paths). */
function anonymousSetup(
  o: AuthenticationOptions,
  fileConfig: AuthenticationConfig | undefined,
  deps: SetupDeps,
): { anonymous: boolean; anonymousPaths: Set<string> | undefined } {
  let anonymous = o.anonymousAuth;
  let anonymousPaths: Set<string> | undefined;
  if (fileConfig?.anonymous) {
    anonymous = fileConfig.anonymous.enabled;
    if (fileConfig.anonymous.conditions.length)
      anonymousPaths = new Set(fileConfig.anonymous.conditions.map((c) => c.path));
  }
  // as upstream: the AlwaysAllow authorizer and anonymous requests do not mix
  if (anonymous && (o.authorizationModes as string[]).includes('AlwaysAllow')) {
    deps.log(
      'warning: anonymous access is not allowed with the AlwaysAllow authorizer; disabling it. Use a different authorizer',
    );
    anonymous = false;
  }
  return { anonymous, anonymousPaths };
}

async function discoveryDocuments(
  o: AuthenticationOptions,
  keys: VerifyKey[],
): Promise<AuthenticationSetup['discovery']> {
  const issuer = o.serviceAccountIssuers[0]!;
  let url: URL;
  try {
    url = new URL(issuer);
  } catch {
    return undefined;
  }
  if (url.protocol !== 'https:') return undefined;
  const jwksUri = o.serviceAccountJwksUri || new URL('/openid/v1/jwks', url).toString();
  return {
    configuration: JSON.stringify(openidConfiguration(issuer, jwksUri, keys)),
    jwks: JSON.stringify(await jwksDocument(keys)),
  };
}
