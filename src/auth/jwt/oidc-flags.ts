/**
 * The `--oidc-*` flags (upstream's legacy OIDC flags) converted into the JWT authenticator shape
 * that AuthenticationConfiguration (config.ts) declares.
 */
import type { JwtAuthenticatorSpec } from './config.js';

/** The `--oidc-*` flags as one JWT authenticator (upstream's legacy flag conversion). */
export interface OidcFlags {
  issuerURL: string;
  clientID: string;
  usernameClaim: string;
  usernamePrefix: string;
  groupsClaim: string;
  groupsPrefix: string;
  requiredClaims: Record<string, string>;
  caFile: string;
  signingAlgs: string[];
}

export function oidcFlagsToJwt(f: OidcFlags, caPem: string | undefined): JwtAuthenticatorSpec {
  // claims other than email are prefixed with the issuer URL unless a prefix is set; "-" disables
  let prefix = f.usernamePrefix;
  if (prefix === '' && f.usernameClaim !== 'email') prefix = `${f.issuerURL}#`;
  if (prefix === '-') prefix = '';
  const spec: JwtAuthenticatorSpec = {
    issuer: { url: f.issuerURL, audiences: [f.clientID], certificateAuthority: caPem },
    claimMappings: { username: { claim: f.usernameClaim, prefix } },
    claimValidationRules: Object.entries(f.requiredClaims).map(([claim, requiredValue]) => ({ claim, requiredValue })),
  };
  if (f.groupsClaim) spec.claimMappings.groups = { claim: f.groupsClaim, prefix: f.groupsPrefix };
  return spec;
}
