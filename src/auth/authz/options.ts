/**
 * Authorization flags, merged into the server's flag table through src/auth/options.ts and
 * validated here once.
 */
import { MODES, type Mode } from './authorizer.js';

export interface AuthorizationOptions {
  /** `--authorization-mode`, in order; applies to the secure port (the plain port never authorizes) */
  authorizationModes: Mode[];
}

export const DEFAULT_AUTHORIZATION_OPTIONS: AuthorizationOptions = { authorizationModes: ['RBAC'] };

/** Modes of the issue not built yet: named in the error so the flag's value is not silently ignored. */
const LATER = new Set(['ABAC', 'Node', 'Webhook']);

export function parseAuthorizationModes(v: string): Mode[] {
  const modes = v.split(',').map((m) => m.trim());
  const seen = new Set<string>();
  for (const m of modes) {
    if (LATER.has(m)) throw new Error(`--authorization-mode: ${m} is not supported yet (supported: ${MODES.join(', ')})`);
    if (!(MODES as readonly string[]).includes(m)) throw new Error(`--authorization-mode must be a comma-separated list of ${MODES.join(', ')}, got "${v}"`);
    if (seen.has(m)) throw new Error(`--authorization-mode has mode specified more than once: ${m}`);
    seen.add(m);
  }
  return modes as Mode[];
}

export const AUTHORIZATION_FLAGS: Record<string, (o: AuthorizationOptions, v: string) => void> = {
  'authorization-mode': (o, v) => { o.authorizationModes = parseAuthorizationModes(v); },
};
