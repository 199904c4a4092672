/**
 * Authorization flags, merged into the server's flag table through src/auth/options.ts and
 * validated here once (upstream BuiltInAuthorizationOptions.Validate, same messages).
 */
import { MODES, type Mode } from './authorizer.js';

export interface AuthorizationOptions {
  /** `--authorization-mode`, in order; applies to the secure port (the plain port never authorizes) */
  authorizationModes: Mode[];
  /** `--authorization-policy-file`: the ABAC policy (one JSON Policy a line) */
  authorizationPolicyFile: string;
  /** `--authorization-webhook-config-file`: kubeconfig-format file naming the remote authorizer */
  authorizationWebhookConfigFile: string;
  /** `--authorization-webhook-version`: SubjectAccessReview version sent to the webhook */
  authorizationWebhookVersion: 'v1' | 'v1beta1';
  authorizationWebhookCacheAuthorizedTtlMs: number;
  authorizationWebhookCacheUnauthorizedTtlMs: number;
  /** `--authorization-config`: an AuthorizationConfiguration file (excludes every flag above) */
  authorizationConfigFile: string;
  /** the legacy flags given explicitly (they cannot be combined with --authorization-config) */
  authorizationLegacyFlags: string[];
}

export const DEFAULT_AUTHORIZATION_OPTIONS: AuthorizationOptions = {
  authorizationModes: ['Node', 'RBAC'],
  authorizationPolicyFile: '',
  authorizationWebhookConfigFile: '',
  authorizationWebhookVersion: 'v1beta1',
  authorizationWebhookCacheAuthorizedTtlMs: 5 * 60_000,
  authorizationWebhookCacheUnauthorizedTtlMs: 30_000,
  authorizationConfigFile: '',
  authorizationLegacyFlags: [],
};

export function parseAuthorizationModes(v: string): Mode[] {
  const modes = v.split(',').map((m) => m.trim());
  const seen = new Set<string>();
  for (const m of modes) {
    if (!(MODES as readonly string[]).includes(m))
      throw new Error(`--authorization-mode must be a comma-separated list of ${MODES.join(', ')}, got "${v}"`);
    if (seen.has(m)) throw new Error(`--authorization-mode has mode specified more than once: ${m}`);
    seen.add(m);
  }
  return modes as Mode[];
}

const UNITS: Record<string, number> = { ns: 1e-6, us: 1e-3, 'µs': 1e-3, ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/** Go's time.ParseDuration ("5m0s", "30s", "1.5h", "0"), in milliseconds; undefined when malformed. */
export function parseGoDuration(s: string): number | undefined {
  if (s === '0') return 0;
  const sign = s.startsWith('-') ? -1 : 1;
  const body = s.replace(/^[-+]/, '');
  const re = /([0-9]*\.?[0-9]+|[0-9]+\.)(ns|us|µs|ms|s|m|h)/y;
  let total = 0,
    end = 0,
    m: RegExpExecArray | null;
  while ((m = re.exec(body))) {
    total += Number(m[1]) * UNITS[m[2]!]!;
    end = re.lastIndex;
  }
  return end > 0 && end === body.length ? sign * total : undefined;
}

function ttl(flag: string, set: (o: AuthorizationOptions, ms: number) => void) {
  return (o: AuthorizationOptions, v: string) => {
    const ms = parseGoDuration(v);
    if (ms === undefined)
      throw new Error(`invalid argument "${v}" for "--${flag}" flag: time: invalid duration "${v}"`);
    set(o, ms);
  };
}

/** Records the flag as explicitly given, then sets it. */
function legacy(flag: string, set: (o: AuthorizationOptions, v: string) => void) {
  return (o: AuthorizationOptions, v: string) => {
    set(o, v);
    if (!o.authorizationLegacyFlags.includes(flag)) o.authorizationLegacyFlags = [...o.authorizationLegacyFlags, flag];
  };
}

export const AUTHORIZATION_FLAGS: Record<string, (o: AuthorizationOptions, v: string) => void> = {
  'authorization-mode': legacy('authorization-mode', (o, v) => {
    o.authorizationModes = parseAuthorizationModes(v);
  }),
  'authorization-policy-file': legacy('authorization-policy-file', (o, v) => {
    o.authorizationPolicyFile = v;
  }),
  'authorization-webhook-config-file': legacy('authorization-webhook-config-file', (o, v) => {
    o.authorizationWebhookConfigFile = v;
  }),
  'authorization-webhook-version': legacy('authorization-webhook-version', (o, v) => {
    if (v !== 'v1' && v !== 'v1beta1')
      throw new Error(`--authorization-webhook-version must be v1 or v1beta1, got "${v}"`);
    o.authorizationWebhookVersion = v;
  }),
  'authorization-webhook-cache-authorized-ttl': legacy(
    'authorization-webhook-cache-authorized-ttl',
    ttl('authorization-webhook-cache-authorized-ttl', (o, ms) => {
      o.authorizationWebhookCacheAuthorizedTtlMs = ms;
    }),
  ),
  'authorization-webhook-cache-unauthorized-ttl': legacy(
    'authorization-webhook-cache-unauthorized-ttl',
    ttl('authorization-webhook-cache-unauthorized-ttl', (o, ms) => {
      o.authorizationWebhookCacheUnauthorizedTtlMs = ms;
    }),
  ),
  'authorization-config': (o, v) => {
    o.authorizationConfigFile = v;
  },
};

/** Rules between the authorization flags (upstream's messages), once all flags are parsed. */
export function checkAuthorizationOptions(o: AuthorizationOptions): void {
  if (o.authorizationConfigFile) {
    if (o.authorizationLegacyFlags.length) {
      throw new Error(
        '--authorization-config cannot be used in conjunction with --authorization-mode, --authorization-policy-file, --authorization-webhook-config-file, --authorization-webhook-version, --authorization-webhook-cache-authorized-ttl, --authorization-webhook-cache-unauthorized-ttl',
      );
    }
    return;
  }
  const modes = new Set<string>(o.authorizationModes);
  if (modes.has('ABAC') && !o.authorizationPolicyFile)
    throw new Error("authorization-mode ABAC's authorization policy file not passed");
  if (modes.has('Webhook') && !o.authorizationWebhookConfigFile)
    throw new Error("authorization-mode Webhook's authorization config file not passed");
  if (o.authorizationPolicyFile && !modes.has('ABAC'))
    throw new Error('cannot specify --authorization-policy-file without mode ABAC');
  if (o.authorizationWebhookConfigFile && !modes.has('Webhook'))
    throw new Error('cannot specify --authorization-webhook-config-file without mode Webhook');
}
