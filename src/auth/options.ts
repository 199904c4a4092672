/**
 * Authentication and TLS flags, merged into the server's one flag table (src/server/options.ts).
 * Each is validated here once, with the exact `--flag must be ...` messages.
 */
import { parseDuration } from '../api/duration.js';
import { WEBHOOK_VERSIONS } from './webhook-token.js';
import { ALL_SIGNING_ALGS } from './jwt/config.js';
import { AUTHORIZATION_FLAGS, DEFAULT_AUTHORIZATION_OPTIONS, type AuthorizationOptions } from './authz/options.js';

/** Authorization flags ride along (src/auth/authz/options.ts). */
export interface AuthenticationOptions extends AuthorizationOptions {
  /** HTTPS port, default 6443; -1 = off (`--secure-port off`), 0 = any free port */
  securePort: number;
  tlsCertFile: string;
  tlsPrivateKeyFile: string;
  /** where generated certificates live; '' = `<data-dir>/pki` */
  certDir: string;
  clientCAFile: string;
  tokenAuthFile: string;
  anonymousAuth: boolean;
  serviceAccountKeyFiles: string[];
  serviceAccountSigningKeyFile: string;
  serviceAccountIssuers: string[];
  serviceAccountJwksUri: string;
  serviceAccountLookup: boolean;
  apiAudiences: string[];
  enableBootstrapTokenAuth: boolean;
  authenticationTokenWebhookConfigFile: string;
  authenticationTokenWebhookCacheTtlMs: number;
  /** v1beta1 (upstream's default) or v1 */
  authenticationTokenWebhookVersion: string;
  requestheaderUsernameHeaders: string[];
  requestheaderGroupHeaders: string[];
  requestheaderExtraHeadersPrefix: string[];
  requestheaderClientCAFile: string;
  requestheaderAllowedNames: string[];
  /** `--anonymous-auth` given explicitly (conflicts with `anonymous` in the authentication configuration) */
  anonymousAuthSet: boolean;
  oidcIssuerURL: string;
  oidcClientID: string;
  oidcUsernameClaim: string;
  oidcUsernamePrefix: string;
  oidcGroupsClaim: string;
  oidcGroupsPrefix: string;
  oidcRequiredClaims: Record<string, string>;
  oidcCAFile: string;
  oidcSigningAlgs: string[];
  /** which `--oidc-*` flags were given (they conflict with `--authentication-config`) */
  oidcFlagsSet: string[];
  authenticationConfig: string;
  /**
   * `--read-header-timeout` (not an upstream flag; upstream's secure server fixes its
   * ReadHeaderTimeout at 32 s, which also bounds the TLS handshake): how long the TLS front
   * waits for a client's handshake and for the rest of a request head it has begun
   */
  readHeaderTimeoutMs: number;
}

export const DEFAULT_AUTHENTICATION_OPTIONS: AuthenticationOptions = {
  securePort: 6443,
  tlsCertFile: '',
  tlsPrivateKeyFile: '',
  certDir: '',
  clientCAFile: '',
  tokenAuthFile: '',
  anonymousAuth: true,
  serviceAccountKeyFiles: [],
  serviceAccountSigningKeyFile: '',
  serviceAccountIssuers: [],
  serviceAccountJwksUri: '',
  serviceAccountLookup: true,
  apiAudiences: [],
  enableBootstrapTokenAuth: false,
  authenticationTokenWebhookConfigFile: '',
  authenticationTokenWebhookCacheTtlMs: 2 * 60_000,
  authenticationTokenWebhookVersion: 'v1beta1',
  readHeaderTimeoutMs: 32_000,
  requestheaderUsernameHeaders: [],
  requestheaderGroupHeaders: [],
  requestheaderExtraHeadersPrefix: [],
  requestheaderClientCAFile: '',
  requestheaderAllowedNames: [],
  anonymousAuthSet: false,
  oidcIssuerURL: '',
  oidcClientID: '',
  oidcUsernameClaim: 'sub',
  oidcUsernamePrefix: '',
  oidcGroupsClaim: '',
  oidcGroupsPrefix: '',
  oidcRequiredClaims: {},
  oidcCAFile: '',
  oidcSigningAlgs: ['RS256'],
  oidcFlagsSet: [],
  authenticationConfig: '',
  ...DEFAULT_AUTHORIZATION_OPTIONS,
};

type Setter = (o: AuthenticationOptions, v: string) => void;

function bool(flag: string, set: (o: AuthenticationOptions, b: boolean) => void): Setter {
  return (o, v) => {
    if (v !== 'true' && v !== 'false') throw new Error(`--${flag} must be true or false, got "${v}"`);
    set(o, v === 'true');
  };
}

export const AUTHENTICATION_FLAGS: Record<string, Setter> = {
  ...AUTHORIZATION_FLAGS,
  'secure-port': (o, v) => {
    if (v === 'off') {
      o.securePort = -1;
      return;
    }
    const n = Number(v);
    if (!/^[0-9]+$/.test(v) || n > 65535)
      throw new Error(`--secure-port must be an integer between 0 and 65535 or off, got "${v}"`);
    o.securePort = n;
  },
  'tls-cert-file': (o, v) => {
    o.tlsCertFile = v;
  },
  'tls-private-key-file': (o, v) => {
    o.tlsPrivateKeyFile = v;
  },
  'cert-dir': (o, v) => {
    o.certDir = v;
  },
  'client-ca-file': (o, v) => {
    o.clientCAFile = v;
  },
  'token-auth-file': (o, v) => {
    o.tokenAuthFile = v;
  },
  'anonymous-auth': bool('anonymous-auth', (o, b) => {
    o.anonymousAuth = b;
    o.anonymousAuthSet = true;
  }),
  // repeatable flags build new arrays: DEFAULT_OPTIONS is shallow-copied per parse
  'service-account-key-file': (o, v) => {
    o.serviceAccountKeyFiles = [...o.serviceAccountKeyFiles, v];
  },
  'service-account-signing-key-file': (o, v) => {
    o.serviceAccountSigningKeyFile = v;
  },
  'service-account-issuer': (o, v) => {
    if (v === '') throw new Error('--service-account-issuer must not be empty');
    o.serviceAccountIssuers = [...o.serviceAccountIssuers, v];
  },
  'service-account-jwks-uri': (o, v) => {
    if (!/^https:\/\/[^\s]+$/.test(v))
      throw new Error(`--service-account-jwks-uri must be an https:// URL, got "${v}"`);
    o.serviceAccountJwksUri = v;
  },
  'service-account-lookup': bool('service-account-lookup', (o, b) => {
    o.serviceAccountLookup = b;
  }),
  'api-audiences': (o, v) => {
    o.apiAudiences = v.split(',').filter(Boolean);
  },
  'enable-bootstrap-token-auth': bool('enable-bootstrap-token-auth', (o, b) => {
    o.enableBootstrapTokenAuth = b;
  }),
  'authentication-token-webhook-config-file': (o, v) => {
    o.authenticationTokenWebhookConfigFile = v;
  },
  'read-header-timeout': (o, v) => {
    const ms = parseDuration(v);
    if (ms === undefined || ms <= 0)
      throw new Error(`--read-header-timeout must be a positive duration such as 32s, got "${v}"`);
    o.readHeaderTimeoutMs = ms;
  },
  'authentication-token-webhook-cache-ttl': (o, v) => {
    const ms = parseDuration(v);
    if (ms === undefined)
      throw new Error(`--authentication-token-webhook-cache-ttl must be a duration such as 30s or 2m, got "${v}"`);
    o.authenticationTokenWebhookCacheTtlMs = ms;
  },
  'authentication-token-webhook-version': (o, v) => {
    // the group-qualified spelling (authentication.<domain>/v1beta1) names the same version
    v = v.replace(/^authentication\.[^/]+\//, '');
    if (!WEBHOOK_VERSIONS.includes(v))
      throw new Error(
        `--authentication-token-webhook-version: unsupported authentication webhook version "${v}", supported versions are "v1", "v1beta1"`,
      );
    o.authenticationTokenWebhookVersion = v;
  },
  // string slices as pflag: comma-separated, and repeating the flag appends
  'requestheader-username-headers': (o, v) => {
    o.requestheaderUsernameHeaders = [...o.requestheaderUsernameHeaders, ...list(v)];
  },
  'requestheader-group-headers': (o, v) => {
    o.requestheaderGroupHeaders = [...o.requestheaderGroupHeaders, ...list(v)];
  },
  'requestheader-extra-headers-prefix': (o, v) => {
    o.requestheaderExtraHeadersPrefix = [...o.requestheaderExtraHeadersPrefix, ...list(v)];
  },
  'requestheader-client-ca-file': (o, v) => {
    o.requestheaderClientCAFile = v;
  },
  'requestheader-allowed-names': (o, v) => {
    o.requestheaderAllowedNames = [...o.requestheaderAllowedNames, ...list(v)];
  },
  'oidc-issuer-url': oidc('oidc-issuer-url', (o, v) => {
    o.oidcIssuerURL = v;
  }),
  'oidc-client-id': oidc('oidc-client-id', (o, v) => {
    o.oidcClientID = v;
  }),
  'oidc-username-claim': oidc('oidc-username-claim', (o, v) => {
    o.oidcUsernameClaim = v;
  }),
  'oidc-username-prefix': oidc('oidc-username-prefix', (o, v) => {
    o.oidcUsernamePrefix = v;
  }),
  'oidc-groups-claim': oidc('oidc-groups-claim', (o, v) => {
    o.oidcGroupsClaim = v;
  }),
  'oidc-groups-prefix': oidc('oidc-groups-prefix', (o, v) => {
    o.oidcGroupsPrefix = v;
  }),
  'oidc-ca-file': oidc('oidc-ca-file', (o, v) => {
    o.oidcCAFile = v;
  }),
  // a map as pflag's mapStringString: key=value pairs, comma-separated or repeated
  'oidc-required-claim': oidc('oidc-required-claim', (o, v) => {
    const out = { ...o.oidcRequiredClaims };
    for (const pair of list(v)) {
      const eq = pair.indexOf('=');
      if (eq <= 0) throw new Error(`--oidc-required-claim must be formatted as key=value, got "${pair}"`);
      out[pair.slice(0, eq)] = pair.slice(eq + 1);
    }
    o.oidcRequiredClaims = out;
  }),
  'oidc-signing-algs': oidc('oidc-signing-algs', (o, v) => {
    const algs = list(v);
    for (const a of algs) {
      if (!ALL_SIGNING_ALGS.includes(a))
        throw new Error(
          `--oidc-signing-algs: unsupported signing algorithm "${a}" (supported: ${ALL_SIGNING_ALGS.join(', ')})`,
        );
    }
    o.oidcSigningAlgs = algs;
  }),
  'authentication-config': (o, v) => {
    o.authenticationConfig = v;
  },
};

function oidc(flag: string, set: Setter): Setter {
  return (o, v) => {
    set(o, v);
    o.oidcFlagsSet = [...o.oidcFlagsSet, flag];
  };
}

const list = (v: string) =>
  v
    .split(',')
    .map((x) => x.trim())
    .filter(Boolean);

/** Boolean flags: as pflag, `--flag` alone means true (a following true/false is still taken as the value). */
export const BOOLEAN_FLAGS: ReadonlySet<string> = new Set([
  'anonymous-auth',
  'service-account-lookup',
  'enable-bootstrap-token-auth',
]);

/** Rules between authentication flags, checked once all flags are parsed. */
export function checkAuthenticationOptions(o: AuthenticationOptions): void {
  if (o.authenticationConfig && o.oidcFlagsSet.length) {
    throw new Error(
      `authentication-config file and oidc-* flags are mutually exclusive (given: --${o.oidcFlagsSet.join(', --')})`,
    );
  }
  if (!o.oidcIssuerURL !== !o.oidcClientID && !o.authenticationConfig)
    throw new Error('oidc-issuer-url and oidc-client-id must be specified together');
  if (o.oidcIssuerURL && !/^https:\/\//.test(o.oidcIssuerURL))
    throw new Error(`oidc-issuer-url (${o.oidcIssuerURL}) must use https scheme`);
  if (o.oidcIssuerURL && o.serviceAccountIssuers.includes(o.oidcIssuerURL)) {
    throw new Error(`oidc-issuer-url (${o.oidcIssuerURL}) must not overlap with the service account issuers`);
  }
  if (o.requestheaderClientCAFile && o.requestheaderUsernameHeaders.length === 0) {
    throw new Error('--requestheader-username-headers is required with --requestheader-client-ca-file');
  }
  for (const h of [
    ...o.requestheaderUsernameHeaders,
    ...o.requestheaderGroupHeaders,
    ...o.requestheaderExtraHeadersPrefix,
  ]) {
    if (!/^[A-Za-z0-9-]+$/.test(h))
      throw new Error(`--requestheader-*: header name "${h}" must consist of letters, digits and '-'`);
  }
  if (!o.tlsCertFile !== !o.tlsPrivateKeyFile)
    throw new Error('--tls-cert-file and --tls-private-key-file must be given together');
  if (o.serviceAccountSigningKeyFile && o.serviceAccountIssuers.length === 0) {
    throw new Error('--service-account-issuer is required with --service-account-signing-key-file');
  }
  if (o.serviceAccountIssuers.length > 0 && !o.serviceAccountSigningKeyFile && o.serviceAccountKeyFiles.length === 0) {
    throw new Error(
      '--service-account-key-file or --service-account-signing-key-file is required with --service-account-issuer',
    );
  }
}
